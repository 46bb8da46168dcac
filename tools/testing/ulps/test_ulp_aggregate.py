#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""test_ulp_aggregate.py - unit test of ulp_aggregate.py: medians, pairs, counters.

Three repeats of one pass for stock and ocq (one of ocq's with an I/O error) and a
traced count run of stock: the failed pass enters no median and no pair, the paired
ratio is ocq's over stock's in the same repeat with its bootstrap interval (two
pairs: the interval is their range), stock's events per 1k come from its count run,
and rxe0's counters are summed, failed pass included.  One repeat (QUICK=1): a ratio
and no interval.  RDS: both variants' events and runs per 1k from RDS's own
counters, messages/s the headline figure.
"""
import os
import sys
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import ulp_aggregate  # noqa: E402


def rec(v, rep, mb_s, errors=0, ops=100, retry=0, rnr=0):
    return {"ulp": "nvme", "variant": v, "repeat": rep, "pass": "seq_read",
            "busy_ns": 10**8,
            "io": {"ops": ops, "errors": errors, "seconds": 1, "iops": ops,
                   "mb_s": mb_s, "p50_us": 100, "p99_us": 400},
            "ocq": {"events": 20, "runs": 40, "completions": 200},
            "rxe": {"sent_pkts": 1000, "completer_retry_err": retry,
                    "rcvd_rnr_err": rnr, "send_rnr_err": 0, "out_of_seq_request": 1,
                    "duplicate_request": 0, "rcvd_seq_err": 0},
            "env": {"steal": 0, "ticks": 200, "load0": 1.0, "load1": 1.5}}


class Aggregate(unittest.TestCase):
    def setUp(self):
        recs = [rec("stock", r, 10) for r in (1, 2, 3)]
        recs += [rec("ocq", 1, 12), rec("ocq", 2, 14, retry=2),
                 rec("ocq", 3, 1, errors=2, retry=5, rnr=1)]
        recs.append({"ulp": "nvme", "variant": "stock", "repeat": 0, "pass": "seq_read",
                     "io": {"ops": 100}, "count": {"events": 50, "runs": 60,
                                                   "completions": 250}})
        self.res = ulp_aggregate.aggregate(recs)["nvme"]["seq_read"]

    def test_failed_pass_left_out(self):
        e = self.res["ocq"]
        self.assertEqual((e["samples"], e["failed_runs"], e["errors"]), (2, 1, 2))
        self.assertEqual(e["mb_s"], 13)

    def test_paired_ratio_and_interval(self):
        e = self.res["ocq"]
        self.assertEqual(e["baseline"], "stock")
        self.assertEqual(e["metric"], "mb_s")
        # pairs 1.2 and 1.4: median 1.3; the bootstrap of two values spans both
        self.assertAlmostEqual(e["ratio"], 1.3)
        self.assertAlmostEqual(e["ci_low"], 1.2)
        self.assertAlmostEqual(e["ci_high"], 1.4)
        self.assertEqual([p["repeat"] for p in e["pairs"]], [1, 2])
        self.assertIsNone(self.res["stock"]["ratio"])

    def test_counters(self):
        self.assertAlmostEqual(self.res["stock"]["events_per_1k"], 200)
        self.assertAlmostEqual(self.res["ocq"]["events_per_1k"], 100)
        self.assertAlmostEqual(self.res["ocq"]["ratio_of_medians"]["events_per_1k"], 0.5)

    def test_rxe_counters(self):
        e = self.res["ocq"]
        self.assertEqual((e["retry"], e["rnr"], e["seq"]), (7, 1, 3))
        self.assertEqual(e["raw"]["retry"], [0, 2, 5])
        self.assertEqual(self.res["stock"]["retry"], 0)

    def test_tables(self):
        txt = ulp_aggregate.text_table("t", {"nvme": {"seq_read": self.res}})
        self.assertIn("seq_read", txt)
        self.assertIn("1.30 [1.20-1.40]", txt)


class Rds(unittest.TestCase):
    def test_rds_counters(self):
        recs = []
        for v, ev, iops in (("stock", 30, 1000), ("ocq", 15, 1100)):
            r = rec(v, 1, 1, ops=iops)
            r.update(ulp="rds", **{"pass": "msg_small"})
            r["ocq"] = {"events": 0, "runs": 0, "completions": 0}
            r["io"]["counters"] = {"ib_evt_handler_call": ev, "ib_tasklet_call": 45,
                                   "ib_rx_cq_event": 100, "ib_tx_cq_event": 50}
            recs.append(r)
        res = ulp_aggregate.aggregate(recs)["rds"]["msg_small"]
        self.assertAlmostEqual(res["stock"]["events_per_1k"], 200)
        self.assertAlmostEqual(res["stock"]["runs_per_1k"], 300)
        self.assertAlmostEqual(res["ocq"]["events_per_1k"], 100)
        self.assertAlmostEqual(res["ocq"]["ratio_of_medians"]["events_per_1k"], 0.5)
        self.assertEqual(res["ocq"]["metric"], "iops")
        self.assertAlmostEqual(res["ocq"]["ratio"], 1.1)
        self.assertIn("msg_small", ulp_aggregate.text_table("t", {"rds": {"msg_small": res}}))


class Quick(unittest.TestCase):
    def test_na(self):
        res = ulp_aggregate.aggregate([rec("stock", 1, 10), rec("ocq", 1, 9)])
        e = res["nvme"]["seq_read"]["ocq"]
        self.assertAlmostEqual(e["ratio"], 0.9)
        self.assertIsNone(e["ci_low"])
        self.assertIn("0.90 [n/a]", ulp_aggregate.text_table("t", res))


if __name__ == "__main__":
    unittest.main()
