"""Order statistics for benchmark samples (no numpy: the runner uses the standard library only)."""

import math


def percentile(values, p):
    """The p-th percentile (0..100) by linear interpolation; None for no values."""
    if not values:
        return None
    s = sorted(values)
    k = (len(s) - 1) * p / 100.0
    lo, hi = math.floor(k), math.ceil(k)
    return s[lo] + (s[hi] - s[lo]) * (k - lo)


def median(values):
    return percentile(values, 50)


def spread(values, fmt="{:.2f}"):
    """'min / median / max' of the values, or 'n/a'."""
    if not values:
        return "n/a"
    return " / ".join(fmt.format(v) for v in (min(values), median(values), max(values)))
