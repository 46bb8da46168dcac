#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""test_ulp_aggregate.py - unit test of ulp_aggregate.py: medians, ratios, counters.

Three repeats of one pass for stock and ocq (one of ocq's with an I/O error) and a
traced count run of stock: the failed pass enters no median, the ratios are ocq's
over stock's, and stock's events per 1k come from its count run.
"""
import os
import sys
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import ulp_aggregate  # noqa: E402


def rec(v, rep, mb_s, errors=0, ops=100):
    return {"ulp": "nvme", "variant": v, "repeat": rep, "pass": "seq_read",
            "busy_ns": 10**8,
            "io": {"ops": ops, "errors": errors, "seconds": 1, "iops": ops,
                   "mb_s": mb_s, "p50_us": 100, "p99_us": 400},
            "ocq": {"events": 20, "runs": 40, "completions": 200}}


class Aggregate(unittest.TestCase):
    def setUp(self):
        recs = [rec("stock", r, 10) for r in (1, 2, 3)]
        recs += [rec("ocq", 1, 12), rec("ocq", 2, 14), rec("ocq", 3, 1, errors=2)]
        recs.append({"ulp": "nvme", "variant": "stock", "repeat": 0, "pass": "seq_read",
                     "io": {"ops": 100}, "count": {"events": 50, "runs": 60,
                                                   "completions": 250}})
        self.res = ulp_aggregate.aggregate(recs)["nvme"]["seq_read"]

    def test_failed_pass_left_out(self):
        e = self.res["ocq"]
        self.assertEqual((e["samples"], e["failed_runs"], e["errors"]), (2, 1, 2))
        self.assertEqual(e["mb_s"], 13)

    def test_ratios(self):
        self.assertAlmostEqual(self.res["ocq"]["ratio_to_stock"]["mb_s"], 1.3)
        self.assertAlmostEqual(self.res["ocq"]["paired_ratio"]["mb_s"], 1.3)

    def test_counters(self):
        self.assertAlmostEqual(self.res["stock"]["events_per_1k"], 200)
        self.assertAlmostEqual(self.res["ocq"]["events_per_1k"], 100)
        self.assertAlmostEqual(self.res["ocq"]["ratio_to_stock"]["events_per_1k"], 0.5)

    def test_tables(self):
        txt = ulp_aggregate.text_table("t", {"nvme": {"seq_read": self.res}})
        self.assertIn("seq_read", txt)
        self.assertIn("1.30", txt)


if __name__ == "__main__":
    unittest.main()
