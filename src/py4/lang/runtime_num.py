"""Python-4 numbers: bool is not a number in `sum` (P4-21), `round` takes halves away
from zero (P4-22), integer `//`, `%` and `divmod` truncate toward zero (P4-23).
"""
from __future__ import annotations

import builtins
import decimal
import math
from fractions import Fraction
from itertools import islice
from operator import index as _as_int

_py3_sum = builtins.sum
_py3_round = builtins.round
_py3_divmod = builtins.divmod

# Enough precision for any float's exact decimal expansion (at most 767 significant
# digits), so quantize never fails for the ndigits range Python 3 itself rounds in.
_ROUND_CONTEXT = decimal.Context(prec=1100, rounding=decimal.ROUND_HALF_UP,
                                 Emax=decimal.MAX_EMAX, Emin=decimal.MIN_EMIN)
# Python 3's own limits for float ndigits (Objects/floatobject.c): beyond them the
# float is returned unchanged (too many digits) or as a signed zero (too few).
_FLOAT_NDIGITS_MAX = 323
_FLOAT_NDIGITS_MIN = -308
_SUM_CHUNK = 4096


def _sum_of_bools_error() -> TypeError:
    return TypeError("sum() of bools: bool is not a number in Python-4; "
                     "use count(xs) to count the true items")


def sum(iterable, /, start=0):  # noqa: A001
    """Python 3's `sum`, except that bools are not numbers (P4-21).

    Raises:
        TypeError: an item (or `start`) is a bool — use `count(xs)`; or the items
            cannot be added.
    """
    if type(start) is bool:
        raise _sum_of_bools_error()
    if type(iterable) is list or type(iterable) is tuple:
        return _checked_sum(iterable, start)
    # Other iterables (generators, possibly endless) in chunks: bounded memory, and the
    # same left-to-right additions as one Python 3 sum (3.11 adds floats plainly).
    items = iter(iterable)
    total = start
    while chunk := list(islice(items, _SUM_CHUNK)):
        total = _checked_sum(chunk, total)
    return total


def _checked_sum(items, start):
    # map(type, …) and the set run in C: about 20 ns per item.
    if bool in set(map(type, items)):
        raise _sum_of_bools_error()
    return _py3_sum(items, start)


def _round_int(x: int, ndigits: int) -> int:
    if ndigits >= 0:
        return x
    # |x| has at most bit_length // 3 + 1 decimal digits; far below half a unit it rounds
    # to 0, and 10 ** -ndigits (possibly gigantic) need not be computed.
    if -ndigits > abs(x).bit_length() // 3 + 2:
        return 0
    unit = 10 ** -ndigits
    quotient, remainder = _py3_divmod(abs(x), unit)
    if 2 * remainder >= unit:
        quotient += 1
    return quotient * unit if x >= 0 else -quotient * unit


def _round_float(x: float, ndigits):
    if ndigits is None:
        if math.isinf(x):
            raise OverflowError("cannot convert float infinity to integer")
        if math.isnan(x):
            raise ValueError("cannot convert float NaN to integer")
        return int(decimal.Decimal(x).to_integral_value(rounding=decimal.ROUND_HALF_UP))
    if not math.isfinite(x) or x == 0.0 or ndigits > _FLOAT_NDIGITS_MAX:
        return x
    if ndigits < _FLOAT_NDIGITS_MIN:
        return 0.0 * x
    exact = decimal.Decimal(x)
    rounded = exact.quantize(decimal.Decimal(1).scaleb(-ndigits), context=_ROUND_CONTEXT)
    return float(rounded)


def _round_fraction(x: Fraction, ndigits):
    unit = Fraction(1) if ndigits is None else Fraction(10) ** -ndigits
    steps = abs(x) / unit
    whole = math.floor(steps + Fraction(1, 2))
    whole = whole if x >= 0 else -whole
    return whole if ndigits is None else Fraction(whole) * unit


def round(number, ndigits=None):  # noqa: A001
    """Round halves away from zero (P4-22): `round(2.5) == 3`, `round(-0.5) == -1`.

    Floats are rounded by their exact binary value (as Python 3 does), so
    `round(2.675, 2) == 2.67` because 2.675 is stored as 2.67499999…. Returns an int
    when `ndigits` is None; otherwise a value of the input's type. Other types with
    `__round__` keep their own rounding.

    Raises:
        OverflowError: rounding an infinity to an int.
        ValueError: rounding a NaN to an int.
        TypeError: `ndigits` is not an integer, or the number cannot be rounded.
    """
    if ndigits is not None:
        ndigits = _as_int(ndigits)
    if type(number) is float:
        return _round_float(number, ndigits)
    if type(number) is int:
        return number if ndigits is None else _round_int(number, ndigits)
    if isinstance(number, int):  # bool and int subclasses: Python 3 returns an int
        return int(number) if ndigits is None else _round_int(int(number), ndigits)
    if isinstance(number, float):
        return _round_float(float(number), ndigits)
    if isinstance(number, decimal.Decimal):
        return _round_decimal(number, ndigits)
    if isinstance(number, Fraction):
        return _round_fraction(number, ndigits)
    return _py3_round(number) if ndigits is None else _py3_round(number, ndigits)


def _round_decimal(x: decimal.Decimal, ndigits):
    if ndigits is None:
        return int(x.to_integral_value(rounding=decimal.ROUND_HALF_UP))
    return x.quantize(decimal.Decimal(1).scaleb(-ndigits), context=_ROUND_CONTEXT)


def _truncating_divmod(a: int, b: int):
    quotient, remainder = _py3_divmod(a, b)
    if remainder and (a < 0) != (b < 0):
        return quotient + 1, remainder - b
    return quotient, remainder


def floordiv(a, b):
    """`a // b` (P4-23): for two ints (bools included) the quotient truncated toward
    zero (`-7 // 2 == -3`); any other operands keep Python 3's `//`.

    Raises:
        ZeroDivisionError: `b` is zero.
        TypeError: the operands do not support `//`.
    """
    if type(a) is int and type(b) is int:
        if a >= 0 and b > 0:  # the common case: floor and truncation agree
            return a // b
    elif not (isinstance(a, int) and isinstance(b, int)):
        return a // b
    quotient = a // b
    if (a < 0) != (b < 0) and quotient * b != a:
        return quotient + 1
    return quotient


def mod(a, b):
    """`a % b` (P4-23): for two ints (bools included) the remainder of truncating
    division, with the sign of `a` (`-7 % 2 == -1`); any other operands keep Python 3's
    `%` (floats floor; a str on the left formats, see P4-25).

    Raises:
        ZeroDivisionError: `b` is zero.
        TypeError: the operands do not support `%`.
    """
    if type(a) is int and type(b) is int:
        if a >= 0 and b > 0:  # the common case: floor and truncation agree
            return a % b
    elif not (isinstance(a, int) and isinstance(b, int)):
        return a % b
    remainder = a % b
    if remainder and (a < 0) != (b < 0):
        return remainder - b
    return remainder


def divmod(a, b):  # noqa: A001
    """`divmod(a, b)` (P4-23): `(a // b, a % b)` with Python-4's truncating ints.

    Raises:
        ZeroDivisionError: `b` is zero.
        TypeError: the operands do not support divmod.
    """
    if (type(a) is int and type(b) is int) or (isinstance(a, int) and isinstance(b, int)):
        return _truncating_divmod(a, b)
    return _py3_divmod(a, b)
