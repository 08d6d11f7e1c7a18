"""Hostile input: nothing escapes compile_py4 as an exception, nothing takes over 2 s."""

import time

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from py4.lang import RULES, compile_py4
from py4.lang.compile import MAX_SOURCE_CHARS

TIME_LIMIT_S = 2.0
FUZZ = settings(max_examples=150, deadline=TIME_LIMIT_S * 1000,
                suppress_health_check=[HealthCheck.too_slow])


def compile_checked(source):
    start = time.perf_counter()
    res = compile_py4(source)
    elapsed = time.perf_counter() - start
    assert elapsed < TIME_LIMIT_S, f"took {elapsed:.2f}s"
    for diag in res.diagnostics:
        assert "internal error" not in diag.message, diag.message
        assert diag.rule == "P4-00" or diag.rule in RULES
        assert diag.line >= 1 and diag.col >= 0
    assert res.ok == (res.code is not None)
    return res


@pytest.mark.parametrize("source, fragment", [
    ("(" * 100_000, "nested too deeply"),
    ("[" * 45_000 + "]" * 45_000, "nested too deeply"),
    ("let x = " + "-" * 90_000 + "1", "nested too deeply"),
    ("let x = " + "1 + " * 20_000 + "1", "nested too deeply"),
    ("let x = " + "9" * 90_000, "literal too large"),
    ("let x = " + "9" * 1_000_000, "too large"),
    ("let x = 1\0\n", "NUL byte"),
    (b"let x = '\xff'\n", "not valid UTF-8"),
    (b"# -*- coding: latin-1 -*-\nlet s = '\xe9'\n", "not valid UTF-8"),
    ("let s = '\ud800'\n", "not valid UTF-8"),
    ("let s = '''never closed\n", "unterminated"),
    ("if true:\n\tpass\n        pass\n", "tabs and spaces"),
    ("".join(" " * i + "if true:\n" for i in range(120)) + " " * 120 + "pass\n", "indentation"),
])
def test_hostile_inputs_give_p4_00_diagnostics(source, fragment):
    res = compile_checked(source)
    assert not res.ok
    assert any(d.rule == "P4-00" and fragment in d.message for d in res.diagnostics), \
        [d.message for d in res.diagnostics]


def test_bytes_are_decoded_as_utf8_and_a_bom_is_accepted():
    assert compile_checked("let s = 'é'\n".encode()).ok
    assert compile_checked(b"\xef\xbb\xbflet x = 1\n").ok
    assert compile_checked("let x = 1\r\nlet y = 2\r\n").ok


def test_size_limit_is_exact():
    assert compile_checked("#" * MAX_SOURCE_CHARS).ok
    assert not compile_checked("#" * (MAX_SOURCE_CHARS + 1)).ok


def test_non_text_input_is_a_type_error():
    with pytest.raises(TypeError, match="str or bytes"):
        compile_py4(42)


@FUZZ
@given(st.text(max_size=300))
def test_random_text_never_escapes(text):
    compile_checked(text)


@FUZZ
@given(st.binary(max_size=300))
def test_random_bytes_never_escape(data):
    compile_checked(data)


_PIECES = ["fn ", "let ", "fun ", "use ", "catch", "throw ", "nil", "true", "else if ", "i'",
           "{:}", "{}", "[", "]", "(", ")", ":", "\n", "    ", "-1", "//", "%", ".pop()",
           ".join(", ".trim", "xs", "=", ",", "'", '"""', "#", "\\", "def ", "f'{", "}",
           "lambda ", "for x in ", " if ", "0 < a < 2", "*", ":=", "\t", "é", "\x0c"]
_VALID = [rule.example for rule in RULES.values()]


@FUZZ
@given(st.lists(st.sampled_from(_PIECES), max_size=60))
def test_python4_token_soup_never_escapes(pieces):
    compile_checked("".join(pieces))


@FUZZ
@given(st.sampled_from(_VALID), st.data())
def test_mutated_valid_programs_never_escape(program, data):
    chars = list(program)
    for _ in range(data.draw(st.integers(1, 6))):
        position = data.draw(st.integers(0, len(chars)))
        action = data.draw(st.sampled_from(["delete", "insert", "duplicate"]))
        if action == "delete" and position < len(chars):
            del chars[position]
        elif action == "insert":
            chars.insert(position, data.draw(st.sampled_from(_PIECES)))
        elif position < len(chars):
            chars.insert(position, chars[position] * data.draw(st.integers(1, 200)))
    compile_checked("".join(chars))


@settings(max_examples=60, deadline=TIME_LIMIT_S * 1000,
          suppress_health_check=[HealthCheck.too_slow])
@given(st.sampled_from(["(", "[", "{", "-", "not ", "fun: ", "i'{", "1 + ", "xs[",
                        "a.", "await ", "*", "~", "lambda: ", "[x for x in "]),
       st.integers(1, 60_000))
def test_deep_nesting_never_escapes(opener, depth):
    compile_checked("let y = " + opener * min(depth, 90_000 // len(opener)) + "1\n")


@settings(max_examples=25, deadline=TIME_LIMIT_S * 1000)
@given(st.integers(1, 400))
def test_deeply_nested_blocks_never_escape(depth):
    source = "".join("    " * i + "if true:\n" for i in range(depth)) + "    " * depth + "pass\n"
    compile_checked(source)
