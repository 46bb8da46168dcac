#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""test_aggregate.py - unit test of aggregate.py: what enters a median.

Feeds aggregate() records of three repeats, one of which failed, and checks that the
failed run is counted but enters no median, minimum, maximum or paired ratio; and
rxe_pool records, whose ratios are to upstream-pool and whose table is its own.
"""
import os
import sys
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import aggregate  # noqa: E402


def rec(path, rep, rc, completions, lost=0):
    return {"scenario": "rxe_steady", "path": path, "repeat": rep, "rc": rc,
            "busy_ns": 10**9,
            "demo": {"completions": completions, "elapsed_ms": 1000,
                     "calls_per_sec": completions, "lost": lost,
                     "counters": {"events": 10, "runs": 10, "empty_runs": 1,
                                  "arms": 10, "repolls": 0, "cpu_ns": 100},
                     "latency_p50_ns": 1000, "latency_p99_ns": 2000}}


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

    def test_not_in_paired(self):
        self.assertAlmostEqual(self.e["paired_ratio"]["completions_per_s"], 1.1)

    def test_losses_still_summed(self):
        self.assertEqual(self.e["lost"], 3)


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
        r = self.e["ratio_to_upstream_pool"]
        self.assertAlmostEqual(r["completions_per_s"], 2.1)
        self.assertAlmostEqual(r["p99_us"], 0.25)
        self.assertNotIn("ratio_to_upstream_wq", self.e)

    def test_empty_group_has_no_figure(self):
        # two of upstream's runs had no light pair on the heavy one's CQ
        self.assertEqual(self.res["rxe_pool"]["upstream-pool"]["samples"], 3)
        self.assertEqual(self.res["rxe_pool"]["upstream-pool"]["shared_per_s"], 500)

    def test_table(self):
        lines = aggregate.table("k:", self.res).splitlines()
        row = [x for x in lines if x.startswith("ocq-pool")]
        self.assertEqual(len(row), 1)
        self.assertEqual(row[0].split()[1], "2100")
        rst = aggregate.rst_table("rxe_pool", self.res["rxe_pool"], "pool")
        self.assertIn("light/s", rst)


class BestUpstream(unittest.TestCase):
    """Ratios to the best upstream path of the boot: the highest rate, the fewest events."""

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

    def test_best_rate_is_the_highest(self):
        self.assertEqual(self.e["best_upstream"]["completions_per_s"][0], "upstream-unbound")
        self.assertAlmostEqual(self.e["ratio_to_best_upstream"]["completions_per_s"], 0.75)
        self.assertAlmostEqual(self.e["ratio_to_upstream_wq"]["completions_per_s"], 1.5)

    def test_best_events_are_the_fewest(self):
        self.assertEqual(self.e["best_upstream"]["events_per_1k"], ["upstream-unbound", 400.0])
        # ocq-strict's own counters: 10 events per 1500 completions
        self.assertAlmostEqual(self.e["ratio_to_best_upstream"]["events_per_1k"],
                               (10000 / 1500) / 400)

    def test_table_has_the_columns(self):
        head = [x for x in aggregate.table("k:", self.res).splitlines()
                if x.startswith("path")][0]
        self.assertEqual(head.split().count("best"), 3)


class OpenLoop(unittest.TestCase):
    """rxe_open_slow: its drops are summed and shown, its events compared with upstream's."""

    def setUp(self):
        recs = []
        for rep_ in range(3):
            for p, n in (("upstream-wq", 1000), ("ocq-strict", 1000)):
                r = rec(p, rep_, 0, n)
                r["scenario"] = "rxe_open_slow"
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
        self.assertAlmostEqual(self.e["ratio_to_upstream_wq"]["events_per_1k"], 0.02)
        self.assertEqual(self.e["best_upstream"]["events_per_1k"], ["upstream-wq", 500.0])

    def test_tables_show_drops(self):
        lines = aggregate.table("k:", self.res).splitlines()
        head = [x for x in lines if x.startswith("path")][0].split()
        row = [x for x in lines if x.startswith("ocq-strict")][0].split()
        # the last three columns: drop, backlog, fail
        self.assertEqual(head[-3:], ["drop", "backlog", "fail"])
        self.assertEqual(row[-3:], ["6", "3", "0"])
        rst = aggregate.rst_table("rxe_open_slow", self.res["rxe_open_slow"], "wq")
        self.assertIn("drop backlog", rst.splitlines()[3])


if __name__ == "__main__":
    unittest.main()
