"""The Python-4 language: rules, translator, static analysis and runtime (pure functions).

    from py4.lang import compile_py4
    res = compile_py4(source)            # never raises for str / bytes
    res.diagnostics, res.rules_exercised, res.code, res.python_source

Execute with ``exec(res.code, py4.lang.runtime.new_globals())``.
"""

from py4.lang.compile import CompileResult, compile_py4
from py4.lang.diagnostics import Diagnostic
from py4.lang.rules import CORE_RULES, DEFAULT_HELD_OUT, NO_RULE, RULES, Rule, get_rule

__all__ = [
    "CORE_RULES", "DEFAULT_HELD_OUT", "NO_RULE", "RULES", "CompileResult", "Diagnostic",
    "Rule", "compile_py4", "get_rule",
]
