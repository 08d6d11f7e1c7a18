"""Family registry and generation: distinct, deterministic, well-formed variants."""

import pytest

from py4.problems.family import FamilyError, Variant, all_families, code, family, get_family
from py4.problems.generate import generate_family, to_json_value


def test_registry_has_many_families_with_non_core_targets():
    fams = all_families()
    assert len(fams) >= 60
    for fam in fams:
        assert fam.rules and all("P4-06" <= r <= "P4-30" for r in fam.rules), fam.name


def test_get_family_suggests_close_names():
    assert get_family("series_sum").name == "series_sum"
    with pytest.raises(KeyError, match="did you mean series_sum"):
        get_family("series_summ")


def test_family_rejects_core_rules_and_duplicates():
    with pytest.raises(FamilyError, match="non-core"):
        family("bad_core_family", "x", ["P4-01"])(lambda rng: iter(()))
    with pytest.raises(FamilyError, match="defined twice"):
        family("series_sum", "x", ["P4-12"])(lambda rng: iter(()))


def test_code_fills_dollar_placeholders_and_keeps_braces():
    assert code("""
        fn f() -> dict:
            return {'a': $v}
    """, v=3) == "fn f() -> dict:\n    return {'a': 3}\n"


@pytest.mark.parametrize("name", ["series_sum", "frequent_keys", "round_each", "checked_rpn"])
def test_generation_is_deterministic_and_distinct(name):
    fam = get_family(name)
    a = generate_family(fam, 7, 12)
    b = generate_family(fam, 7, 12)
    assert [(p.variant.gold, p.tests) for p in a] == [(p.variant.gold, p.tests) for p in b]
    assert len({p.variant.reference + p.variant.task for p in a}) == len(a) == 12
    assert all(3 <= len(p.tests) <= 10 for p in a)
    assert generate_family(fam, 8, 12)[0].variant.gold != a[0].variant.gold or len(a) == 12


def test_every_family_yields_variants_with_signature():
    for fam in all_families():
        problems = generate_family(fam, 1, 3)
        assert problems, fam.name
        for p in problems:
            assert p.variant.signature().startswith(f"fn {p.variant.entry_point}(")


def test_to_json_value_rejects_non_json():
    assert to_json_value((1, [2, (3,)])) == [1, [2, [3]]]
    with pytest.raises(FamilyError):
        to_json_value({1: 2})
    with pytest.raises(FamilyError):
        to_json_value(float("nan"))


def test_a_reference_that_raises_names_the_family():
    from py4.problems.family import _REGISTRY

    @family("broken_for_test", "x", ["P4-12"])
    def broken(rng):
        while True:
            yield Variant(title="t", task="t", entry_point="f", gold="fn f(x: int) -> int:\n    return x\n",
                          reference="def f(x):\n    return 1 // x\n", tests=[[0], [1], [2]])

    try:
        with pytest.raises(FamilyError, match="broken_for_test.*ZeroDivisionError"):
            generate_family(broken, 1, 1)
    finally:  # keep the registry as the bank sees it
        _REGISTRY.pop("broken_for_test", None)
