#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""summary.py - the measured tables of Documentation/performance.rst, from results.json.

Usage: summary.py [--bench B.json] [--ulp U.json] --update DOC.rst
       summary.py [--bench B.json] [--ulp U.json] --check DOC.rst
       summary.py [--bench B.json] [--ulp U.json]            (prints the blocks)

B.json is make bench's results.json, U.json make ulp-bench's; by default the copies
kept next to the page (Documentation/performance/bench.json, ulp-bench.json).  The
page holds two generated blocks, each between the comment lines
".. generated: NAME begin" and ".. generated: NAME end":

  summary   one table: per ULP shape, the mode and attributes measured for it, the
            workload, the paired ratio to its baseline with its 95 % interval, and
            what the interval says (ahead: its low end above 1; behind: its high end
            below 1; level: it holds 1; n/a: no interval, fewer than 2 repeats)
  tables    every scenario of the bench and every pass of the ULP bench, as the
            aggregation prints them

--update rewrites both blocks in place; --check exits 1 when the page differs from
what the JSON gives (make host-tests runs it), so the page cannot drift from the
measurement it quotes.
"""
import argparse
import json
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.join(HERE, "..", "ulps"))
import aggregate  # noqa: E402
import paired  # noqa: E402
import ulp_aggregate  # noqa: E402

DOC_DIR = os.path.join(HERE, "..", "..", "..", "Documentation")
DEFAULT_BENCH = os.path.join(DOC_DIR, "performance", "bench.json")
DEFAULT_ULP = os.path.join(DOC_DIR, "performance", "ulp-bench.json")

# (ULP shape, what it uses, source): source is ("bench", scenario, path[, smp[,
# metric]]) (smp None: the bench's own; metric: the headline by default) or ("ulp",
# ulp, pass).  The shapes and the attributes are the guidance; the figures
# and the reading come from the JSON.
SHAPES = [
    ("request/reply, cheap done(), one CQ for a few connections",
     "``IB_OCQ_STRICT`` (the defaults of ``ib_ocq_alloc_cq()``)",
     ("bench", "rxe_steady", "ocq-strict")),
    ("one request in flight (latency-bound)",
     "``IB_OCQ_STRICT``, no ``defer_usecs``",
     ("bench", "rxe_latency", "ocq-strict")),
    ("bulk RDMA READ/WRITE",
     "``IB_OCQ_STRICT``",
     ("bench", "rxe_bulk", "ocq-strict")),
    ("slow done(), the consumer resumes the CQ",
     "``IB_OCQ_STRICT`` + ``IB_OCQ_POSTPONE_ARM``",
     ("bench", "rxe_slow_consumer", "ocq-strict")),
    ("arrivals paced by the sender, slow done()",
     "``defer_usecs`` 100 + ``IB_OCQ_DEFER_DIM``",
     ("bench", "rxe_open_slow", "ocq-dim")),
    ("under load, events cost",
     "``defer_usecs`` 100 + ``IB_OCQ_DEFER_DIM``",
     ("bench", "rxe_steady", "ocq-dim")),
    ("the ULP polls its CQ itself",
     "``suspend_usecs`` 100 + ``ib_ocq_busy_poll()``",
     ("bench", "rxe_steady", "ocq-busy")),
    ("heavy done(), several connections on one CQ",
     "``IB_OCQ_FLOW``",
     ("bench", "rxe_heavy_flows", "ocq-flow")),
    ("heavy done(), several connections on one CQ, 4 CPUs",
     "``IB_OCQ_FLOW``",
     ("bench", "rxe_heavy_flows", "ocq-flow", "4")),
    ("pooled CQs, one slow QP among light ones (light QPs' rate)",
     "``ib_cq_pool_get()`` through the drop-in (``IB_OCQ_FLOW``)",
     ("bench", "rxe_pool", "ocq-pool")),
    ("pooled CQs, one slow QP among light ones (the slow QP's rate)",
     "``ib_cq_pool_get()`` through the drop-in (``IB_OCQ_FLOW``)",
     ("bench", "rxe_pool", "ocq-pool", None, "heavy_per_s")),
    ("NVMe-oF, sequential writes (1 MiB)",
     "``<rdma/ib_ocq_dropin.h>`` in nvme-rdma, nvmet-rdma",
     ("ulp", "nvme", "seq_write")),
    ("NVMe-oF, sequential reads (1 MiB)",
     "``<rdma/ib_ocq_dropin.h>`` in nvme-rdma, nvmet-rdma",
     ("ulp", "nvme", "seq_read")),
    ("NVMe-oF, random reads (4 KiB, 4 threads)",
     "``<rdma/ib_ocq_dropin.h>`` in nvme-rdma, nvmet-rdma",
     ("ulp", "nvme", "rand_read")),
    ("NFS/RDMA, sequential writes (1 MiB)",
     "``<rdma/ib_ocq_dropin.h>`` in rpcrdma",
     ("ulp", "nfs", "seq_write")),
    ("NFS/RDMA, sequential reads (1 MiB)",
     "``<rdma/ib_ocq_dropin.h>`` in rpcrdma",
     ("ulp", "nfs", "seq_read")),
    ("NFS/RDMA, random reads (4 KiB, 4 threads)",
     "``<rdma/ib_ocq_dropin.h>`` in rpcrdma",
     ("ulp", "nfs", "rand_read")),
]

METRIC_NAME = {"completions_per_s": "compl/s", "mb_s": "MB/s", "iops": "IOPS",
               "heavy_per_s": "slow QP's receives/s"}


def reading(e):
    """What the interval of @e's paired ratio says."""
    if e.get("ratio") is None:
        return "not measured"
    if e.get("ci_low") is None:
        return "n/a"
    if e["ci_low"] > 1:
        return "ahead"
    if e["ci_high"] < 1:
        return "behind"
    return "level"


def lookup(src, bench, ulp):
    """(entry, workload text, paired summary) of a SHAPES source, or None."""
    if src[0] == "bench":
        smp = src[3] if len(src) > 3 and src[3] else str(bench and bench["smp"])
        e = bench and bench["by_smp"].get(smp, {}).get(src[1], {}).get(src[2])
        if not e:
            return None
        metric = src[4] if len(src) > 4 else aggregate.HEADLINE
        where = "``%s`` %s / %s" % (src[1], src[2], e.get("baseline"))
        if len(src) > 3 and src[3]:
            where += ", -smp %s" % smp
        return e, where, metric, e.get("paired", {}).get(metric)
    e = ulp and ulp["ulps"].get(src[1], {}).get(src[2], {}).get("ocq")
    if not e:
        return None
    where = "``%s`` ``%s`` ocq / stock" % (src[1], src[2])
    return e, where, e.get("metric"), e.get("paired", {}).get(e.get("metric"))


def rst_grid(head, rows):
    w = [max(len(str(x[i])) for x in [head] + rows) for i in range(len(head))]
    rule = " ".join("=" * n for n in w)
    line = lambda x: " ".join(str(v).ljust(n) for v, n in zip(x, w)).rstrip()
    return [rule, line(head), rule] + [line(x) for x in rows] + [rule]


def run_line(name, doc):
    """Where a JSON's figures come from: kernel, repeats, host load."""
    if not doc:
        return "%s: not measured" % name
    h = doc.get("host") or {}
    if "before" not in h:
        h = h.get(str(doc.get("smp")), {})
    load = (h.get("before") or {}).get("loadavg")
    return "%s: %s, %d repeats, -smp %s; host load average %s at the start, " \
        "steal %s %%" % (name, doc["kernel"], doc["repeats"], doc["smp"],
                         load[0] if load else "-",
                         aggregate.fmt(h.get("steal_pct"), 2))


def summary_block(bench, ulp):
    rows = []
    for shape, use, src in SHAPES:
        got = lookup(src, bench, ulp)
        if not got or not got[3]:
            rows.append([shape, use, "-", "-", "not measured", "-"])
            continue
        e, where, metric, s = got
        ev = e.get("ratio_of_medians", {}).get("events_per_1k")
        rows.append([shape, use, where, "%s %s" % (METRIC_NAME.get(metric, metric),
                                                   paired.fmt_ci(s)),
                     reading(s), aggregate.fmt(ev, 2)])
    head = ["ULP shape", "use", "workload: path / baseline", "ratio [95 % CI]",
            "reading", "ev/1k ratio"]
    out = ["Measured by ``make bench`` and ``make ulp-bench`` (\"Method\" below):", ""]
    for name, doc in (("make bench", bench), ("make ulp-bench", ulp)):
        out.append("- " + run_line(name, doc))
    out.append("")
    return out + rst_grid(head, rows)


def tables_block(bench, ulp):
    out = []
    if bench:
        for smp, scen in bench["by_smp"].items():
            for s, by_path in scen.items():
                title = "%s, %s, -smp %s" % (bench["kernel"], s, smp)
                out += aggregate.rst_table(title, s, by_path).splitlines() + [""]
    if ulp:
        title = "%s, make ulp-bench, -smp %s, %d repeats" % (ulp["kernel"], ulp["smp"],
                                                             ulp["repeats"])
        out += ulp_aggregate.rst_table(title, ulp["ulps"]).splitlines()
    while out and not out[-1]:
        out.pop()
    return out


def blocks(bench, ulp):
    return {"summary": summary_block(bench, ulp), "tables": tables_block(bench, ulp)}


def splice(text, gen):
    """@text with each generated block replaced; KeyError if a marker is missing."""
    lines = text.split("\n")
    for name, body in gen.items():
        begin, end = ".. generated: %s begin" % name, ".. generated: %s end" % name
        if begin not in lines or end not in lines:
            raise KeyError(name)
        i, j = lines.index(begin), lines.index(end)
        lines = lines[:i + 1] + [""] + body + [""] + lines[j:]
    return "\n".join(lines)


def load(path):
    if not path or not os.path.exists(path):
        return None
    with open(path) as f:
        return json.load(f)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--bench", default=DEFAULT_BENCH)
    ap.add_argument("--ulp", default=DEFAULT_ULP)
    g = ap.add_mutually_exclusive_group()
    g.add_argument("--update", metavar="DOC")
    g.add_argument("--check", metavar="DOC")
    a = ap.parse_args()
    gen = blocks(load(a.bench), load(a.ulp))
    doc = a.update or a.check
    if not doc:
        for name, body in gen.items():
            print("\n".join([".. generated: %s" % name, ""] + body + [""]))
        return 0
    with open(doc) as f:
        text = f.read()
    try:
        new = splice(text, gen)
    except KeyError as e:
        print("summary: %s has no generated block %s" % (doc, e.args[0]), file=sys.stderr)
        return 2
    if a.update:
        if new != text:
            with open(doc, "w") as f:
                f.write(new)
        return 0
    if new != text:
        print("summary: %s differs from what %s and %s give: run %s --update %s" %
              (doc, a.bench, a.ulp, os.path.relpath(__file__), doc), file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
