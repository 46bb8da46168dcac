# SPDX-License-Identifier: GPL-2.0
"""paired.py - paired ratios and their bootstrap confidence intervals.

Shared by make bench (aggregate.py) and make ulp-bench (ulp_aggregate.py); Python's
standard library only.

A workload runs on a path and on that path's baseline once per repeat, one right
after the other (interleaved), so the two runs of a repeat share the host's phase.
The paired ratio of a repeat is the path's value over the baseline's in that repeat;
the figure reported is the median of those ratios, and its 95 % confidence interval
comes from a percentile bootstrap: BOOT_RESAMPLES times, draw as many ratios as
there are, with replacement, and take their median; the interval is the 2.5th and
97.5th percentiles of those medians (the (0.025 * B + 1)-th and (0.975 * B)-th of
the B medians in ascending order).  The generator is seeded with BOOT_SEED, so the
same ratios always give the same interval: results.json carries the ratios, the
seed and the number of resamples, from which the interval can be computed again.

With fewer than two pairs there is no interval (None, shown as n/a).
"""
import math
import random
import statistics

BOOT_RESAMPLES = 10000
BOOT_SEED = 35
BOOT_LEVEL = 0.95
STATISTIC = "median"


def method():
    """How the intervals were computed, for results.json."""
    return {"statistic": STATISTIC, "interval": "percentile bootstrap",
            "level": BOOT_LEVEL, "resamples": BOOT_RESAMPLES, "seed": BOOT_SEED}


def bootstrap_ci(values, resamples=BOOT_RESAMPLES, seed=BOOT_SEED, level=BOOT_LEVEL):
    """(low, high): the percentile bootstrap interval of the median of @values.

    (None, None) with fewer than two values.
    """
    n = len(values)
    if n < 2:
        return None, None
    rng = random.Random(seed)
    meds = sorted(statistics.median(rng.choices(values, k=n))
                  for _ in range(resamples))
    tail = (1.0 - level) / 2.0
    lo = meds[int(math.floor(tail * resamples))]
    hi = meds[int(math.ceil((1.0 - tail) * resamples)) - 1]
    return lo, hi


def ratio(a, b):
    """a / b, or None when either is missing or b is 0."""
    if a is None or b is None or b == 0:
        return None
    return a / b


def pairs(runs, base_runs, key):
    """The per-repeat pairs of @key: [{"repeat", "value", "base", "ratio"}].

    @runs and @base_runs are lists of dicts with "repeat" and "failed"; a repeat
    enters only when both of its runs succeeded and have a value of @key.
    """
    by_rep = {b["repeat"]: b for b in base_runs if not b["failed"]}
    out = []
    for r in sorted(runs, key=lambda x: x["repeat"]):
        b = by_rep.get(r["repeat"])
        if r["failed"] or b is None:
            continue
        q = ratio(r.get(key), b.get(key))
        if q is not None:
            out.append({"repeat": r["repeat"], "value": r[key], "base": b[key],
                        "ratio": q})
    return out


def summary(prs):
    """{"ratio", "ci_low", "ci_high", "n"} of a list of pairs()."""
    qs = [p["ratio"] for p in prs]
    lo, hi = bootstrap_ci(qs)
    return {"ratio": statistics.median(qs) if qs else None,
            "ci_low": lo, "ci_high": hi, "n": len(qs)}


def fmt_ci(s, nd=2):
    """'1.03 [0.98-1.07]', '1.03 [n/a]' or '-' for a summary()."""
    if not s or s.get("ratio") is None:
        return "-"
    if s.get("ci_low") is None:
        return "%.*f [n/a]" % (nd, s["ratio"])
    return "%.*f [%.*f-%.*f]" % (nd, s["ratio"], nd, s["ci_low"], nd, s["ci_high"])
