"""Number formatting as the official LoadGen's C++ streams print it."""

from __future__ import annotations

import math


def ostream(value: float | int | bool) -> str:
    """`std::ostream << value` with default flags: 6 significant digits for doubles, bools as 0/1."""
    if isinstance(value, bool):
        return "1" if value else "0"
    if isinstance(value, int):
        return str(value)
    if math.isnan(value):
        return "nan" if math.copysign(1.0, value) > 0 else "-nan"
    return f"{value:g}"


def fixed(value: float, precision: int = 2) -> str:
    """The official `DoubleToString(value, precision)`: std::fixed with `precision` decimals."""
    if math.isnan(value):
        return "nan"
    return f"{value:.{precision}f}"


def percentile_label(p: float) -> str:
    """`DoubleToString(p * 100)`, e.g. 0.999 -> '99.90' (keys and summary labels)."""
    return fixed(p * 100, 2)
