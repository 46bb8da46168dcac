#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""test_aggregate.py - unit test of aggregate.py: what enters a median.

Feeds aggregate() records of three repeats, one of which failed, and checks that the
failed run is counted but enters no median, minimum, maximum or paired ratio.
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


if __name__ == "__main__":
    unittest.main()
