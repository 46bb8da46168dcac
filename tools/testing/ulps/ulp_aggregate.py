#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""ulp_aggregate.py - make ulp-bench's host side: records in, results, tables and plot out.

Usage: ulp_aggregate.py --kernel KVER --smp N --repeats N --out DIR RECORDS.jsonl

Each input line is one record of tools/testing/ulps/guest-ulp-bench.sh.  Per ULP, pass
and variant every metric is computed per run, then reduced to the median (the figure
shown) with min and max over the repeats; a pass with I/O errors enters no median and
is counted in failed_runs.  Ratios are ocq's medians over stock's; paired_ratio is the
median of the per-repeat ratios.  Stock's events and runs per 1k completions come from
its one traced run ("count" records), ocq's from its own counters in every run.
Writes DIR/results.json, DIR/table.txt (also printed), DIR/table.rst and, when
gnuplot is there, DIR/plot.svg.
"""
import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys

ULPS = ["nvme", "nfs"]
PASSES = ["seq_write", "seq_read", "rand_read"]
VARIANTS = ["stock", "ocq"]
METRICS = ["mb_s", "iops", "p50_us", "p99_us", "cpu_us_per_op", "events_per_1k",
           "runs_per_1k"]
RATIOS = ["mb_s", "iops", "p99_us", "cpu_us_per_op", "events_per_1k"]


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
    if rec["variant"] == "ocq":
        m["events_per_1k"] = per1k(o.get("events"), o.get("completions"))
        m["runs_per_1k"] = per1k(o.get("runs"), o.get("completions"))
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
    return out


def ratio(a, b):
    if a is None or b is None or b == 0:
        return None
    return a / b


def paired(runs, base_runs):
    by_rep = {b["repeat"]: b for b in base_runs if not b["failed"]}
    out = {}
    for k in RATIOS:
        vals = [ratio(r.get(k), by_rep[r["repeat"]].get(k)) for r in runs
                if r["repeat"] in by_rep and not r["failed"]]
        vals = [v for v in vals if v is not None]
        out[k] = statistics.median(vals) if vals else None
    return out


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
                by_v[v] = e
            if not by_v:
                continue
            base = by_v.get("stock")
            for v, e in by_v.items():
                e["ratio_to_stock"] = {k: ratio(e.get(k), base.get(k)) if base else None
                                       for k in RATIOS}
                e["paired_ratio"] = paired(runs.get((ulp, p, v), []),
                                           runs.get((ulp, p, "stock"), []))
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


HEAD = ["ulp", "pass", "variant", "MB/s", "x stock", "paired", "IOPS", "x stock",
        "p50 us", "p99 us", "x stock", "CPU us/op", "x stock", "ev/1k", "x stock",
        "runs/1k", "errors"]


def rows(res):
    out = []
    for ulp, by_p in res.items():
        for p, by_v in by_p.items():
            for v, e in by_v.items():
                r, pr = e["ratio_to_stock"], e["paired_ratio"]
                tput = "mb_s" if p.startswith("seq") else "iops"
                out.append([ulp, p, v, fmt(e.get("mb_s")), fmt(r.get("mb_s"), 2),
                            fmt(pr.get(tput), 2), fmt(e.get("iops"), 0),
                            fmt(r.get("iops"), 2), fmt(e.get("p50_us"), 0),
                            fmt(e.get("p99_us"), 0), fmt(r.get("p99_us"), 2),
                            fmt(e.get("cpu_us_per_op"), 0), fmt(r.get("cpu_us_per_op"), 2),
                            fmt(e.get("events_per_1k")), fmt(r.get("events_per_1k"), 2),
                            fmt(e.get("runs_per_1k")), fmt(e.get("errors"))])
    return out


def text_table(title, res):
    body = rows(res)
    w = [max(len(str(x[i])) for x in [HEAD] + body) for i in range(len(HEAD))]
    line = lambda x: " ".join(str(v).ljust(n) if i < 3 else str(v).rjust(n)
                              for i, (v, n) in enumerate(zip(x, w)))
    return "\n".join([title,
                      "x stock: ratio of the medians to stock's; paired: median of the"
                      " per-repeat ratios (MB/s for seq_*, IOPS for rand_read);",
                      "CPU us/op: all guest CPUs' busy time per operation; stock's ev/1k"
                      " and runs/1k from a separate traced run", "",
                      line(HEAD)] + [line(x) for x in body] + [""])


def rst_table(title, res):
    body = rows(res)
    w = [max(len(str(x[i])) for x in [HEAD] + body) for i in range(len(HEAD))]
    rule = " ".join("=" * n for n in w)
    line = lambda x: " ".join(str(v).ljust(n) for v, n in zip(x, w)).rstrip()
    return "\n".join(["**%s**" % title, "", rule, line(HEAD), rule] +
                     [line(x) for x in body] + [rule, ""])


def plot(res, out, title):
    """ocq's throughput over stock's per ULP and pass (median ratio), one bar each."""
    if not shutil.which("gnuplot"):
        print("ulp_aggregate: no gnuplot: no plot", file=sys.stderr)
        return
    dat = os.path.join(out, "plot.dat")
    n = 0
    with open(dat, "w") as f:
        for ulp, by_p in res.items():
            for p, by_v in by_p.items():
                e = by_v.get("ocq")
                k = "mb_s" if p.startswith("seq") else "iops"
                v = e and e["ratio_to_stock"].get(k)
                if v:
                    f.write("%s/%s %g\n" % (ulp, p, v))
                    n += 1
    if not n:
        print("ulp_aggregate: no ratio to plot", file=sys.stderr)
        return
    gp = """set terminal svg size 900,500 dynamic font 'Sans,10' noenhanced
set output 'plot.svg'
set title '{title}: ocq over stock (median MB/s for seq_*, IOPS for rand_read)'
set style fill solid 0.9 border -1
set boxwidth 0.6
set yrange [0:*]
set grid ytics
set xtics rotate by -20
unset key
plot 'plot.dat' using 0:2:xtic(1) with boxes lc rgb '#1b9e77', 1 lc rgb '#d95f02'
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
    doc = {"kernel": a.kernel, "smp": a.smp, "repeats": a.repeats, "ulps": res}
    with open(os.path.join(a.out, "results.json"), "w") as f:
        json.dump(doc, f, indent=1)
        f.write("\n")
    title = "%s -smp %d, %d repeat(s)" % (a.kernel, a.smp, a.repeats)
    txt = text_table(title, res)
    with open(os.path.join(a.out, "table.txt"), "w") as f:
        f.write(txt + "\n")
    print(txt)
    with open(os.path.join(a.out, "table.rst"), "w") as f:
        f.write(rst_table(title, res))
    plot(res, a.out, a.kernel)
    return 0


if __name__ == "__main__":
    sys.exit(main())
