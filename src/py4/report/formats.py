"""Value formatting of the hyperparameter table (LaTeX-flavoured strings, as the paper prints them)."""

from __future__ import annotations

import math


def thousands(n: int) -> str:
    """12288 -> '12,288'."""
    return f"{int(n):,}"


def millions(n: int) -> str:
    """Token counts: two decimals below 10M (5.40M), one above (10.0M, 111.5M)."""
    m = n / 1e6
    return f"{m:.2f}M" if m < 10 else f"{m:.1f}M"


def number(x: float) -> str:
    """0.0 -> '0', 0.01 -> '0.01', 2.0 -> '2', 0.7 -> '0.7'."""
    if float(x) == int(x):
        return str(int(x))
    return repr(float(x))


def one_decimal(x: float) -> str:
    """1.0 -> '1.0' (gradient clipping, lambda)."""
    return f"{float(x):.1f}"


def power_of_ten(x: float) -> str:
    """1e-5 -> '$1\\times10^{-5}$'. Raises ValueError for a value with no short mantissa."""
    exponent = math.floor(math.log10(abs(x)))
    mantissa = round(x / 10 ** exponent, 6)
    m = number(mantissa)
    if len(m) > 4:
        raise ValueError(f"cannot print {x} as a short power of ten")
    return f"${m}\\times10^{{{exponent}}}$"


def percent(ratio: float) -> str:
    """0.05 -> '5\\%'."""
    return f"{number(round(ratio * 100, 6))}\\%"


def times(*parts: int) -> str:
    """(1, 8, 4) -> '1 $\\times$ 8 $\\times$ 4'."""
    return " $\\times$ ".join(str(p) for p in parts)


def signed(x: float) -> str:
    """Rewards: 1.0 -> '+1', 0 -> '0', -0.1 -> '$-$0.10'."""
    if x == 0:
        return "0"
    if x > 0:
        return f"+{number(x)}"
    return f"$-${abs(x):.2f}"


def texttt(name: str) -> str:
    """A code name in \\texttt with underscores escaped."""
    return "\\texttt{" + name.replace("_", "\\_") + "}"


OPTIMIZERS = {
    "adamw_torch_fused": "AdamW (fused)",
    "adamw_torch_8bit": "AdamW (8-bit)",
    "adamw_8bit": "AdamW (8-bit)",
    "adamw_torch": "AdamW",
}


def optimizer(name: str) -> str:
    """HF optimizer name -> the table's words. Raises KeyError for an unknown optimizer."""
    if name not in OPTIMIZERS:
        raise KeyError(f"no table wording for optimizer {name!r} (known: {', '.join(OPTIMIZERS)})")
    return OPTIMIZERS[name]


def projections(modules: list[str]) -> str:
    """[q_proj, ..., down_proj] -> 'q, k, v, o, gate, up, down' (+ '(attention only)')."""
    short = [m.removesuffix("_proj") for m in modules]
    text = ", ".join(short)
    if set(short) <= {"q", "k", "v", "o"}:
        text += " (attention only)"
    return text
