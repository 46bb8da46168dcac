#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""test_aggregate.py - unit test of aggregate.py and paired.py.

What enters a median and a pair (a failed run does not), the pairing table (every
path against its fixed baseline, never the best path after the fact), the bootstrap
interval of the paired ratio on cases small enough to check by hand, rxe_pool's own
table, the open loop's drops, and the host's steal time.
"""
import os
import sys
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import aggregate  # noqa: E402
import paired  # noqa: E402
import summary  # noqa: E402


def rec(path, rep, rc, completions, lost=0, scenario="rxe_steady"):
    return {"scenario": scenario, "path": path, "repeat": rep, "rc": rc,
            "busy_ns": 10**9,
            "env": {"steal": 1, "ticks": 100, "load0": 0.5, "load1": 0.7},
            "demo": {"completions": completions, "elapsed_ms": 1000,
                     "calls_per_sec": completions, "lost": lost,
                     "counters": {"events": 10, "runs": 10, "empty_runs": 1,
                                  "arms": 10, "repolls": 0, "cpu_ns": 100},
                     "latency_p50_ns": 1000, "latency_p99_ns": 2000}}


class Bootstrap(unittest.TestCase):
    """The percentile bootstrap of the median, on cases whose interval is known."""

    def test_constant(self):
        # every resample is the same: the interval is the point
        self.assertEqual(paired.bootstrap_ci([1.2] * 10), (1.2, 1.2))

    def test_two_values(self):
        # a resample of [1, 3] is {1,1}, {1,3} or {3,3}: medians 1, 2, 3 with
        # probabilities 1/4, 1/2, 1/4; 1/4 > 2.5 % on each side, so [1, 3]
        self.assertEqual(paired.bootstrap_ci([1.0, 3.0]), (1.0, 3.0))

    def test_three_values(self):
        # the median of 3 draws from [1, 2, 3] is 1 with probability
        # P(two or three 1s) = 3 * (1/3)^2 * (2/3) + (1/3)^3 = 7/27, 3 likewise
        self.assertEqual(paired.bootstrap_ci([1.0, 2.0, 3.0]), (1.0, 3.0))

    def test_one_outlier_of_ten(self):
        # the median of 10 draws from nine 1s and one 5 exceeds 1 only when at
        # least 5 draws are the 5: binomial(10, 0.1) >= 5, about 0.16 % < 2.5 %
        self.assertEqual(paired.bootstrap_ci([1.0] * 9 + [5.0]), (1.0, 1.0))

    def test_too_few(self):
        self.assertEqual(paired.bootstrap_ci([1.0]), (None, None))
        self.assertEqual(paired.bootstrap_ci([]), (None, None))

    def test_seeded(self):
        v = [0.9, 1.0, 1.1, 1.05, 0.97, 1.2, 1.01, 0.99, 1.03, 1.08]
        lo, hi = paired.bootstrap_ci(v)
        self.assertEqual((lo, hi), paired.bootstrap_ci(v))
        self.assertLessEqual(lo, 1.02)
        self.assertGreaterEqual(hi, 1.02)
        self.assertGreaterEqual(lo, min(v))
        self.assertLessEqual(hi, max(v))
        self.assertLess(lo, hi)

    def test_summary_and_text(self):
        s = paired.summary([{"ratio": x} for x in (1.0, 3.0)])
        self.assertEqual(s, {"ratio": 2.0, "ci_low": 1.0, "ci_high": 3.0, "n": 2})
        self.assertEqual(paired.fmt_ci(s), "2.00 [1.00-3.00]")
        self.assertEqual(paired.fmt_ci(paired.summary([{"ratio": 1.5}])), "1.50 [n/a]")


class FailedRuns(unittest.TestCase):
    def setUp(self):
        recs = []
        for rep, (rc, n, lost) in enumerate([(0, 1000, 0), (0, 1200, 0), (1, 5, 3)]):
            recs.append(rec("upstream-wq", rep, 0, 1000))
            recs.append(rec("ocq-strict", rep, rc, n, lost))
        self.res = aggregate.aggregate(recs, ["upstream-wq", "ocq-strict"])
        self.e = self.res["rxe_steady"]["ocq-strict"]

    def test_counted(self):
        self.assertEqual(self.e["samples"], 2)
        self.assertEqual(self.e["failed_runs"], 1)

    def test_not_in_median(self):
        self.assertEqual(self.e["completions_per_s"], 1100)
        self.assertEqual(self.e["min"]["completions_per_s"], 1000)
        self.assertEqual(self.e["max"]["completions_per_s"], 1200)

    def test_not_in_pairs(self):
        # pairs 1.0 and 1.2: median 1.1, interval [1.0, 1.2] (see test_two_values)
        self.assertEqual([p["repeat"] for p in self.e["pairs"]], [0, 1])
        self.assertAlmostEqual(self.e["ratio"], 1.1)
        self.assertAlmostEqual(self.e["ci_low"], 1.0)
        self.assertAlmostEqual(self.e["ci_high"], 1.2)
        self.assertEqual(self.e["n_pairs"], 2)

    def test_raw_kept(self):
        raw = self.e["raw"]
        self.assertEqual(raw["repeat"], [0, 1, 2])
        self.assertEqual(raw["failed"], [False, False, True])
        self.assertEqual(raw["completions_per_s"], [1000, 1200, 5])
        self.assertEqual(raw["guest_steal_pct"], [1.0, 1.0, 1.0])

    def test_losses_still_summed(self):
        self.assertEqual(self.e["lost"], 3)


class Pairing(unittest.TestCase):
    """Every path against its fixed baseline in the same poll context."""

    def setUp(self):
        recs = []
        for rep in range(3):
            for p, n in (("upstream-wq", 1000), ("upstream-unbound", 2000),
                         ("upstream-softirq", 500), ("ocq-strict", 1500)):
                recs.append(rec(p, rep, 0, n))
        # the upstream paths' counters come from one traced run each
        for p, ev in (("upstream-wq", 800), ("upstream-unbound", 400),
                      ("upstream-softirq", 600)):
            recs.append({"scenario": "rxe_steady", "path": p, "repeat": 0,
                         "count": {"events": ev, "runs": 10, "runs_rescheduled": 0,
                                   "empty_runs": 0, "overrun": 0},
                         "demo": {"completions": 1000}})
        self.res = aggregate.aggregate(recs, ["upstream-wq", "upstream-unbound",
                                              "upstream-softirq", "ocq-strict"])
        self.e = self.res["rxe_steady"]["ocq-strict"]

    def test_fixed_baseline(self):
        # upstream-unbound is faster, but ocq-strict runs on IB_POLL_WORKQUEUE
        self.assertEqual(self.e["baseline"], "upstream-wq")
        self.assertEqual(self.e["poll_ctx"], "IB_POLL_WORKQUEUE")
        self.assertAlmostEqual(self.e["ratio"], 1.5)
        self.assertEqual((self.e["ci_low"], self.e["ci_high"]), (1.5, 1.5))
        self.assertNotIn("best_upstream", self.e)

    def test_baselines_have_no_ratio(self):
        for p in ("upstream-wq", "upstream-unbound", "upstream-softirq"):
            e = self.res["rxe_steady"][p]
            self.assertIsNone(e["baseline"])
            self.assertIsNone(e["ratio"])

    def test_events_against_the_baseline(self):
        # ocq-strict's own counters: 10 events per 1500 completions; upstream-wq's 800
        self.assertAlmostEqual(self.e["ratio_of_medians"]["events_per_1k"],
                               (10000 / 1500) / 800)

    def test_missing_baselines(self):
        self.assertEqual(aggregate.missing_baselines(["ocq-strict", "ocq-flow"]),
                         ["upstream-wq"])
        self.assertEqual(aggregate.missing_baselines(["upstream-wq", "ocq-flow"]), [])
        with self.assertRaises(KeyError):
            aggregate.missing_baselines(["ocq-nonesuch"])

    def test_every_path_of_the_bench_is_paired(self):
        for p in aggregate.BASELINE:
            b = aggregate.BASELINE[p][1]
            self.assertTrue(b is None or aggregate.BASELINE[b][1] is None, p)

    def test_table_shows_the_interval(self):
        lines = aggregate.table("k:", self.res).splitlines()
        row = [x for x in lines if x.startswith("ocq-strict")][0]
        self.assertIn("upstream-wq", row)
        self.assertIn("1.50 [1.50-1.50]", row)


class Quick(unittest.TestCase):
    """One repeat (QUICK=1): a ratio, no interval."""

    def test_na(self):
        recs = [rec("upstream-wq", 1, 0, 1000), rec("ocq-flow", 1, 0, 900)]
        res = aggregate.aggregate(recs, ["upstream-wq", "ocq-flow"])
        e = res["rxe_steady"]["ocq-flow"]
        self.assertAlmostEqual(e["ratio"], 0.9)
        self.assertIsNone(e["ci_low"])
        self.assertIn("0.90 [n/a]", aggregate.table("k:", res))


def pool_rec(path, rep, light_per_s, p99_us, shared_completions=10):
    group = lambda n, per_s, p99: {"completions": n, "per_s": per_s, "p50_us": 10,
                                   "p99_us": p99, "max_us": 2 * p99}
    return {"scenario": "rxe_pool", "path": path, "repeat": rep, "rc": 0,
            "pool": {"backend": path, "pairs": 8, "heavy_ns": 200000, "depth": 16,
                     "ms": 1000, "light": group(100, light_per_s, p99_us),
                     "light_shared": group(shared_completions, light_per_s / 2, p99_us),
                     "light_other": group(90, light_per_s, 50),
                     "heavy": {"completions": 5, "per_s": 5}, "errors": 0,
                     "dropped": 0}}


class Pool(unittest.TestCase):
    def setUp(self):
        recs = []
        for rep in range(3):
            recs.append(pool_rec("upstream-pool", rep, 1000, 4000, 0 if rep else 10))
            recs.append(pool_rec("ocq-pool", rep, 2000 + 100 * rep, 1000))
        self.res = aggregate.aggregate(recs, ["upstream-wq", "ocq-strict"])
        self.e = self.res["rxe_pool"]["ocq-pool"]

    def test_base_is_the_upstream_pool(self):
        self.assertEqual(list(self.res["rxe_pool"]), ["upstream-pool", "ocq-pool"])
        self.assertEqual(self.e["baseline"], "upstream-pool")
        # pairs 2.0, 2.1, 2.2
        self.assertAlmostEqual(self.e["ratio"], 2.1)
        self.assertAlmostEqual(self.e["ci_low"], 2.0)
        self.assertAlmostEqual(self.e["ci_high"], 2.2)
        self.assertAlmostEqual(self.e["paired"]["p99_us"]["ratio"], 0.25)

    def test_empty_group_has_no_figure(self):
        # two of upstream's runs had no light pair on the heavy one's CQ
        self.assertEqual(self.res["rxe_pool"]["upstream-pool"]["samples"], 3)
        self.assertEqual(self.res["rxe_pool"]["upstream-pool"]["shared_per_s"], 500)
        self.assertEqual(self.e["paired"]["shared_per_s"]["n"], 1)

    def test_table(self):
        lines = aggregate.table("k:", self.res).splitlines()
        row = [x for x in lines if x.startswith("ocq-pool")]
        self.assertEqual(len(row), 1)
        self.assertEqual(row[0].split()[2], "2100")
        rst = aggregate.rst_table("rxe_pool", "rxe_pool", self.res["rxe_pool"])
        self.assertIn("light/s", rst)


class OpenLoop(unittest.TestCase):
    """rxe_open_slow: its drops are summed and shown."""

    def setUp(self):
        recs = []
        for rep_ in range(3):
            for p, n in (("upstream-wq", 1000), ("ocq-strict", 1000)):
                r = rec(p, rep_, 0, n, scenario="rxe_open_slow")
                r["demo"]["dropped"] = 2 if p == "ocq-strict" else 0
                r["demo"]["backlog"] = 1 if p == "ocq-strict" else 0
                recs.append(r)
        recs.append({"scenario": "rxe_open_slow", "path": "upstream-wq", "repeat": 0,
                     "count": {"events": 500, "runs": 500, "runs_rescheduled": 0,
                               "empty_runs": 0, "overrun": 0},
                     "demo": {"completions": 1000}})
        self.res = aggregate.aggregate(recs, ["upstream-wq", "ocq-strict"])
        self.e = self.res["rxe_open_slow"]["ocq-strict"]

    def test_dropped_summed(self):
        self.assertEqual(self.e["dropped"], 6)
        self.assertEqual(self.e["backlog"], 3)
        self.assertEqual(self.res["rxe_open_slow"]["upstream-wq"]["dropped"], 0)

    def test_events_against_upstream(self):
        # 10 events per 1000 completions against upstream-wq's traced 500
        self.assertAlmostEqual(self.e["ratio_of_medians"]["events_per_1k"], 0.02)

    def test_tables_show_drops(self):
        lines = aggregate.table("k:", self.res).splitlines()
        head = [x for x in lines if x.startswith("path")][0].split()
        row = [x for x in lines if x.startswith("ocq-strict")][0].split()
        # the last three columns: drop, backlog, fail
        self.assertEqual(head[-3:], ["drop", "backlog", "fail"])
        self.assertEqual(row[-3:], ["6", "3", "0"])
        rst = aggregate.rst_table("rxe_open_slow", "rxe_open_slow",
                                  self.res["rxe_open_slow"])
        self.assertIn("drop backlog", rst.splitlines()[3])


class Host(unittest.TestCase):
    """The host's steal time and load over a boot."""

    def test_steal(self):
        h = {"before": {"time": 0, "loadavg": [1.0, 1.0, 1.0],
                        "cpu": [100, 0, 50, 800, 0, 0, 0, 50]},
             "after": {"time": 60, "loadavg": [2.5, 1.5, 1.0],
                       "cpu": [200, 0, 100, 1500, 0, 0, 0, 200]},
             "samples": [[30, 3.0]]}
        s = aggregate.host_summary(h)
        # steal 150 of 1000 jiffies; idle 700
        self.assertAlmostEqual(s["steal_pct"], 15.0)
        self.assertAlmostEqual(s["idle_pct"], 70.0)
        self.assertEqual(s["load1_max"], 3.0)


class Summary(unittest.TestCase):
    """performance.rst's generated blocks: the reading of an interval, the splice."""

    def test_reading(self):
        r = lambda lo, hi: summary.reading({"ratio": 1.0, "ci_low": lo, "ci_high": hi})
        self.assertEqual(r(1.01, 1.2), "ahead")
        self.assertEqual(r(0.8, 0.99), "behind")
        self.assertEqual(r(0.9, 1.1), "level")
        self.assertEqual(r(None, None), "n/a")
        self.assertEqual(summary.reading({"ratio": None}), "not measured")

    def test_splice(self):
        doc = "a\n.. generated: x begin\nold\n.. generated: x end\nb"
        self.assertEqual(summary.splice(doc, {"x": ["new"]}),
                         "a\n.. generated: x begin\n\nnew\n\n.. generated: x end\nb")
        with self.assertRaises(KeyError):
            summary.splice(doc, {"y": []})

    def test_row_from_results(self):
        recs = []
        for rep in range(3):
            recs.append(rec("upstream-wq", rep, 0, 1000))
            recs.append(rec("ocq-strict", rep, 0, 1000 + 100 * rep))
        bench = {"kernel": "k", "smp": 2, "repeats": 3, "host": {},
                 "by_smp": {"2": aggregate.aggregate(recs, ["upstream-wq", "ocq-strict"])}}
        rows = "\n".join(summary.summary_block(bench, None))
        # pairs 1.0, 1.1, 1.2: median 1.1, interval [1.0, 1.2] (holds 1: level)
        line = [x for x in rows.splitlines() if "rxe_steady" in x][0]
        self.assertIn("compl/s 1.10 [1.00-1.20]", line)
        self.assertIn("level", line)
        self.assertIn("not measured", rows)


if __name__ == "__main__":
    unittest.main()
