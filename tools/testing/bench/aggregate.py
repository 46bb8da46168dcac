#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""aggregate.py - make bench's host side: records in, results.json, table and plot out.

Usage: aggregate.py --kernel KVER --smp N --repeats N --paths "p ..." --out DIR
                    [--host HOST-smpN.json ...] RECORDS-smpN.jsonl ...
       aggregate.py --baselines "p ..."    the baselines PATHS lacks (bench.sh, before
                                           the run), or exit 2 for an unknown path

Each input line is one record of tools/testing/bench/guest-bench.sh.  Every path has
one baseline, fixed before the run by the pairing table (BASELINE below): the
upstream ib_cq in the same poll context.  Per scenario and path, every metric is
computed per run, then reduced to the median with min and max over the repeats.  The
headline figure is the paired ratio: per repeat, the path's completions/s over its
baseline's in that repeat, then their median and its 95 % bootstrap interval
(paired.py); the other metrics measured in every run get the same.  A run that failed
(ocq-demo's exit status was not 0) never enters a median, a minimum, a maximum or a
pair: it is counted in failed_runs, and its reorders, lost and duplicated completions
still add to the sums.  Writes DIR/results.json, DIR/table.txt (also printed),
DIR/table.rst (the same for Documentation/performance.rst) and, when gnuplot is
there, DIR/plot.svg.
"""
import argparse
import json
import os
import re
import shutil
import statistics
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import paired  # noqa: E402

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
# the headline metric: its paired ratio is an entry's ratio, ci_low and ci_high
HEADLINE = "completions_per_s"
# metrics measured in every run of a path and of its baseline: paired, with intervals
PAIRED = ["completions_per_s", "ns_per_completion", "p50_us", "p99_us"]
POOL_PAIRED = ["completions_per_s", "p99_us", "shared_per_s", "shared_p99_us",
               "heavy_per_s"]
# ratios of the medians: the events and runs of the upstream paths come from one
# traced run, not from every repeat, so they have no pairs
MEDIAN_RATIOS = ["events_per_1k", "runs_per_1k"]
POOL = "rxe_pool"
FAKE = "fake_floor"

# The pairing table: every path's poll context and its baseline, the upstream
# ib_cq in the same context, fixed before the run.  The demo's ordered CQs
# (ib_ocq_alloc()) all run on IB_POLL_WORKQUEUE, so every ocq-* path is paired
# with upstream-wq; naive and locked run their loops on a bound workqueue of the
# demo's own, the nearest upstream context being IB_POLL_WORKQUEUE too.  A
# baseline has none (None).  fake_floor and rxe_pool have paths of their own.
BASELINE = {
    "ocq-strict": ("IB_POLL_WORKQUEUE", "upstream-wq"),
    "ocq-defer": ("IB_POLL_WORKQUEUE", "upstream-wq"),
    "ocq-dim": ("IB_POLL_WORKQUEUE", "upstream-wq"),
    "ocq-busy": ("IB_POLL_WORKQUEUE", "upstream-wq"),
    "ocq-flow": ("IB_POLL_WORKQUEUE", "upstream-wq"),
    "ocq-parallel": ("IB_POLL_WORKQUEUE", "upstream-wq"),
    "naive": ("bound workqueue of the demo", "upstream-wq"),
    "locked": ("bound workqueue of the demo", "upstream-wq"),
    "upstream-wq": ("IB_POLL_WORKQUEUE", None),
    "upstream-unbound": ("IB_POLL_UNBOUND_WORKQUEUE", None),
    "upstream-softirq": ("IB_POLL_SOFTIRQ", None),
}
SCENARIO_BASELINE = {
    # the engine against a plain drain loop in the module's own thread
    FAKE: {"floor": ("ocq_bench_fake's thread", None),
           "ocq-strict": ("ocq_bench_fake's thread", "floor"),
           "ocq-flow": ("ocq_bench_fake's thread", "floor"),
           "ocq-parallel": ("ocq_bench_fake's thread", "floor")},
    # pool_bench.c on ocq's pool against the same file on ib_core's
    POOL: {"upstream-pool": ("IB_POLL_WORKQUEUE", None),
           "ocq-pool": ("IB_POLL_WORKQUEUE", "upstream-pool")},
}
SCENARIO_PATHS = {FAKE: ["floor", "ocq-strict", "ocq-flow", "ocq-parallel"],
                  POOL: ["upstream-pool", "ocq-pool"]}


def pairing(scenario, path):
    """(poll context, baseline or None) of @path in @scenario; KeyError if unknown."""
    return SCENARIO_BASELINE.get(scenario, BASELINE)[path]


def missing_baselines(paths):
    """The baselines of @paths that @paths lacks, in order; KeyError if one is unknown."""
    out = []
    for p in paths:
        b = BASELINE[p][1]
        if b and b not in paths and b not in out:
            out.append(b)
    return out


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


def env_metrics(rec):
    """The guest's steal time and load over one run (guest-bench.sh's "env")."""
    env = rec.get("env")
    if not env:
        return {}
    ticks = env.get("ticks") or 0
    return {"guest_steal_pct": 100.0 * env.get("steal", 0) / ticks if ticks else None,
            "guest_load1": [env.get("load0"), env.get("load1")]}


def reduce_runs(runs, counted):
    """Median/min/max of the metrics over the repeats of one path that succeeded,
    and every run's values in repeat order (raw)."""
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
    order = sorted(runs, key=lambda r: r["repeat"])
    raw = {"repeat": [r["repeat"] for r in order],
           "failed": [r["failed"] for r in order]}
    for k in METRICS + ["guest_steal_pct"]:
        if any(r.get(k) is not None for r in order):
            raw[k] = [r.get(k) for r in order]
    out["raw"] = raw
    return out


def ratio(a, b):
    return paired.ratio(a, b)


def add_pairs(e, runs, base_runs, keys):
    """The paired ratios of an entry against its baseline's runs.

    ratio, ci_low, ci_high: the headline metric's; pairs: its per-repeat values;
    paired: every metric of @keys with its interval.
    """
    e["paired"] = {k: paired.summary(paired.pairs(runs, base_runs, k)) for k in keys}
    prs = paired.pairs(runs, base_runs, HEADLINE)
    head = e["paired"][HEADLINE]
    e.update({"ratio": head["ratio"], "ci_low": head["ci_low"],
              "ci_high": head["ci_high"], "n_pairs": head["n"], "pairs": prs})


def aggregate(records, paths):
    """{scenario: {path: entry}} for the records of one boot."""
    runs, counted = {}, {}
    for rec in records:
        s, p = rec["scenario"], rec["path"]
        if "count" in rec:
            counted[(s, p)] = count_metrics(rec)
            continue
        if s == FAKE:
            m = fake_metrics(rec)
        elif s == POOL:
            m = pool_metrics(rec)
        else:
            m = demo_metrics(rec)
        m.update(env_metrics(rec))
        m["repeat"] = rec["repeat"]
        # a pool run whose completions failed is a failed run too
        m["failed"] = rec.get("rc", 0) != 0 or (s == POOL and m["errors"] != 0)
        runs.setdefault(s, {}).setdefault(p, []).append(m)
    res = {}
    for s, by_path in runs.items():
        order = SCENARIO_PATHS.get(s, paths)
        res[s] = {}
        for p in order:
            if p not in by_path:
                continue
            e = reduce_runs(by_path[p], counted.get((s, p)))
            e["poll_ctx"], e["baseline"] = pairing(s, p)
            res[s][p] = e
        keys = POOL_PAIRED if s == POOL else PAIRED
        for p, e in res[s].items():
            base = res[s].get(e["baseline"])
            if e["baseline"] is None or base is None:
                e.update({"ratio": None, "ci_low": None, "ci_high": None,
                          "n_pairs": 0, "pairs": [], "paired": {}})
                e["ratio_of_medians"] = {}
                continue
            add_pairs(e, by_path[p], by_path[e["baseline"]], keys)
            e["ratio_of_medians"] = {k: ratio(e.get(k), base.get(k))
                                     for k in keys + MEDIAN_RATIOS}
    return res


def fmt(v, nd=1):
    if v is None:
        return "-"
    if isinstance(v, int):
        return str(v)
    if abs(v) >= 1000:
        return "%.0f" % v
    return "%.*f" % (nd, v)


def pr(e, k, nd=2):
    """The paired ratio of metric @k of entry @e, without its interval."""
    return fmt((e.get("paired") or {}).get(k, {}).get("ratio"), nd)


def headline(e):
    """The entry's paired ratio and interval: '1.03 [0.98-1.07]'."""
    return paired.fmt_ci({"ratio": e.get("ratio"), "ci_low": e.get("ci_low"),
                          "ci_high": e.get("ci_high")})


def minmax(e, k):
    return "%s-%s" % (fmt(e["min"].get(k), 0), fmt(e["max"].get(k), 0))


DEMO_COLS = ["path", "base", "compl/s", "min-max", "x base [95% CI]", "ns/compl",
             "x base", "ev/1k", "x base", "runs/1k", "empty%", "arms/1k", "repoll/1k",
             "p50 us", "x base", "p99 us", "reord", "lost", "drop", "backlog", "fail"]


def demo_row(p, e):
    """One path of a demo scenario or fake_floor, in DEMO_COLS' order."""
    rm = e.get("ratio_of_medians", {})
    return [p, e.get("baseline") or "-", fmt(e.get("completions_per_s"), 0),
            minmax(e, "completions_per_s"), headline(e),
            fmt(e.get("ns_per_completion"), 0), pr(e, "ns_per_completion"),
            fmt(e.get("events_per_1k")), fmt(rm.get("events_per_1k"), 2),
            fmt(e.get("runs_per_1k")), fmt(e.get("empty_runs_pct"), 2),
            fmt(e.get("arms_per_1k")), fmt(e.get("repolls_per_1k")),
            fmt(e.get("p50_us"), 0), pr(e, "p50_us"), fmt(e.get("p99_us"), 0),
            fmt(e.get("reorders")), fmt(e.get("lost")), fmt(e.get("dropped")),
            fmt(e.get("backlog")), fmt(e.get("failed_runs"))]


POOL_COLS = ["path", "base", "light/s", "min-max", "x base [95% CI]", "p50 us",
             "p99 us", "x base", "shared/s", "x base", "sh p99", "other/s", "ot p99",
             "heavy/s", "x base", "errors", "fail"]


def pool_row(p, e):
    """One path of rxe_pool, in POOL_COLS' order."""
    return [p, e.get("baseline") or "-", fmt(e.get("completions_per_s"), 0),
            minmax(e, "completions_per_s"), headline(e),
            fmt(e.get("p50_us"), 0), fmt(e.get("p99_us"), 0), pr(e, "p99_us"),
            fmt(e.get("shared_per_s"), 0), pr(e, "shared_per_s"),
            fmt(e.get("shared_p99_us"), 0), fmt(e.get("other_per_s"), 0),
            fmt(e.get("other_p99_us"), 0), fmt(e.get("heavy_per_s"), 0),
            pr(e, "heavy_per_s"), fmt(e.get("errors")), fmt(e.get("failed_runs"))]


def rows_of(s, by_path):
    """(header, rows) of scenario @s."""
    if s == POOL:
        return POOL_COLS, [pool_row(p, e) for p, e in by_path.items()]
    return DEMO_COLS, [demo_row(p, e) for p, e in by_path.items()]


LEGEND = [
    "base: the path's baseline (the upstream ib_cq in the same poll context; fake_floor:",
    "the floor; rxe_pool: upstream-pool); x base [95% CI]: median over the repeats of",
    "compl/s over the baseline's in the same repeat, and its percentile bootstrap",
    "interval (n/a with fewer than 2 repeats); x base after ns/compl, p50, p99 (and the",
    "pool's shared/s, heavy/s): the same paired median; x base after ev/1k: ratio of the",
    "medians (upstream's counters come from one traced run); ns/compl: CPU time of all",
    "CPUs per completion (fake_floor: elapsed); drop, backlog: open-loop messages due and",
    "not posted; fail: runs that failed, left out of every median and pair.",
    "rxe_pool: light/s, p50, p99: the 7 light pairs' receives (posted to done());",
    "shared: those whose receiver shares the heavy receiver's CQ; other: the rest.",
    "",
]


def text_rows(head, rows):
    w = [max(len(str(x[i])) for x in [head] + rows) for i in range(len(head))]
    return [" ".join(str(v).ljust(n) if i < 2 else str(v).rjust(n)
                     for i, (v, n) in enumerate(zip(x, w))).rstrip()
            for x in [head] + rows]


def table(title, scen):
    lines = []
    for s, by_path in scen.items():
        head, rows = rows_of(s, by_path)
        lines.append("%s %s" % (title, s))
        lines += text_rows(head, rows)
        lines.append("")
    return "\n".join(lines)


def rst_simple(title, head, rows):
    """A reStructuredText simple table."""
    w = [max(len(str(x[i])) for x in [head] + rows) for i in range(len(head))]
    rule = " ".join("=" * n for n in w)
    line = lambda x: " ".join(str(v).ljust(n) for v, n in zip(x, w)).rstrip()
    return "\n".join(["**%s**" % title, "", rule, line(head), rule] +
                      [line(x) for x in rows] + [rule, ""])


def rst_table(title, scenario, by_path):
    """One scenario as a reStructuredText simple table (for performance.rst)."""
    head, rows = rows_of(scenario, by_path)
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


def host_summary(h):
    """The host's steal time and load over a boot, from hostenv.sh's snapshots."""
    b, a = h.get("before"), h.get("after")
    out = dict(h)
    if b and a:
        d = [y - x for x, y in zip(b["cpu"], a["cpu"])]
        total = sum(d)
        # /proc/stat's cpu line: user nice system idle iowait irq softirq steal
        out["steal_pct"] = 100.0 * d[7] / total if total and len(d) > 7 else None
        out["idle_pct"] = 100.0 * (d[3] + d[4]) / total if total else None
    loads = [x[1] for x in h.get("samples", [])]
    loads += [s["loadavg"][0] for s in (b, a) if s]
    out["load1_max"] = max(loads) if loads else None
    return out


def guest_summary(records):
    """The guest's steal time over all runs, and its highest 1-minute load."""
    steal = ticks = 0
    loads = []
    for rec in records:
        env = rec.get("env")
        if not env:
            continue
        steal += env.get("steal", 0)
        ticks += env.get("ticks", 0)
        loads += [x for x in (env.get("load0"), env.get("load1")) if x is not None]
    return {"steal_pct": 100.0 * steal / ticks if ticks else None,
            "load1_max": max(loads) if loads else None}


def env_lines(res):
    """What the host and the guest did besides the bench, one line per boot."""
    out = []
    for smp in res["by_smp"]:
        h = res["host"].get(smp, {})
        g = res["guest"].get(smp, {})
        b = (h.get("before") or {}).get("loadavg")
        a = (h.get("after") or {}).get("loadavg")
        out.append("-smp %s: host load average %s before, %s after (1-min max %s), "
                   "steal %s %%; guest steal %s %%, 1-min load max %s" % (
                       smp, " ".join(map(str, b)) if b else "-",
                       " ".join(map(str, a)) if a else "-", fmt(h.get("load1_max"), 2),
                       fmt(h.get("steal_pct"), 2), fmt(g.get("steal_pct"), 2),
                       fmt(g.get("load1_max"), 2)))
    return out


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--baselines", help="print the baselines these paths lack")
    ap.add_argument("--kernel")
    ap.add_argument("--smp", type=int)
    ap.add_argument("--repeats", type=int)
    ap.add_argument("--paths")
    ap.add_argument("--out")
    ap.add_argument("--host", action="append", default=[],
                    help="hostenv.sh's JSON of a boot (host-smpN.json)")
    ap.add_argument("records", nargs="*")
    a = ap.parse_args()
    if a.baselines is not None:
        try:
            print(" ".join(missing_baselines(a.baselines.split())))
        except KeyError as e:
            print("aggregate: path %s is not in the pairing table" % e.args[0], file=sys.stderr)
            return 2
        return 0
    if not (a.kernel and a.smp and a.repeats and a.paths and a.out and a.records):
        ap.error("--kernel, --smp, --repeats, --paths, --out and records are needed")
    paths = a.paths.split()

    res = {"kernel": a.kernel, "smp": a.smp, "repeats": a.repeats,
           "paired": paired.method(), "headline": HEADLINE,
           "host": {}, "guest": {}, "scenarios": {}, "by_smp": {}}
    for fn in a.host:
        smp = re.search(r"smp(\d+)", os.path.basename(fn)).group(1)
        with open(fn) as f:
            res["host"][smp] = host_summary(json.load(f))
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
        res["guest"][str(smp)] = guest_summary(recs)
    res["scenarios"] = res["by_smp"].get(str(a.smp), {})

    with open(os.path.join(a.out, "results.json"), "w") as f:
        json.dump(res, f, indent=1)
        f.write("\n")
    txt = LEGEND + env_lines(res) + [""]
    for smp, scen in res["by_smp"].items():
        txt.append(table("%s -smp %s:" % (a.kernel, smp), scen))
    txt = "\n".join(txt)
    with open(os.path.join(a.out, "table.txt"), "w") as f:
        f.write(txt + "\n")
    print(txt)
    rst = []
    for smp, scen in res["by_smp"].items():
        for sname, by_path in scen.items():
            rst.append(rst_table("%s, -smp %s" % (sname, smp), sname, by_path))
    with open(os.path.join(a.out, "table.rst"), "w") as f:
        f.write("\n".join(rst))
    plot(res, paths, a.out)
    return 0


if __name__ == "__main__":
    sys.exit(main())
