"""Number formatting as the official LoadGen's C++ streams print it, and the range of values a
printed number stands for (what a checker may compare it with)."""

from __future__ import annotations

import math

from proctor.typed_records import record


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


# --- what a printed number stands for ------------------------------------------------------------

SIGNIFICANT = 6  # std::ostream's default precision: every double of a detail log, some summary lines
_SLACK = 1e-9  # relative: a bound computed in doubles is widened by this much (rounding, never a tolerance)


@record(frozen=True, slots=True)
class Span:
    """The closed range of values a logged number (or one derived from logged numbers) can be.

    Arithmetic is for non-negative quantities (durations, counts, rates): each result is widened by
    a relative _SLACK so a bound computed in doubles never excludes the exact value."""

    lo: float
    hi: float

    @staticmethod
    def of(value: float) -> Span:
        return Span(float(value), float(value))

    def overlaps(self, other: Span) -> bool:
        return self.lo <= other.hi and other.lo <= self.hi

    def __contains__(self, x: float) -> bool:
        return self.lo <= x <= self.hi

    def widened(self) -> Span:
        lo = self.lo * (1 - _SLACK) if self.lo > 0 else self.lo * (1 + _SLACK)
        hi = self.hi * (1 + _SLACK) if self.hi > 0 else self.hi * (1 - _SLACK)
        return Span(lo, hi)

    def __add__(self, other: Span | float) -> Span:
        o = other if isinstance(other, Span) else Span.of(other)
        return Span(self.lo + o.lo, self.hi + o.hi).widened()

    def __sub__(self, other: Span | float) -> Span:
        o = other if isinstance(other, Span) else Span.of(other)
        return Span(self.lo - o.hi, self.hi - o.lo).widened()

    def __mul__(self, other: Span | float) -> Span:
        o = other if isinstance(other, Span) else Span.of(other)
        return Span(self.lo * o.lo, self.hi * o.hi).widened()

    def __rtruediv__(self, numerator: float) -> Span:
        """numerator / span (numerator >= 0); an upper end of inf where the span reaches 0."""
        lo = numerator / self.hi if self.hi > 0 else math.inf
        hi = numerator / self.lo if self.lo > 0 else math.inf
        return Span(lo, hi).widened()

    def __truediv__(self, other: Span | float) -> Span:
        o = other if isinstance(other, Span) else Span.of(other)
        lo = self.lo / o.hi if o.hi > 0 else math.inf
        hi = self.hi / o.lo if o.lo > 0 else math.inf
        return Span(lo, hi).widened()

    def clip(self, lo: float, hi: float) -> Span | None:
        """The part of this span inside [lo, hi]; None when they do not meet."""
        a, b = max(self.lo, lo), min(self.hi, hi)
        return Span(a, b) if a <= b else None

    def text(self) -> str:
        """'140310', or '7987 to 7987.07' with as many digits as tell the ends apart (up to 10)."""
        if not math.isfinite(self.hi):
            return f"at least {self.lo:.6g}"
        mid = (self.lo + self.hi) / 2
        if self.lo <= 0 < self.hi:
            return f"at most {self.hi:.6g}"
        if self.hi - self.lo <= 1e-8 * abs(mid):  # one value, widened by rounding only
            return f"{mid:.9g}"
        for digits in range(6, 11):
            lo, hi = f"{self.lo:.{digits}g}", f"{self.hi:.{digits}g}"
            if lo != hi:
                return f"{lo} to {hi}"
        return f"{mid:.9g}"


def printed(value: float, digits: int = SIGNIFICANT) -> Span:
    """The values `std::ostream << double` (`digits` significant digits) prints as `value`."""
    v = float(value)
    if v == 0 or not math.isfinite(v):
        return Span(v, v)
    half = 0.5 * 10.0 ** (math.floor(math.log10(abs(v))) - digits + 1)
    return Span(v - half, v + half).widened()


def printed_fixed(value: float, decimals: int = 2) -> Span:
    """The values `DoubleToString(v, decimals)` (std::fixed) prints as `value`."""
    half = 0.5 * 10.0**-decimals
    v = float(value)
    return Span(v - half, v + half).widened()
