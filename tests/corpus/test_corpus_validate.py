from py4.corpus.blocks import fence
from py4.corpus.validate import BoaValidator, exception_line


def _doc(*blocks):
    return "Some prose.\n\n" + "\n".join(fence(tag, body) for tag, body in blocks)


def test_true_claims_pass_and_false_claims_fail(tmp_path):
    with BoaValidator(tmp_path) as v:
        assert v.check_document(_doc(("py4", "print(list(range(1, 3)))\n"), ("output", "[1, 2, 3]\n"))) == []
        wrong = v.check_document(_doc(("py4", "print(list(range(1, 3)))\n"), ("output", "[1, 2]\n")))
        assert wrong and "output differs" in wrong[0]
        raised = _doc(("py3", "let xs = ['a']\nprint(', '.join(xs))\n"),
                      ("raises", "TypeError: join belongs to the iterable in Python-4: write xs.join(sep)"))
        assert v.check_document(raised) == []
        assert v.check_document(_doc(("python", "print(-7 // 2)\n"), ("output", "-4\n"))) == []


def test_python3_presented_as_python4_is_rejected(tmp_path):
    with BoaValidator(tmp_path) as v:
        problems = v.check_document(_doc(("py4", "def f() -> int:\n    return 1\n")))
        assert problems and "presented as Python-4" in problems[0]
        # a warning is enough: py4 blocks must be clean
        assert v.check_document(_doc(("py4", "let list = [1]\n")))


def test_diagnostics_claims_are_compared_verbatim(tmp_path):
    from py4.lang import compile_py4
    source = "def f(x: int) -> int:\n    return x\n"
    lines = "\n".join(d.render("verbatim") for d in compile_py4(source).diagnostics)
    with BoaValidator(tmp_path) as v:
        assert v.check_document(_doc(("py3", source), ("diagnostics", lines))) == []
        assert v.check_document(_doc(("py3", source), ("diagnostics", "line 1, col 0: error P4-02: x")))


def test_results_are_cached_by_content_hash(tmp_path):
    doc = _doc(("py4", "print(41 + 1)\n"), ("output", "42\n"))
    with BoaValidator(tmp_path) as first:
        assert first.check_document(doc) == [] and first.boa_runs == 1
    with BoaValidator(tmp_path) as second:
        assert second.check_document(doc) == [] and second.boa_runs == 0
        # the claim is re-checked against the cached result, not cached as a verdict
        assert second.check_document(doc.replace("42\n", "43\n"))


def test_exception_line_takes_the_traceback_tail():
    assert exception_line("Traceback (most recent call last):\n  File x\n    boom()\n"
                          "KeyError: 'a'\n") == "KeyError: 'a'"
    assert exception_line("") is None
