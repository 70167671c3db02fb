"""R's number formatting (``format(x, digits=d)``, ``format.pval``), enough of it to print
a Welch test the way R's ``print.htest`` does, to the printed digit.

R (src/main/format.c ``formatReal``) formats a numeric vector with one common layout:
each element is rounded to ``digits`` significant digits and its trailing zeros dropped
(``nsig``); fixed notation then needs ``max(nsig - 1 - exponent)`` decimals (at least 0)
and scientific notation ``max(nsig)`` mantissa digits. Fixed is used when its width is
no larger than the scientific width (``options(scipen = 0)``). Elements are right-justified
to a common width.
"""

from __future__ import annotations

import math
from typing import Sequence

__all__ = ["format_r", "format_pval"]

EPS = 2.220446049250313e-16  # .Machine$double.eps


def _sci(x: float, digits: int) -> tuple[int, int, bool]:
    """(nsig, exponent, negative) of ``x`` rounded to ``digits`` significant digits."""
    if x == 0:
        return 1, 0, False
    s = "%.*e" % (digits - 1, abs(x))
    mant, exp = s.split("e")
    mant_digits = mant.replace(".", "").rstrip("0")
    return max(1, len(mant_digits)), int(exp), x < 0


def format_r(values: Sequence[float] | float, digits: int = 7) -> list[str]:
    """``format(c(...), digits = digits)``: the strings R prints, padded to common width."""
    if isinstance(values, (int, float)):
        values = [values]
    xs = [float(v) for v in values]
    finite = [x for x in xs if math.isfinite(x)]
    if not finite:
        out = ["NaN" if math.isnan(x) else ("Inf" if x > 0 else "-Inf") for x in xs]
    else:
        info = [_sci(x, digits) for x in finite]
        neg = any(n for _, _, n in info)
        rgt = max(0, max(ns - 1 - e for ns, e, _ in info))
        left = max(max(1, e + 1) for _, e, _ in info)
        w_fixed = neg + left + rgt + (1 if rgt > 0 else 0)
        mxns = max(ns for ns, _, _ in info)
        exp_width = 3 if any(abs(e) >= 100 for _, e, _ in info) else 2
        w_sci = neg + (mxns + 1 if mxns > 1 else mxns) + 2 + exp_width
        fixed = w_fixed <= w_sci
        out = []
        for x in xs:
            if not math.isfinite(x):
                out.append("NaN" if math.isnan(x) else ("Inf" if x > 0 else "-Inf"))
            elif fixed:
                out.append("%.*f" % (rgt, x))
            else:
                out.append("%.*e" % (mxns - 1, x))
    width = max(len(s) for s in out)
    return [s.rjust(width) for s in out]


def format_pval(p: float, digits: int = 4) -> str:
    """``format.pval(p, digits)``: below machine epsilon "< " and eps formatted with
        ``max(1, digits - 2)`` digits ("< 2.2e-16"), else ``format(p, digits)``."""
    if p < EPS:
        return "< " + format_r(EPS, max(1, digits - 2))[0]
    return format_r(p, digits)[0]
