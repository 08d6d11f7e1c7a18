import pytest

from py4.corpus.config import PoolSpec
from py4.corpus.pool import Shown, _habit, build_pool
from py4.corpus.validate import BoaValidator
from py4.lang import RULES, compile_py4


@pytest.fixture(scope="module")
def pool(boa_cache):
    with BoaValidator(boa_cache) as validator:
        return build_pool(PoolSpec(variants_per_template=1), sorted(RULES), validator)


def test_every_rule_has_validated_lessons(pool):
    for rule in RULES:
        assert pool.lessons(rule), rule
        for lesson in pool.lessons(rule):
            if lesson.good is not None:
                assert compile_py4(lesson.good.source).diagnostics == []
                assert "py3_" not in lesson.good.source


def test_migrated_programs_print_what_cpython_printed(pool):
    assert len(pool.migrated) >= 10
    for lesson in pool.migrated:
        assert lesson.bad.tag == "python" and lesson.good.output == lesson.bad.output
        assert "py3_" not in lesson.good.source and "object" not in lesson.good.source


def test_a_habit_boa_does_not_catch_is_not_a_counter_example():
    good = Shown("py4", "print(1)\n", output="1\n")
    same = {"status": "ok", "stdout": "1\n", "raised": None, "diagnostics": [], "truncated": False}
    assert _habit(same, "print(1)\n", good) is None
    differs = dict(same, stdout="2\n")
    assert _habit(differs, "print(2)\n", good).output == "2\n"
    raises = dict(same, status="runtime_error", stdout="", raised="IndexError: x")
    assert _habit(raises, "x\n", good).raises == "IndexError: x"
