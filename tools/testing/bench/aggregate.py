#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""aggregate.py - make bench's host side: records in, results.json, table and plot out.

Usage: aggregate.py --kernel KVER --smp N --repeats N --paths "p ..." --out DIR
                    RECORDS-smpN.jsonl ...

Each input line is one record of tools/testing/bench/guest-bench.sh. Per scenario and
path, every metric is computed per run, then reduced to the median (the figure shown)
with min and max over the repeats.  A run that failed (ocq-demo's exit status was not
0) never enters a median, a minimum or a maximum: it is counted in failed_runs, and its
reorders, lost and duplicated completions still add to the sums. Ratios are medians over the median of upstream-wq
in the same boot (fake_floor: over the floor; rxe_pool: over upstream-pool, whose
figures are those of its light QPs); paired_ratio is the median of the
per-repeat ratios to the base path's run of that repeat. Writes DIR/results.json,
DIR/table.txt (also printed), DIR/table.rst (the same for Documentation/performance.rst)
and, when gnuplot is there, DIR/plot.svg.
"""
import argparse
import json
import os
import re
import shutil
import statistics
import subprocess
import sys

# per-run metrics: the numeric fields of a path's entry (median, then min/max)
METRICS = [
    "completions_per_s", "ns_per_completion", "done_ns_per_completion",
    "events_per_1k", "runs_per_1k", "empty_runs_pct", "arms_per_1k",
    "repolls_per_1k", "p50_us", "p99_us", "calls_per_s",
    # rxe_pool: the light QPs on the heavy one's CQ, the others, the heavy one
    "shared_per_s", "shared_p99_us", "other_per_s", "other_p99_us", "heavy_per_s",
]
# per-run counts: summed over the repeats (any nonzero value matters); dropped and
# backlog: messages of the open loop (rxe_open_slow) that were due and not posted, for
# a full send queue, or for a pacer behind when the run stopped
COUNTS = ["reorders", "lost", "duplicated", "errors", "dropped", "backlog"]
RATIOS = ["completions_per_s", "ns_per_completion", "events_per_1k", "runs_per_1k", "p50_us"]
POOL_RATIOS = ["completions_per_s", "p99_us", "shared_per_s", "shared_p99_us"]
# the best upstream path of a boot, per metric: the highest rate, the lowest cost
UPSTREAM = ["upstream-wq", "upstream-unbound", "upstream-softirq"]
BEST = {"completions_per_s": max, "ns_per_completion": min, "events_per_1k": min,
        "runs_per_1k": min, "p50_us": min, "p99_us": min}
# the base of each scenario's ratios, and the order of its paths
POOL = "rxe_pool"
POOL_PATHS = ["upstream-pool", "ocq-pool"]


def per1k(n, completions):
    if n is None or not completions:
        return None
    return 1000.0 * n / completions


def demo_metrics(rec):
    """The metrics of one timed demo run."""
    d = rec["demo"]
    c = d.get("counters", {})
    comp = d.get("completions") or 0
    secs = (d.get("elapsed_ms") or 0) / 1000.0
    upstream = rec["path"].startswith("upstream-")
    m = {
        "completions_per_s": comp / secs if secs else None,
        "calls_per_s": d.get("calls_per_sec"),
        "ns_per_completion": rec["busy_ns"] / comp if comp else None,
        "done_ns_per_completion": c.get("cpu_ns", 0) / comp if comp else None,
        "p50_us": d["latency_p50_ns"] / 1e3 if d.get("latency_p50_ns") is not None else None,
        "p99_us": d["latency_p99_ns"] / 1e3 if d.get("latency_p99_ns") is not None else None,
    }
    # the upstream ib_cq has no counters: filled in from its counting run
    for key, src in (("events_per_1k", "events"), ("runs_per_1k", "runs"),
                     ("arms_per_1k", "arms"), ("repolls_per_1k", "repolls")):
        m[key] = None if upstream else per1k(c.get(src), comp)
    runs = c.get("runs")
    m["empty_runs_pct"] = (None if upstream or not runs
                           else 100.0 * c.get("empty_runs", 0) / runs)
    for k in COUNTS:
        m[k] = d.get(k) or 0
    return m


def count_metrics(rec):
    """events/runs/empty of an upstream path, from its traced counting run."""
    t = rec["count"]
    comp = rec["demo"].get("completions") or 0
    return {
        "events_per_1k": per1k(t["events"], comp),
        "runs_per_1k": per1k(t["runs"], comp),
        "empty_runs_pct": 100.0 * t["empty_runs"] / t["runs"] if t["runs"] else None,
        "rescheduled_runs_per_1k": per1k(t["runs_rescheduled"], comp),
        "trace_overrun": t["overrun"],
        "counted_completions": comp,
    }


def fake_metrics(rec):
    ns = rec["ns_per_completion"]
    comp = rec["completions"]
    m = {
        "completions_per_s": 1e9 / ns if ns else None,
        "ns_per_completion": ns,
    }
    if rec["path"] != "floor":
        m["events_per_1k"] = per1k(rec["events"], comp)
        m["runs_per_1k"] = per1k(rec["runs"], comp)
        m["arms_per_1k"] = per1k(rec["arms"], comp)
    return m


def pool_metrics(rec):
    """The light QPs' rate and latency of one rxe_pool run (pool_bench.c's line)."""
    d = rec["pool"]
    light, shared, other = d["light"], d["light_shared"], d["light_other"]
    return {
        "completions_per_s": light["per_s"],
        "p50_us": light["p50_us"], "p99_us": light["p99_us"],
        "shared_per_s": shared["per_s"] if shared["completions"] else None,
        "shared_p99_us": shared["p99_us"] if shared["completions"] else None,
        "other_per_s": other["per_s"] if other["completions"] else None,
        "other_p99_us": other["p99_us"] if other["completions"] else None,
        "heavy_per_s": d["heavy"]["per_s"],
        "errors": d["errors"],
    }


def reduce_runs(runs, counted):
    """Median/min/max of the metrics over the repeats of one path that succeeded."""
    good = [r for r in runs if not r["failed"]]
    out = {"samples": len(good), "failed_runs": len(runs) - len(good)}
    lo, hi = {}, {}
    for k in METRICS:
        vals = [r[k] for r in good if r.get(k) is not None]
        if vals:
            out[k] = statistics.median(vals)
            lo[k], hi[k] = min(vals), max(vals)
        elif any(k in r for r in runs):
            out[k] = None
    for k in COUNTS:
        if any(k in r for r in runs):
            out[k] = sum(r.get(k, 0) for r in runs)
    if counted:
        # one traced run: not a median, and not timed
        out.update(counted)
        out["counters_from"] = "rdma_core tracepoints, separate run"
    out["min"], out["max"] = lo, hi
    return out


def ratio(a, b):
    if a is None or b is None or b == 0:
        return None
    return a / b


def paired(runs, base_runs, keys=RATIOS):
    """Median over the repeats of the ratio to the base path's run of the same repeat.

    Adjacent runs share the host's phase, so this is steadier than a ratio of medians
    when the host is loaded.
    """
    by_rep = {b["repeat"]: b for b in base_runs if not b["failed"]}
    out = {}
    for k in keys:
        vals = [ratio(r.get(k), by_rep[r["repeat"]].get(k)) for r in runs
                if r["repeat"] in by_rep and not r["failed"]]
        vals = [v for v in vals if v is not None]
        out[k] = statistics.median(vals) if vals else None
    return out


def best_upstream(by_path):
    """{metric: [path, value]}: per metric, the best of the upstream paths present."""
    best = {}
    for k, pick in BEST.items():
        vals = [(by_path[p][k], p) for p in UPSTREAM
                if p in by_path and by_path[p].get(k) is not None]
        if vals:
            v, p = pick(vals)
            best[k] = [p, v]
    return best


def aggregate(records, paths):
    """{scenario: {path: entry}} for the records of one boot."""
    runs, counted = {}, {}
    for rec in records:
        s, p = rec["scenario"], rec["path"]
        if "count" in rec:
            counted[(s, p)] = count_metrics(rec)
        else:
            if s == "fake_floor":
                m = fake_metrics(rec)
            elif s == POOL:
                m = pool_metrics(rec)
            else:
                m = demo_metrics(rec)
            m["repeat"] = rec["repeat"]
            # a pool run whose completions failed is a failed run too
            m["failed"] = rec.get("rc", 0) != 0 or (s == POOL and m["errors"] != 0)
            runs.setdefault(s, {}).setdefault(p, []).append(m)
    res = {}
    for s, by_path in runs.items():
        order = {"fake_floor": ["floor"] + paths, POOL: POOL_PATHS}.get(s, paths)
        res[s] = {}
        for p in order:
            if p in by_path:
                res[s][p] = reduce_runs(by_path[p], counted.get((s, p)))
        bname = {"fake_floor": "floor", POOL: "upstream-pool"}.get(s, "upstream-wq")
        keys = POOL_RATIOS if s == POOL else RATIOS
        base = res[s].get(bname)
        for p, e in res[s].items():
            r = {k: ratio(e.get(k), base.get(k)) if base else None for k in keys}
            e["paired_ratio"] = paired(by_path.get(p, []), by_path.get(bname, []), keys)
            if s == "fake_floor":
                e["ratio_to_floor"] = r
                e["ratio_to_upstream_wq"] = {k: None for k in RATIOS}
            elif s == POOL:
                e["ratio_to_upstream_pool"] = r
            else:
                e["ratio_to_upstream_wq"] = r
        if s not in ("fake_floor", POOL):
            best = best_upstream(res[s])
            for e in res[s].values():
                e["best_upstream"] = best
                e["ratio_to_best_upstream"] = {
                    k: ratio(e.get(k), best[k][1]) if k in best else None for k in BEST}
    return res


def fmt(v, nd=1):
    if v is None:
        return "-"
    if isinstance(v, int):
        return str(v)
    if abs(v) >= 1000:
        return "%.0f" % v
    return "%.*f" % (nd, v)


POOL_COLS = [("path", 16), ("light/s", 8), ("[min-max]", 16), ("x base", 6),
             ("paired", 6), ("p50 us", 7), ("p99 us", 7), ("x base", 6),
             ("shared/s", 8), ("x base", 6), ("sh p99", 7), ("other/s", 8),
             ("ot p99", 7), ("heavy/s", 7), ("errors", 6), ("fail", 4)]


def pool_row(p, e):
    """One path of rxe_pool, in POOL_COLS' order."""
    r = e.get("ratio_to_upstream_pool", {})
    return [p, fmt(e.get("completions_per_s"), 0),
            "%s-%s" % (fmt(e["min"].get("completions_per_s"), 0),
                       fmt(e["max"].get("completions_per_s"), 0)),
            fmt(r.get("completions_per_s"), 2),
            fmt(e["paired_ratio"].get("completions_per_s"), 2),
            fmt(e.get("p50_us"), 0), fmt(e.get("p99_us"), 0), fmt(r.get("p99_us"), 2),
            fmt(e.get("shared_per_s"), 0), fmt(r.get("shared_per_s"), 2),
            fmt(e.get("shared_p99_us"), 0), fmt(e.get("other_per_s"), 0),
            fmt(e.get("other_p99_us"), 0), fmt(e.get("heavy_per_s"), 0),
            fmt(e.get("errors")), fmt(e.get("failed_runs"))]


def pool_table(title, by_path):
    lines = ["%s %s: 8 QP pairs on pooled CQs, pair 0's receive done() heavy;" % (title, POOL),
             "light/s, p50, p99: the 7 light pairs' receives (latency: posted to done());"
             " x base: to upstream-pool;",
             "shared: the light pairs whose receiver shares the heavy receiver's CQ; other:"
             " the rest",
             " ".join(n.rjust(w) if i else n.ljust(w) for i, (n, w) in enumerate(POOL_COLS))]
    for p, e in by_path.items():
        lines.append(" ".join(str(v).rjust(w) if i else str(v).ljust(w)
                              for i, (v, (_, w)) in enumerate(zip(pool_row(p, e),
                                                                  POOL_COLS))))
    lines.append("")
    return lines


def table(title, scen):
    cols = [("path", 16), ("compl/s", 8), ("[min-max]", 16), ("x base", 6), ("paired", 6),
            ("x best", 6), ("ns/compl", 8), ("ev/1k", 6), ("x base", 6), ("x best", 6),
            ("runs/1k", 7), ("x best", 6),
            ("empty%", 6), ("arms/1k", 7), ("repoll/1k", 9), ("p50 us", 7), ("x base", 6),
            ("p99 us", 7), ("reord", 5), ("lost", 4), ("drop", 4), ("backlog", 7), ("fail", 4)]
    lines = ["x base: ratio of the medians to upstream-wq of the same boot (fake_floor:"
             " to the floor); x best:",
             "to the best upstream path of the boot for that column (highest compl/s,"
             " lowest ev/1k, runs/1k); x base after p50: its ratio to upstream-wq's; paired:",
             "median of the ratios to the base's run of the same repeat; ns/compl: CPU"
             " time of all CPUs per",
             "completion (fake_floor: elapsed time); [min-max] of compl/s over the repeats;",
             "drop, backlog: open-loop messages due and not posted (send queue full; pacer"
             " behind at the stop);",
             "fail: runs that failed, left out of every median",
             ""]
    for s, by_path in scen.items():
        if s == POOL:
            lines += pool_table(title, by_path)
            continue
        lines.append("%s %s" % (title, s))
        lines.append(" ".join(n.rjust(w) if i else n.ljust(w)
                              for i, (n, w) in enumerate(cols)))
        for p, e in by_path.items():
            rk = "ratio_to_floor" if s == "fake_floor" else "ratio_to_upstream_wq"
            r = e.get(rk, {})
            rb = e.get("ratio_to_best_upstream", {})
            mm = "%s-%s" % (fmt(e["min"].get("completions_per_s"), 0),
                            fmt(e["max"].get("completions_per_s"), 0))
            row = [p, fmt(e.get("completions_per_s"), 0), mm,
                   fmt(r.get("completions_per_s"), 2),
                   fmt(e["paired_ratio"].get("completions_per_s"), 2),
                   fmt(rb.get("completions_per_s"), 2),
                   fmt(e.get("ns_per_completion"), 0),
                   fmt(e.get("events_per_1k")), fmt(r.get("events_per_1k"), 2),
                   fmt(rb.get("events_per_1k"), 2),
                   fmt(e.get("runs_per_1k")), fmt(rb.get("runs_per_1k"), 2),
                   fmt(e.get("empty_runs_pct"), 2),
                   fmt(e.get("arms_per_1k")), fmt(e.get("repolls_per_1k")),
                   fmt(e.get("p50_us"), 0), fmt(r.get("p50_us"), 2), fmt(e.get("p99_us"), 0),
                   fmt(e.get("reorders")), fmt(e.get("lost")), fmt(e.get("dropped")),
                   fmt(e.get("backlog")), fmt(e.get("failed_runs"))]
            lines.append(" ".join(str(v).rjust(w) if i else str(v).ljust(w)
                                  for i, (v, (_, w)) in enumerate(zip(row, cols))))
        lines.append("")
    return "\n".join(lines)


def rst_simple(title, head, rows):
    """A reStructuredText simple table."""
    w = [max(len(str(x[i])) for x in [head] + rows) for i in range(len(head))]
    rule = " ".join("=" * n for n in w)
    line = lambda x: " ".join(str(v).ljust(n) for v, n in zip(x, w)).rstrip()
    return "\n".join(["**%s**" % title, "", rule, line(head), rule] +
                     [line(x) for x in rows] + [rule, ""])


def rst_table(title, by_path, base):
    """One scenario as a reStructuredText simple table (for performance.rst)."""
    if base == "pool":
        return rst_simple(title, [n for n, _ in POOL_COLS],
                          [pool_row(p, e) for p, e in by_path.items()])
    head = ["path", "compl/s", "min-max", "x " + base, "paired", "x best", "ns/compl",
            "ev/1k", "x " + base, "x best", "runs/1k", "x best", "empty %", "p50 us",
            "x " + base, "p99 us", "reord", "lost", "drop", "backlog"]
    rows = []
    rk = "ratio_to_floor" if base == "floor" else "ratio_to_upstream_wq"
    for p, e in by_path.items():
        r = e.get(rk, {})
        rb = e.get("ratio_to_best_upstream", {})
        rows.append([p, fmt(e.get("completions_per_s"), 0),
                     "%s-%s" % (fmt(e["min"].get("completions_per_s"), 0),
                                fmt(e["max"].get("completions_per_s"), 0)),
                     fmt(r.get("completions_per_s"), 2),
                     fmt(e["paired_ratio"].get("completions_per_s"), 2),
                     fmt(rb.get("completions_per_s"), 2),
                     fmt(e.get("ns_per_completion"), 0),
                     fmt(e.get("events_per_1k")), fmt(r.get("events_per_1k"), 2),
                     fmt(rb.get("events_per_1k"), 2),
                     fmt(e.get("runs_per_1k")), fmt(rb.get("runs_per_1k"), 2),
                     fmt(e.get("empty_runs_pct"), 2),
                     fmt(e.get("p50_us"), 0), fmt(r.get("p50_us"), 2),
                     fmt(e.get("p99_us"), 0), fmt(e.get("reorders")), fmt(e.get("lost")),
                     fmt(e.get("dropped")), fmt(e.get("backlog"))])
    return rst_simple(title, head, rows)


def plot(res, paths, out):
    """Two clustered bar charts (completions/s, log scale; events per 1k)."""
    if not shutil.which("gnuplot"):
        print("aggregate: no gnuplot: no plot", file=sys.stderr)
        return
    # rxe_pool has paths of its own, and its own table
    scen = {s: v for s, v in res["scenarios"].items() if s != POOL}
    for smp, extra in res.get("by_smp", {}).items():
        if int(smp) != res["smp"]:
            for s, v in extra.items():
                if s != POOL:
                    scen["%s@smp%s" % (s, smp)] = v
    if not scen:
        print("aggregate: no scenario of the demo's paths: no plot", file=sys.stderr)
        return
    cols = ["floor"] + paths
    palette = ["#000000", "#1b9e77", "#66a61e", "#a6d854", "#d95f02", "#e6ab02",
               "#fc8d62", "#7570b3", "#e7298a", "#666666", "#a6761d"]
    colour = {p: palette[i % len(palette)] for i, p in enumerate(cols)}
    dat = os.path.join(out, "plot.dat")
    blocks = []
    with open(dat, "w") as f:
        for key in ("completions_per_s", "events_per_1k"):
            rows = {s: v for s, v in scen.items()
                    if key == "completions_per_s" or s != "fake_floor"}
            # only the paths with a value: gnuplot refuses an empty column
            have = [p for p in cols if any(v.get(p, {}).get(key) for v in rows.values())]
            blocks.append(" ".join(colour[p] for p in have))
            f.write("scenario " + " ".join(have) + "\n")
            for s, by_path in rows.items():
                vals = []
                for p in have:
                    v = by_path.get(p, {}).get(key)
                    vals.append("%g" % v if v else "NaN")
                f.write(s + " " + " ".join(vals) + "\n")
            f.write("\n\n")
    gp = """set terminal svg size 1200,900 dynamic font 'Sans,10' noenhanced
set output 'plot.svg'
set multiplot layout 2,1 title 'ocq bench: {kernel}, -smp {smp}, median of {rep} repeat(s)'
set style data histograms
set style histogram clustered gap 1
set style fill solid 0.9 border -1
set key outside right top
set xtics rotate by -20
set grid ytics
set logscale y
set ylabel 'completions/s (log)'
c0 = '{c0}'
plot for [i=2:words(c0)+1] '{dat}' index 0 using i:xtic(1) title columnheader(i) lc rgb word(c0, i-1)
unset logscale y
set yrange [0:*]
set ylabel 'completion events per 1k completions'
c1 = '{c1}'
plot for [i=2:words(c1)+1] '{dat}' index 1 using i:xtic(1) title columnheader(i) lc rgb word(c1, i-1)
unset multiplot
""".format(kernel=res["kernel"], smp=res["smp"], rep=res["repeats"], c0=blocks[0],
           c1=blocks[1], dat="plot.dat")
    gpf = os.path.join(out, "plot.gp")
    with open(gpf, "w") as f:
        f.write(gp)
    r = subprocess.run(["gnuplot", "plot.gp"], cwd=out, capture_output=True, text=True)
    if r.returncode:
        print("aggregate: gnuplot failed: " + r.stderr.strip(), file=sys.stderr)
    else:
        print("plot: " + os.path.join(out, "plot.svg"))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--kernel", required=True)
    ap.add_argument("--smp", type=int, required=True)
    ap.add_argument("--repeats", type=int, required=True)
    ap.add_argument("--paths", required=True)
    ap.add_argument("--out", required=True)
    ap.add_argument("records", nargs="+")
    a = ap.parse_args()
    paths = a.paths.split()

    res = {"kernel": a.kernel, "smp": a.smp, "repeats": a.repeats,
           "scenarios": {}, "by_smp": {}}
    for fn in a.records:
        smp = int(re.search(r"smp(\d+)", os.path.basename(fn)).group(1))
        recs = []
        with open(fn) as f:
            for n, line in enumerate(f, 1):
                try:
                    recs.append(json.loads(line))
                except ValueError:
                    print("aggregate: %s:%d: not a record" % (fn, n), file=sys.stderr)
        res["by_smp"][str(smp)] = aggregate(recs, paths)
    res["scenarios"] = res["by_smp"].get(str(a.smp), {})

    with open(os.path.join(a.out, "results.json"), "w") as f:
        json.dump(res, f, indent=1)
        f.write("\n")
    txt = []
    for smp, scen in res["by_smp"].items():
        txt.append(table("%s -smp %s:" % (a.kernel, smp), scen))
    txt = "\n".join(txt)
    with open(os.path.join(a.out, "table.txt"), "w") as f:
        f.write(txt + "\n")
    print(txt)
    rst = []
    for smp, scen in res["by_smp"].items():
        for sname, by_path in scen.items():
            base = {"fake_floor": "floor", POOL: "pool"}.get(sname, "wq")
            rst.append(rst_table("%s, -smp %s" % (sname, smp), by_path, base))
    with open(os.path.join(a.out, "table.rst"), "w") as f:
        f.write("\n".join(rst))
    plot(res, paths, a.out)
    return 0


if __name__ == "__main__":
    sys.exit(main())
