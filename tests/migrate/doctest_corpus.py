"""Real Python 3 programs for the differential test, made from the standard library's
doctest examples.

Each `doctest.DocTest` (one docstring's examples) becomes one program: the module's
namespace is imported (doctests run in the module's globals), every example runs in
order, an expression example prints its repr as the interactive prompt would, and an
exception is printed by type name so that the next example still runs.
"""

from __future__ import annotations

import ast
import doctest
import importlib
import pkgutil
import textwrap
import warnings
from dataclasses import dataclass

from py4.lang.internals import module_refusal

# Pure-Python standard-library modules with doctests, in a fixed order.
MODULES = (
    "statistics", "fractions", "textwrap", "difflib", "heapq", "collections", "functools",
    "json", "base64", "ipaddress", "shlex", "string", "calendar", "_pydecimal", "inspect",
    "typing", "pprint", "enum", "dataclasses", "fnmatch", "posixpath", "ntpath",
    "urllib.parse", "html", "email.utils", "colorsys", "graphlib", "reprlib", "tokenize",
    "ast", "operator", "bisect", "random", "numbers", "abc", "contextlib", "itertools",
    "math", "copy", "re", "locale", "gettext", "quopri", "binascii", "datetime",
    "zoneinfo", "pathlib", "tomllib", "csv", "argparse", "optparse", "mailbox", "doctest",
    "decimal", "unittest.mock", "logging", "traceback", "weakref", "types", "keyword",
    "token", "uuid", "hashlib", "hmac", "secrets", "string", "codecs", "unicodedata",
    "stringprep", "struct", "array", "plistlib", "xml.dom.minidom", "xml.etree.ElementTree",
    "wsgiref.headers", "http.cookies", "email.header", "email.message", "mimetypes",
    "urllib.request", "sched", "queue", "shutil", "tempfile", "filecmp", "glob", "sqlite3",
    "zipfile", "tarfile", "gzip", "configparser", "netrc", "getopt", "ctypes", "turtle",
    "statistics", "cmath", "_strptime", "platform", "sysconfig", "trace", "pydoc", "timeit",
    # CPython's own language tests written as doctests.
    "test.test_genexps", "test.test_listcomps", "test.test_setcomps", "test.test_descrtut",
    "test.test_generators", "test.test_deftest", "test.test_extcall", "test.test_unpack",
    "test.test_unpack_ex", "test.test_syntax", "test.test_metaclass", "test.test_doctest2",
)
# Pure-Python packages installed with the toolkit whose submodules carry doctests.
PACKAGES = ("mpmath", "networkx", "dateutil", "packaging", "jinja2", "markdown", "idna")
# Modules whose examples need a display or are otherwise not programs.
EXCLUDED_MODULES = {"turtle": "needs a Tk display",
                    **{m: "a Python-4 program cannot use it (docs/python4.md, Dynamic code)"
                       for m in MODULES if module_refusal(m)}}

HEADER = '''import {module} as _doctest_module
globals().update({k: v for k, v in vars(_doctest_module).items()
                  if not k.startswith("__")})


def _show(value):
    if value is not None:
        print(repr(value))


'''


@dataclass(frozen=True)
class Program:
    name: str  # module:DocTest.name
    source: str


def _example_code(example: doctest.Example) -> str | None:
    """Program text for one example; None when it does not parse."""
    source = example.source
    try:
        tree = ast.parse(source)
    except SyntaxError:
        return None
    if len(tree.body) == 1 and isinstance(tree.body[0], ast.Expr):
        expression = source.strip()
        body = f"_show({expression})\n" if "\n" not in expression and "#" not in expression \
            else f"_show(\n{textwrap.indent(expression, '    ')}\n)\n"
    else:
        body = source if source.endswith("\n") else source + "\n"
    return ("try:\n" + textwrap.indent(body, "    ")
            + "except Exception as _error:\n    print('!!', type(_error).__name__)\n")


def module_names(packages: bool = True) -> list[str]:
    """MODULES, then every submodule of PACKAGES (sorted), without exclusions."""
    names = [m for m in MODULES if m not in EXCLUDED_MODULES]
    for package_name in PACKAGES if packages else ():
        try:
            package = importlib.import_module(package_name)
        except Exception:
            continue
        found = [package_name]
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            for info in pkgutil.walk_packages(package.__path__, package_name + ".",
                                              onerror=lambda _: None):
                if ".tests" not in info.name and ".test_" not in info.name:
                    found.append(info.name)
        names.extend(sorted(found))
    return names


def build_programs(packages: bool = True) -> list[Program]:
    """All doctest programs of the modules that parse, in a deterministic order."""
    finder = doctest.DocTestFinder(exclude_empty=True)
    programs, seen = [], set()
    for module_name in module_names(packages):
        if module_name in seen:
            continue
        seen.add(module_name)
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                module = importlib.import_module(module_name)
                tests = finder.find(module)
        except Exception:  # a module that cannot be imported here is simply not used
            continue
        for test in sorted(tests, key=lambda t: t.name):
            if test.filename is None or not test.examples:
                continue
            if any(part[:1] == "_" and part[-2:] != "__" for part in test.name.split(".")[1:]):
                continue  # a module's private names are outside a Python-4 program's reach
            parts = [_example_code(example) for example in test.examples]
            if any(part is None for part in parts):
                continue
            source = HEADER.replace("{module}", module_name) + "".join(parts)
            try:
                ast.parse(source)
            except SyntaxError:
                continue
            programs.append(Program(f"{module_name}:{test.name}", source))
    return programs


# The differential run: every stdlib/CPython-test program, plus a fixed stride of the
# two large packages so that the run stays within minutes.
PACKAGE_STRIDES = {"mpmath": 6, "networkx": 12}


def differential_selection(programs: list[Program],
                           strides: dict[str, int] | None = None) -> list[Program]:
    """Every program, except a fixed stride through the big packages (PACKAGE_STRIDES)."""
    strides = PACKAGE_STRIDES if strides is None else strides

    def package(p: Program) -> str:
        return p.name.split(".")[0].split(":")[0]
    chosen = [p for p in programs if package(p) not in strides]
    for name, stride in strides.items():
        chosen += [p for p in programs if package(p) == name][::stride]
    return chosen


def default_sample(programs: list[Program], size: int = 40) -> list[Program]:
    """A fixed, spread-out sample of standard-library programs for the fast test run."""
    stdlib = [p for p in programs if p.name.split(".")[0].split(":")[0] not in
              ("mpmath", "networkx", "dateutil", "packaging", "jinja2", "markdown", "idna")]
    stride = max(1, len(stdlib) // size)
    return stdlib[::stride][:size]
