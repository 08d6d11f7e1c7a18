"""Translator attacks (BOA.md): hostile source gives a diagnostic, never a crash or a hang."""

from __future__ import annotations

import pytest

pytestmark = pytest.mark.security

HOSTILE_SOURCES = {
    "nested_parentheses_1e5": "let x = " + "(" * 100_000 + "1" + ")" * 100_000 + "\n",
    "nested_brackets_1e5": "let x = " + "[" * 100_000 + "]" * 100_000 + "\n",
    "nested_blocks_200": "".join("    " * i + "if true:\n" for i in range(200)) + "    " * 200 + "pass\n",
    "enormous_int_literal": "let x = " + "9" * 2_000_000 + "\n",
    "enormous_string_literal": 'let s = "' + "a" * 2_000_000 + '"\n',
    "nul_byte": 'print("a")\x00\nprint("b")\n',
    "invalid_utf8": b'print("\xff\xfe\xfd")\n',
    "latin1_coding_cookie": '# -*- coding: latin-1 -*-\nprint("\xe9")\n'.encode("latin-1"),
    "utf16_bom": '\ufeffprint("hi")\n'.encode("utf-16"),
    "lone_surrogate": 'print("\udcff")\n',
}


@pytest.mark.parametrize("name", sorted(HOSTILE_SOURCES))
def test_hostile_source_gives_a_diagnostic(sandbox, name):
    # (No wall-clock bound: test_security_frontend_cost.py shows the costly stages are
    # never reached for the floods that would make them slow.)
    result = sandbox.executor.run(HOSTILE_SOURCES[name])
    assert result.status in ("compile_error", "ok", "runtime_error"), result
    if result.status == "compile_error":
        assert result.diagnostics and all(d["severity"] in ("error", "warning") for d in result.diagnostics)
        assert any(d["severity"] == "error" for d in result.diagnostics)
    sandbox.assert_serves_next()


@pytest.mark.parametrize("name", ["nested_parentheses_1e5", "nul_byte", "invalid_utf8", "utf16_bom",
                                  "enormous_int_literal"])
def test_malformed_source_is_a_compile_error(sandbox, name):
    result = sandbox.executor.run(HOSTILE_SOURCES[name])
    assert result.status == "compile_error", result
    assert result.exit_code is None and result.stdout == ""
    sandbox.assert_serves_next()
