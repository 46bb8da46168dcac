#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
"""make cost: what ordering costs per completion, counted (see README).

Runs ocq_cost (cost.c) for every path under valgrind's callgrind, N
completions and 0 (set-up and teardown alone) and N again (the counts must
be the same twice), and its count build natively for the locked
instructions and the shared cache lines; prints the table, writes
results.json, checks the ceilings and the repeatability and reports the
targets (met or missed).  Exit status 1 if a check failed, 2 if the runs
themselves failed.

Usage: cost.py --bin16 BIN --count16 BIN [--bin1 BIN --count1 BIN]
               --syms FILE --out DIR [--n N] [--cpus C] [--cqe Q] [--jobs J]
"""

import argparse
import concurrent.futures
import json
import os
import re
import subprocess
import sys

# The targets: whole program against raw, at the engine's batch of 16.
# Reported, met or missed, with their gap; Documentation/performance.rst
# says why the missed ones are (a hand-off copies each completion).
TARGETS = [
    # (path, max ratio to raw, max locked instructions per completion)
    ("strict", 1.03, 0.0),
    ("flow-1", 1.15, 0.1),
    ("flow-4", 1.15, 0.1),
    ("flow-64", 1.15, 0.1),
    ("parallel", 1.25, 0.2),
]
# The ceilings the engine is held to: what it spends today, with the
# tolerance below (the locked ones with 0.001 over the figure at N = 2^14,
# the host tests' N, where what a run costs once weighs a little more).  A change that spends more fails make cost (and the host
# tests); one that spends less lowers them.
CEILINGS = [
    ("strict", 1.331, 0.0),
    ("flow-1", 4.01, 0.084),
    ("flow-4", 4.07, 0.102),
    ("flow-64", 4.11, 0.111),
    ("parallel", 3.81, 0.197),
]
# Counts are exact and repeatable (a run that differs fails): the ratio's
# tolerance covers what another compiler or C library moves, not noise.
RATIO_TOLERANCE = 0.005
# "0 locked RMW per completion": fewer than one per 1000 completions, so
# that what a run or an event costs once, spread over N, is not counted
ZERO_RMW = 0.001

DEEP = [
    # (name, path, flows)
    ("strict", "strict", 8),
    ("flow-1", "flow", 1),
    ("flow-4", "flow", 4),
    ("flow-64", "flow", 64),
    ("parallel", "parallel", 8),
]
PER_EVENT = 16
EVENTS = [
    ("raw", "raw", 8, []),
    ("strict", "strict", 8, []),
    ("strict-dropin", "strict", 8, ["--dropin"]),
    ("flow-4", "flow", 4, []),
    ("parallel", "parallel", 8, []),
]


def run(cmd):
    p = subprocess.run(cmd, capture_output=True, text=True, check=False)
    return p.returncode, p.stdout, p.stderr


def parse_cost(out):
    line = [l for l in out.splitlines() if l.startswith("cost: ")]
    if not line:
        return None
    return {k: (int(v) if re.fullmatch(r"-?\d+", v) else v)
            for k, v in (kv.split("=", 1) for kv in line[-1][6:].split())}


class Runner:
    def __init__(self, args):
        self.args = args
        self.syms = set()
        with open(args.syms) as f:
            for line in f:
                parts = line.split()
                if len(parts) == 3 and parts[1] in "tT":
                    self.syms.add(parts[2].split(".")[0])
        self.cgdir = os.path.join(args.out, "callgrind")
        os.makedirs(self.cgdir, exist_ok=True)
        self.errors = []

    def callgrind(self, binary, argv, tag):
        """Ir of the whole program, and of the engine's functions."""
        out = os.path.join(self.cgdir, tag + ".out")
        rc, so, se = run(["valgrind", "--tool=callgrind",
                          "--callgrind-out-file=" + out, binary] + argv)
        m = re.search(r"Collected : (\d+)", se)
        if rc or not m:
            self.errors.append("callgrind %s %s: exit %d\n%s%s" %
                               (binary, " ".join(argv), rc, so, se[-2000:]))
            return None
        rc, ann, se = run(["callgrind_annotate", "--inclusive=no",
                           "--threshold=100", out])
        engine = 0
        for line in ann.splitlines():
            m2 = re.match(r"\s*([\d,]+)\s+\([^)]*\)\s+(\S+):(\S+)", line)
            if m2 and m2.group(3).split(".")[0] in self.syms:
                engine += int(m2.group(1).replace(",", ""))
        return {"ir": int(m.group(1)), "engine_ir": engine,
                "cost": parse_cost(so)}

    def count(self, binary, argv):
        rc, so, se = run([binary] + argv)
        c = parse_cost(so)
        if rc or not c:
            self.errors.append("%s %s: exit %d\n%s%s" %
                               (binary, " ".join(argv), rc, so, se[-2000:]))
        return c

    def measure(self, tag, binary, counter, argv):
        """One configuration: the per-completion figures, or None."""
        n = self.args.n
        common = ["--cpus", str(self.args.cpus), "--cqe", str(self.args.cqe)]
        runs = {
            "n": (self.callgrind, binary, [argv[0], str(n)] + argv[1:] + common,
                  tag + ".n"),
            "n2": (self.callgrind, binary, [argv[0], str(n)] + argv[1:] + common,
                   tag + ".n2"),
            "zero": (self.callgrind, binary, [argv[0], "0"] + argv[1:] + common,
                     tag + ".0"),
            "cn": (self.count, counter, [argv[0], str(n)] + argv[1:] + common),
            "c0": (self.count, counter, [argv[0], "0"] + argv[1:] + common),
        }
        return runs

    def derive(self, r):
        n = self.args.n
        if any(r[k] is None for k in r):
            return None
        cn, c0 = r["cn"], r["c0"]

        def per(key, a=cn, b=c0):
            return (a[key] - b[key]) / n

        ipc = (r["n"]["ir"] - r["zero"]["ir"]) / n
        d = {
            "instructions_per_completion": ipc,
            "engine_instructions_per_completion":
                (r["n"]["engine_ir"] - r["zero"]["engine_ir"]) / n,
            "rmw_per_completion": per("rmw") + per("mb") + per("host_rmw") +
            per("host_mb"),
            "atomic_rmw_per_completion": per("rmw") + per("host_rmw"),
            "mb_per_completion": per("mb") + per("host_mb"),
            "engine_locked_per_completion": per("rmw") + per("mb"),
            "host_locked_per_completion": per("host_rmw") + per("host_mb"),
            "shared_lines_written_per_completion": per("shared"),
            "lines_written_by_two_units": cn["lines"],
            "work_items_per_completion": per("ran"),
            "polls_per_completion": per("polls"),
            "events": cn["events"],
            "instructions": [r["n"]["ir"], r["n2"]["ir"]],
            "instructions_zero": r["zero"]["ir"],
            "repeatable": r["n"]["ir"] == r["n2"]["ir"],
            "ocq_batch": cn["ocq_batch"],
        }
        return d


def fmt(v, w, p=2):
    if v is None:
        return "-".rjust(w)
    return ("%.*f" % (p, v)).rjust(w)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--bin16", required=True)
    ap.add_argument("--count16", required=True)
    ap.add_argument("--bin1")
    ap.add_argument("--count1")
    ap.add_argument("--syms", required=True)
    ap.add_argument("--out", required=True)
    ap.add_argument("--n", type=int, default=131072)
    ap.add_argument("--cpus", type=int, default=4)
    ap.add_argument("--cqe", type=int, default=1024)
    ap.add_argument("--jobs", type=int, default=os.cpu_count() or 1)
    ap.add_argument("--why-no-batch1", default="")
    args = ap.parse_args()
    os.makedirs(args.out, exist_ok=True)
    R = Runner(args)

    # every configuration: (section, name, batch, flows, binary, counter, argv)
    configs = [("deep", "raw", 1, None, args.bin16, args.count16,
                ["raw", "--batch", "1"]),
               ("deep", "raw", 16, None, args.bin16, args.count16,
                ["raw", "--batch", "16"])]
    builds = [(16, args.bin16, args.count16)]
    if args.bin1:
        builds.insert(0, (1, args.bin1, args.count1))
    for batch, b, cnt in builds:
        for name, path, flows in DEEP:
            configs.append(("deep", name, batch, flows if path == "flow" else None,
                            b, cnt, [path, "--flows", str(flows)]))
    for name, path, flows, extra in EVENTS:
        configs.append(("event", name, 16, flows if path == "flow" else None,
                        args.bin16, args.count16,
                        [path, "--flows", str(flows), "--per-event",
                         str(PER_EVENT)] + extra))
    configs.append(("lookup", "lookup", None, None, args.bin16, args.count16,
                    ["lookup"]))

    jobs = []
    for sec, name, batch, flows, b, cnt, argv in configs:
        tag = "%s-%s-b%s" % (sec, name, batch)
        for key, (fn, *a) in R.measure(tag, b, cnt, argv).items():
            jobs.append(((sec, name, batch), key, fn, a))
    results = {}
    with concurrent.futures.ThreadPoolExecutor(max_workers=args.jobs) as ex:
        futs = {ex.submit(fn, *a): (cfg, key) for cfg, key, fn, a in jobs}
        for f in concurrent.futures.as_completed(futs):
            cfg, key = futs[f]
            results.setdefault(cfg, {})[key] = f.result()
    if R.errors:
        for e in R.errors:
            print("cost: run failed: " + e, file=sys.stderr)
        print("cost: 0 passed, 1 failed (the runs failed)")
        return 2

    data = {}
    for sec, name, batch, flows, b, cnt, argv in configs:
        d = R.derive(results[(sec, name, batch)])
        d.update({"path": name, "batch": batch, "flows": flows})
        data[(sec, name, batch)] = d
    for (sec, name, batch), d in data.items():
        if sec == "lookup":
            continue
        raw = data.get((sec, "raw", batch if sec == "deep" else 16))
        d["ratio_to_raw"] = d["instructions_per_completion"] / \
            raw["instructions_per_completion"]
        if sec == "deep" and name != "raw" and d["ocq_batch"] != batch:
            print("cost: the batch-%d build has OCQ_BATCH %d" %
                  (batch, d["ocq_batch"]), file=sys.stderr)
            return 2

    n = args.n
    vg = run(["valgrind", "--version"])[1].strip()
    cc = run([os.environ.get("CC", "cc"), "-dumpfullversion"])[1].strip()
    print("make cost: %d completions per run, counted with callgrind (%s), "
          "gcc %s; %d CPUs (flow domains, parallel workers), a %d-entry CQ"
          % (n, vg, cc, args.cpus, args.cqe))
    print("whole program per completion, minus a run of 0; locked = atomic "
          "RMWs + smp_mb(), engine + host (the host: queue_work()'s least)")
    hdr = ("%-14s %5s %5s %9s %8s %7s %8s %8s %8s %8s %8s"
           % ("path", "flows", "batch", "instr", "engine", "x raw", "locked",
              "engine", "host", "shared", "runs"))

    def row(d):
        return ("%-14s %5s %5s %9s %8s %7s %8s %8s %8s %8s %8s" % (
            d["path"], d["flows"] or "-", d["batch"],
            fmt(d["instructions_per_completion"], 9),
            fmt(d["engine_instructions_per_completion"], 8),
            fmt(d["ratio_to_raw"], 7, 3),
            fmt(d["rmw_per_completion"], 8, 3),
            fmt(d["engine_locked_per_completion"], 8, 3),
            fmt(d["host_locked_per_completion"], 8, 3),
            fmt(d["shared_lines_written_per_completion"], 8, 3),
            fmt(d["work_items_per_completion"], 8, 4)))
    print()
    print("All N completions in the CQ, one event:")
    print(hdr)
    for batch in (1, 16):
        for key, d in data.items():
            if key[0] == "deep" and key[2] == batch and key[1] == "raw":
                print(row(d))
        for key, d in data.items():
            if key[0] == "deep" and key[2] == batch and key[1] != "raw":
                print(row(d))
    if not args.bin1:
        print("(the engine at batch 1: not measured: %s)" % args.why_no_batch1)
    print()
    print("%d completions per event (the run arms the CQ after each):"
          % PER_EVENT)
    print(hdr)
    for key, d in data.items():
        if key[0] == "event":
            print(row(d))
    lk = data[("lookup", "lookup", None)]
    sd = data[("event", "strict-dropin", 16)]
    so = data[("event", "strict", 16)]
    lookup = {
        "instructions_per_lookup": lk["instructions_per_completion"],
        "locked_per_lookup": lk["rmw_per_completion"],
        "per_completion_at_16_per_event":
            sd["instructions_per_completion"] -
            so["instructions_per_completion"],
    }
    print("drop-in find (the OCQ found from its CQ as ib_ocq_of() does: "
          "the CQ's wc pointer and comp_handler; no table), per event: "
          "%.1f instructions, %.3f locked; "
          "at %d completions per event %.2f instructions per completion"
          % (lookup["instructions_per_lookup"], lookup["locked_per_lookup"],
             PER_EVENT, lookup["per_completion_at_16_per_event"]))

    # the checks
    checks = []
    for d in data.values():
        if not d["repeatable"]:
            checks.append(("%s batch %s: the same count twice" % (
                d["path"], d["batch"]), "%d, %d" % tuple(d["instructions"]),
                False))
    def limits(table, what):
        out = []
        for name, max_ratio, max_rmw in table:
            d = data[("deep", name, 16)]
            ok = d["ratio_to_raw"] <= max_ratio * (1 + RATIO_TOLERANCE)
            out.append(("%s %s: instructions <= %.3gx raw's" % (
                what, name, max_ratio), "%.3fx (%.1f against %.1f)" % (
                    d["ratio_to_raw"], d["instructions_per_completion"],
                    data[("deep", "raw", 16)]
                    ["instructions_per_completion"]), ok))
            lim = max_rmw if max_rmw else ZERO_RMW
            ok = d["rmw_per_completion"] <= lim + 1e-12 if max_rmw else \
                d["rmw_per_completion"] < lim
            out.append(("%s %s: locked per completion %s %s" % (
                what, name, "<=" if max_rmw else "0 (<",
                "%.3f" % max_rmw if max_rmw else "%g)" % ZERO_RMW),
                "%.4f (engine %.4f, host %.4f)" % (
                    d["rmw_per_completion"], d["engine_locked_per_completion"],
                    d["host_locked_per_completion"]), ok))
        return out

    checks += limits(CEILINGS, "ceiling")
    targets = limits(TARGETS, "target")
    print()
    print("Batch 16 (ratio tolerance %.1f%%; locked counts exact); the "
          "ceilings are checked, the targets reported:"
          % (100 * RATIO_TOLERANCE))
    npass = sum(1 for c in checks if c[2])
    for what, val, ok in checks:
        print("  %-4s %-52s %s" % ("PASS" if ok else "FAIL", what, val))
    for what, val, ok in targets:
        print("  %-4s %-52s %s" % ("met" if ok else "MISS", what, val))
    rep = all(d["repeatable"] for d in data.values())
    print("repeatable: %s" % ("every count the same in two runs" if rep else
                              "NO: see the FAIL lines"))

    out = {
        "command": "make cost",
        "completions": n,
        "cpus": args.cpus,
        "cqe": args.cqe,
        "valgrind": vg,
        "cc": cc,
        "engine_batch_1": bool(args.bin1),
        "engine_batch_1_why_not": None if args.bin1 else args.why_no_batch1,
        "ratio_tolerance": RATIO_TOLERANCE,
        "zero_rmw_below": ZERO_RMW,
        "repeatable": rep,
        "paths": {},
        "per_event": {},
        "dropin_lookup": lookup,
        "checks": [{"check": w, "measured": v, "pass": ok}
                   for w, v, ok in checks],
        "targets": [{"target": w, "measured": v, "met": ok}
                    for w, v, ok in targets],
    }
    keep = ["instructions_per_completion", "engine_instructions_per_completion",
            "rmw_per_completion", "ratio_to_raw", "atomic_rmw_per_completion",
            "mb_per_completion", "engine_locked_per_completion",
            "host_locked_per_completion",
            "shared_lines_written_per_completion",
            "lines_written_by_two_units", "work_items_per_completion",
            "polls_per_completion", "flows", "instructions",
            "instructions_zero", "repeatable"]
    for (sec, name, batch), d in data.items():
        if sec == "lookup":
            continue
        dst = out["paths"] if sec == "deep" else out["per_event"]
        dst.setdefault(name, {})[str(batch)] = {
            k: (round(d[k], 4) if isinstance(d[k], float) else d[k])
            for k in keep}
    with open(os.path.join(args.out, "results.json"), "w") as f:
        json.dump(out, f, indent=1)
        f.write("\n")
    print("results: %s" % os.path.join(args.out, "results.json"))
    print("cost: %d passed, %d failed" % (npass, len(checks) - npass))
    return 0 if npass == len(checks) else 1


if __name__ == "__main__":
    sys.exit(main())
