"""Unit tests of the Python-4 number runtime: P4-21 (sum), P4-22 (round), P4-23 (//, %, divmod)."""
import decimal
import math
from fractions import Fraction

import pytest

from py4.lang import runtime as rt

B = rt.builtins_dict()
p4sum, p4round, p4divmod = B["sum"], B["round"], B["divmod"]


def test_sum_of_numbers_is_python3_sum():
    assert p4sum([1, 2, 3]) == 6
    assert p4sum((x * x for x in range(4))) == 14
    assert p4sum([0.5, 0.25], 1) == 1.75
    assert p4sum([[1], [2]], []) == [1, 2]
    assert p4sum(B["range"](1, 4)) == 10


def test_sum_over_bools_is_a_type_error():
    with pytest.raises(TypeError) as info:
        p4sum([True, False, True])
    assert str(info.value) == ("sum() of bools: bool is not a number in Python-4; "
                               "use count(xs) to count the true items")
    with pytest.raises(TypeError, match="count"):
        p4sum(x > 1 for x in [1, 2, 3])
    with pytest.raises(TypeError, match="count"):
        p4sum([1, 2, True])
    with pytest.raises(TypeError, match="count"):
        p4sum([1], True)


@pytest.mark.parametrize("x, expected", [
    (0.5, 1), (1.5, 2), (2.5, 3), (-0.5, -1), (-2.5, -3), (2.4, 2), (-2.6, -3),
    (0.49999999999999994, 0), (7, 7), (True, 1),
])
def test_round_halves_away_from_zero(x, expected):
    result = p4round(x)
    assert result == expected and type(result) is int


@pytest.mark.parametrize("x, n, expected", [
    (0.125, 2, 0.13), (-0.125, 2, -0.13), (2.675, 2, 2.67),  # 2.675 is stored below the half
    (1.5, 0, 2.0), (25, -1, 30), (-25, -1, -30), (15, -1, 20), (14, -1, 10), (1234, 2, 1234),
    (1e300, 2, 1e300), (5e-324, 400, 5e-324), (123.0, -400, 0.0), (0.0, 3, 0.0),
])
def test_round_with_ndigits(x, n, expected):
    result = p4round(x, n)
    assert result == expected and type(result) is type(x)


def test_round_keeps_signed_zero_and_special_floats():
    assert math.copysign(1, p4round(-0.4, 0)) == -1
    assert math.isinf(p4round(math.inf, 2)) and math.isnan(p4round(math.nan, 1))
    with pytest.raises(OverflowError):
        p4round(math.inf)
    with pytest.raises(ValueError):
        p4round(math.nan)
    with pytest.raises(TypeError):
        p4round(1.5, 1.0)


def test_round_decimal_and_fraction_halves_away():
    assert p4round(decimal.Decimal("2.5")) == 3
    assert p4round(decimal.Decimal("-0.125"), 2) == decimal.Decimal("-0.13")
    assert p4round(Fraction(5, 2)) == 3 and p4round(Fraction(-1, 8), 2) == Fraction(-13, 100)


@pytest.mark.parametrize("a, b, q, r", [
    (7, 2, 3, 1), (-7, 2, -3, -1), (7, -2, -3, 1), (-7, -2, 3, -1), (6, -3, -2, 0),
    (0, 5, 0, 0), (True, 2, 0, 1),
])
def test_integer_division_truncates_toward_zero(a, b, q, r):
    assert rt.floordiv(a, b) == q and rt.mod(a, b) == r
    assert p4divmod(a, b) == (q, r)
    assert q * b + r == a


def test_non_int_operands_keep_python3_behaviour():
    assert rt.floordiv(-7.0, 2) == -4.0 and rt.mod(-7.0, 2) == 1.0
    assert p4divmod(-7.5, 2) == (-4.0, 0.5)
    assert rt.mod("%d items", 3) == "3 items"
    assert rt.floordiv(Fraction(-7), 2) == -4


def test_division_by_zero():
    for op in (rt.floordiv, rt.mod, p4divmod):
        with pytest.raises(ZeroDivisionError):
            op(1, 0)


def test_round_int_with_huge_negative_ndigits_is_fast():
    assert p4round(5, -10**7) == 0 and p4round(-5 * 10**20, -21) == -10**21


def test_sum_of_a_long_generator_is_chunked_and_exact():
    assert p4sum(x for x in range(10_001)) == sum(range(10_001))
    assert p4sum((0.1 for _ in range(9000)), 0.5) == sum((0.1 for _ in range(9000)), 0.5)
    assert p4sum(iter([[1]] * 5000), []) == [1] * 5000
    with pytest.raises(TypeError, match="count"):
        p4sum(x == 9000 if x > 8000 else x for x in range(9001))
