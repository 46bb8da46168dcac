#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""ulp_aggregate.py - make ulp-bench's host side: records in, results, tables and plot out.

Usage: ulp_aggregate.py --kernel KVER --smp N --repeats N --out DIR [--host HOST.json]
                        RECORDS.jsonl

Each input line is one record of tools/testing/ulps/guest-ulp-bench.sh.  Per ULP, pass
and variant every metric is computed per run, then reduced to the median (the figure
shown) with min and max over the repeats; a pass with I/O errors enters no median and
no pair, and is counted in failed_runs.  The converted variant's baseline is stock,
fixed before the run (BASELINE): the same ULP, run right before it in the same
repeat, with the same poll contexts (the drop-in keeps the ULP's).  The headline
figure is the paired ratio, the median of the per-repeat ratios of MB/s (seq_*) or
IOPS (rand_read; for RDS's msg_* passes messages/s), with its 95 % bootstrap
interval (tools/testing/bench/paired.py); p50, p99 and CPU per operation get the
same.  Stock's events and runs per 1k completions come from its one traced run
("count" records), ocq's from its own counters in every run: their ratio is of the
medians, without an interval.  RDS keeps its own CQs and tasklets in both variants
and counts their events, runs and completions itself (rds-io's "counters"): both
variants' figures come from those, in every run.  rxe0's
hw_counters over each pass are summed per ULP, pass and variant (retry: the
requester's retransmissions; rnr: RNR NAKs sent and received; seq: out-of-sequence
and duplicate requests, sequence-error NAKs).  Writes DIR/results.json, DIR/table.txt
(also printed), DIR/table.rst and, when gnuplot is there, DIR/plot.svg.
"""
import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                "..", "bench"))
import paired  # noqa: E402
from aggregate import host_summary, guest_summary, env_metrics  # noqa: E402

ULPS = ["nvme", "nfs", "rds"]
PASSES = ["seq_write", "seq_read", "rand_read", "msg_small", "msg_large"]
VARIANTS = ["stock", "ocq"]
# the pairing table: each variant's baseline, run in the same repeat
BASELINE = {"stock": None, "ocq": "stock"}
METRICS = ["mb_s", "iops", "p50_us", "p99_us", "cpu_us_per_op", "events_per_1k",
           "runs_per_1k"]
# measured in every pass of both variants: paired, with intervals
PAIRED = ["mb_s", "iops", "p50_us", "p99_us", "cpu_us_per_op"]
# stock's come from one traced run: ratio of the medians
MEDIAN_RATIOS = ["events_per_1k", "runs_per_1k"]
# rxe0's hw_counters, summed into three figures
RXE = {"retry": ["completer_retry_err"],
       "rnr": ["rcvd_rnr_err", "send_rnr_err"],
       "seq": ["out_of_seq_request", "duplicate_request", "rcvd_seq_err"]}


def headline_metric(p):
    """The throughput figure of a pass: MB/s for sequential passes, else IOPS (for
    RDS's msg_* passes, messages/s)."""
    return "mb_s" if p.startswith("seq") else "iops"


def per1k(n, completions):
    if n is None or not completions:
        return None
    return 1000.0 * n / completions


def run_metrics(rec):
    """The metrics of one timed pass."""
    io = rec["io"]
    ops = io.get("ops") or 0
    m = {k: io.get(k) for k in ("mb_s", "iops", "p50_us", "p99_us")}
    m["cpu_us_per_op"] = rec["busy_ns"] / ops / 1e3 if ops else None
    o = rec.get("ocq", {})
    rds = io.get("counters")
    if rds is not None:
        # RDS's CQ events, tasklet runs and completions, counted by RDS (rds-io)
        comp = rds.get("ib_rx_cq_event", 0) + rds.get("ib_tx_cq_event", 0)
        m["events_per_1k"] = per1k(rds.get("ib_evt_handler_call", 0), comp)
        m["runs_per_1k"] = per1k(rds.get("ib_tasklet_call", 0), comp)
    elif rec["variant"] == "ocq":
        m["events_per_1k"] = per1k(o.get("events"), o.get("completions"))
        m["runs_per_1k"] = per1k(o.get("runs"), o.get("completions"))
    hw = rec.get("rxe")
    if hw is not None:
        for k, names in RXE.items():
            m[k] = sum(hw.get(n, 0) for n in names)
    m.update(env_metrics(rec))
    m["errors"] = io.get("errors", 1)
    m["failed"] = m["errors"] != 0 or not ops
    m["repeat"] = rec["repeat"]
    return m


def reduce_runs(runs):
    good = [r for r in runs if not r["failed"]]
    out = {"samples": len(good), "failed_runs": len(runs) - len(good),
           "errors": sum(r["errors"] for r in runs), "min": {}, "max": {}}
    for k in METRICS:
        vals = [r[k] for r in good if r.get(k) is not None]
        out[k] = statistics.median(vals) if vals else None
        if vals:
            out["min"][k], out["max"][k] = min(vals), max(vals)
    # rxe's counters of every pass, failed ones too: a retry storm may be why
    for k in RXE:
        vals = [r[k] for r in runs if r.get(k) is not None]
        out[k] = sum(vals) if vals else None
    order = sorted(runs, key=lambda r: r["repeat"])
    raw = {"repeat": [r["repeat"] for r in order],
           "failed": [r["failed"] for r in order]}
    for k in METRICS + list(RXE) + ["guest_steal_pct"]:
        if any(r.get(k) is not None for r in order):
            raw[k] = [r.get(k) for r in order]
    out["raw"] = raw
    return out


def ratio(a, b):
    return paired.ratio(a, b)


def add_pairs(e, p, runs, base_runs, base):
    """The entry's paired ratios against its baseline's runs (and medians)."""
    head = headline_metric(p)
    e["paired"] = {k: paired.summary(paired.pairs(runs, base_runs, k)) for k in PAIRED}
    h = e["paired"][head]
    e.update({"metric": head, "ratio": h["ratio"], "ci_low": h["ci_low"],
              "ci_high": h["ci_high"], "n_pairs": h["n"],
              "pairs": paired.pairs(runs, base_runs, head)})
    e["ratio_of_medians"] = {k: ratio(e.get(k), base.get(k))
                             for k in PAIRED + MEDIAN_RATIOS}


def aggregate(records):
    """{ulp: {pass: {variant: entry}}}."""
    runs, counted = {}, {}
    for rec in records:
        key = (rec["ulp"], rec["pass"], rec["variant"])
        if "count" in rec:
            counted[key] = rec["count"]
        else:
            runs.setdefault(key, []).append(run_metrics(rec))
    res = {}
    for ulp in ULPS:
        for p in PASSES:
            by_v = {}
            for v in VARIANTS:
                if (ulp, p, v) not in runs:
                    continue
                e = reduce_runs(runs[(ulp, p, v)])
                c = counted.get((ulp, p, v))
                if c and c.get("overrun"):
                    e["counters_from"] = "traced run lost %d events: none" % c["overrun"]
                elif c:
                    e["events_per_1k"] = per1k(c["events"], c["completions"])
                    e["runs_per_1k"] = per1k(c["runs"], c["completions"])
                    e["counters_from"] = "rdma_core tracepoints, separate run"
                e["baseline"] = BASELINE[v]
                by_v[v] = e
            if not by_v:
                continue
            for v, e in by_v.items():
                base = by_v.get(e["baseline"]) if e["baseline"] else None
                if base is None:
                    e.update({"metric": headline_metric(p), "ratio": None,
                              "ci_low": None, "ci_high": None, "n_pairs": 0,
                              "pairs": [], "paired": {}, "ratio_of_medians": {}})
                    continue
                add_pairs(e, p, runs[(ulp, p, v)], runs[(ulp, p, e["baseline"])], base)
            res.setdefault(ulp, {})[p] = by_v
    return res


def fmt(v, nd=1):
    if v is None:
        return "-"
    if isinstance(v, int):
        return str(v)
    if abs(v) >= 1000:
        return "%.0f" % v
    return "%.*f" % (nd, v)


HEAD = ["ulp", "pass", "variant", "MB/s", "IOPS", "x stock [95% CI]", "p50 us",
        "p99 us", "x stock", "CPU us/op", "x stock", "ev/1k", "x stock", "runs/1k",
        "retry", "rnr", "seq", "errors"]


def rows(res):
    out = []
    for ulp, by_p in res.items():
        for p, by_v in by_p.items():
            for v, e in by_v.items():
                pr = lambda k: fmt(e["paired"].get(k, {}).get("ratio"), 2)
                rm = e["ratio_of_medians"]
                out.append([ulp, p, v, fmt(e.get("mb_s")), fmt(e.get("iops"), 0),
                            paired.fmt_ci(e) if e["ratio"] is not None else "-",
                            fmt(e.get("p50_us"), 0), fmt(e.get("p99_us"), 0),
                            pr("p99_us"), fmt(e.get("cpu_us_per_op"), 0),
                            pr("cpu_us_per_op"), fmt(e.get("events_per_1k")),
                            fmt(rm.get("events_per_1k"), 2), fmt(e.get("runs_per_1k")),
                            fmt(e.get("retry")), fmt(e.get("rnr")), fmt(e.get("seq")),
                            fmt(e.get("errors"))])
    return out


LEGEND = ["x stock [95% CI]: median over the repeats of the converted variant's MB/s"
          " (seq_*), IOPS (rand_read) or messages/s (msg_*)",
          "over stock's in the same repeat, with its percentile bootstrap interval (n/a"
          " with fewer than 2 repeats);",
          "x stock after p99 and CPU us/op: the same paired median; after ev/1k: ratio of"
          " the medians (stock's",
          "ev/1k and runs/1k from a separate traced run, RDS's from its own counters in"
          " every run); CPU us/op:",
          "all guest CPUs' busy time per operation (per message for RDS);",
          "retry, rnr, seq: rxe0's retransmissions, RNR NAKs and sequence errors, summed"
          " over the repeats"]


def env_lines(doc):
    h, g = doc.get("host") or {}, doc.get("guest") or {}
    b = (h.get("before") or {}).get("loadavg")
    a = (h.get("after") or {}).get("loadavg")
    return ["host load average %s before, %s after (1-min max %s), steal %s %%; guest "
            "steal %s %%, 1-min load max %s" % (
                " ".join(map(str, b)) if b else "-", " ".join(map(str, a)) if a else "-",
                fmt(h.get("load1_max"), 2), fmt(h.get("steal_pct"), 2),
                fmt(g.get("steal_pct"), 2), fmt(g.get("load1_max"), 2))]


def text_table(title, res, env=()):
    body = rows(res)
    w = [max(len(str(x[i])) for x in [HEAD] + body) for i in range(len(HEAD))]
    line = lambda x: " ".join(str(v).ljust(n) if i < 3 else str(v).rjust(n)
                              for i, (v, n) in enumerate(zip(x, w)))
    return "\n".join([title] + LEGEND + list(env) + ["", line(HEAD)] +
                     [line(x) for x in body] + [""])


def rst_table(title, res):
    body = rows(res)
    w = [max(len(str(x[i])) for x in [HEAD] + body) for i in range(len(HEAD))]
    rule = " ".join("=" * n for n in w)
    line = lambda x: " ".join(str(v).ljust(n) for v, n in zip(x, w)).rstrip()
    return "\n".join(["**%s**" % title, "", rule, line(HEAD), rule] +
                     [line(x) for x in body] + [rule, ""])


def plot(res, out, title):
    """ocq's throughput over stock's per ULP and pass (paired median), one bar each."""
    if not shutil.which("gnuplot"):
        print("ulp_aggregate: no gnuplot: no plot", file=sys.stderr)
        return
    dat = os.path.join(out, "plot.dat")
    n = 0
    with open(dat, "w") as f:
        for ulp, by_p in res.items():
            for p, by_v in by_p.items():
                e = by_v.get("ocq")
                if e and e["ratio"]:
                    lo = e["ci_low"] if e["ci_low"] is not None else e["ratio"]
                    hi = e["ci_high"] if e["ci_high"] is not None else e["ratio"]
                    f.write("%s/%s %g %g %g\n" % (ulp, p, e["ratio"], lo, hi))
                    n += 1
    if not n:
        print("ulp_aggregate: no ratio to plot", file=sys.stderr)
        return
    gp = """set terminal svg size 900,500 dynamic font 'Sans,10' noenhanced
set output 'plot.svg'
set title '{title}: ocq over stock (paired median, 95 % interval; MB/s for seq_*, IOPS for rand_read, messages/s for msg_*)'
set style fill solid 0.9 border -1
set boxwidth 0.6
set yrange [0:*]
set grid ytics
set xtics rotate by -20
unset key
plot 'plot.dat' using 0:2:xtic(1) with boxes lc rgb '#1b9e77', \\
     'plot.dat' using 0:2:3:4 with yerrorbars lc rgb '#000000' pt 0, \\
     1 lc rgb '#d95f02'
""".format(title=title)
    with open(os.path.join(out, "plot.gp"), "w") as f:
        f.write(gp)
    r = subprocess.run(["gnuplot", "plot.gp"], cwd=out, capture_output=True, text=True)
    if r.returncode:
        print("ulp_aggregate: gnuplot failed: " + r.stderr.strip(), file=sys.stderr)
    else:
        print("plot: " + os.path.join(out, "plot.svg"))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--kernel", required=True)
    ap.add_argument("--smp", type=int, required=True)
    ap.add_argument("--repeats", type=int, required=True)
    ap.add_argument("--out", required=True)
    ap.add_argument("--host", help="hostenv.sh's JSON of the boot")
    ap.add_argument("records")
    a = ap.parse_args()
    recs = []
    with open(a.records) as f:
        for n, line in enumerate(f, 1):
            try:
                recs.append(json.loads(line))
            except ValueError:
                print("ulp_aggregate: %s:%d: not a record" % (a.records, n), file=sys.stderr)
    res = aggregate(recs)
    doc = {"kernel": a.kernel, "smp": a.smp, "repeats": a.repeats,
           "paired": paired.method(), "host": None,
           "guest": guest_summary([r for r in recs if "count" not in r]), "ulps": res}
    if a.host:
        with open(a.host) as f:
            doc["host"] = host_summary(json.load(f))
    with open(os.path.join(a.out, "results.json"), "w") as f:
        json.dump(doc, f, indent=1)
        f.write("\n")
    title = "%s -smp %d, %d repeat(s)" % (a.kernel, a.smp, a.repeats)
    txt = text_table(title, res, env_lines(doc))
    with open(os.path.join(a.out, "table.txt"), "w") as f:
        f.write(txt + "\n")
    print(txt)
    with open(os.path.join(a.out, "table.rst"), "w") as f:
        f.write(rst_table(title, res))
    plot(res, a.out, a.kernel)
    return 0


if __name__ == "__main__":
    sys.exit(main())
