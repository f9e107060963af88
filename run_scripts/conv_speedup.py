#!/usr/bin/env python3
"""Time triada-conv on 1 rank against R ranks, in alternating pairs, and print the speed-up.

Usage: run_scripts/conv_speedup.py [--network FILE] [--ranks R] [--pairs P] [--mxu S]
                                   [--method M] [--bin DIR] [--json FILE] [--quick]

Runs `triada-conv --network FILE --method M --mxu S --verify-budget 0` once as a warm-up,
then P pairs of (1 rank, R ranks), the order alternating from pair to pair so that a drift
of the machine's speed falls on both. Two times per run: the report's total.wall_seconds
(the program's work, from the first layer to the report) and the process time seen from
here (mpirun's start-up included). Prints every run, the medians and the speed-up of the
medians, and checks that every R-rank report's counters equal the 1-rank report's (they
must, for every rank count: doc/mxu.md "The MXU programs under mpirun").

Defaults: data/networks/vgg16.csv, --ranks 2, --pairs 8, --mxu 16, --method both.
--quick: the first two layers of the network (a copy in a temporary folder), 1 pair, to
check the script. --json FILE writes the runs, medians and speed-ups. Environment:
MPIEXEC (default mpirun; on one node MPIEXEC="mpirun --mca pml ob1" halves Open MPI's
start-up; as root Open MPI needs OMPI_ALLOW_RUN_AS_ROOT=1 and
OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1). Exits 1 if a run fails or the counters differ.
"""
import argparse
import json
import os
import shlex
import statistics
import subprocess
import sys
import tempfile
import time

PROG = "conv_speedup.py"
HERE = os.path.dirname(os.path.abspath(__file__))
SRC = os.path.dirname(HERE)


def fail(msg):
    print(f"{PROG}: {msg}", file=sys.stderr)
    sys.exit(1)


def parse():
    p = argparse.ArgumentParser(prog=PROG, description=__doc__.split("\n")[0])
    p.add_argument("--network", default=os.path.join(SRC, "data/networks/vgg16.csv"))
    p.add_argument("--ranks", type=int, default=2, help="the R of 1 against R (default 2)")
    p.add_argument("--pairs", type=int, default=8, help="pairs of runs (default 8)")
    p.add_argument("--mxu", type=int, default=16, help="the unit's side S (default 16)")
    p.add_argument("--method", default="both", choices=["explicit", "implicit", "both"])
    p.add_argument("--bin", default=os.environ.get("TRIADA_BIN", os.path.join(SRC, "build")),
                   help="build directory with triada-conv (default $TRIADA_BIN, else build/)")
    p.add_argument("--json", help="write the runs and the speed-ups here")
    p.add_argument("--quick", action="store_true", help="two layers, one pair")
    a = p.parse_args()
    if a.ranks < 2 or a.pairs < 1 or a.mxu < 1:
        fail("--ranks must be >= 2, --pairs and --mxu >= 1")
    if not os.path.isfile(a.network):
        fail(f"--network {a.network}: no such file")
    if not os.access(os.path.join(a.bin, "triada-conv"), os.X_OK):
        fail(f"--bin {a.bin}: no triada-conv there (build first)")
    return a


def quick_network(path, folder):
    """The header and the first two layer rows of `path` (comments and blanks kept out)."""
    rows = [l for l in open(path) if l.strip() and not l.startswith("#")]
    out = os.path.join(folder, "quick.csv")
    with open(out, "w") as f:
        f.writelines(rows[:3])
    return out


def counters(report):
    """The report without times, provenance and rank count: what must not depend on R."""
    def strip(o):
        if isinstance(o, dict):
            return {k: strip(v) for k, v in o.items()
                    if "seconds" not in k and k not in ("provenance", "ranks")}
        if isinstance(o, list):
            return [strip(v) for v in o]
        return o
    return strip(report)


def run(a, network, ranks, folder):
    report = os.path.join(folder, f"r{ranks}.json")
    cmd = shlex.split(os.environ.get("MPIEXEC", "mpirun")) + [
        "--oversubscribe", "-np", str(ranks), os.path.join(a.bin, "triada-conv"),
        "--network", network, "--method", a.method, "--mxu", str(a.mxu),
        "--verify-budget", "0", "--progress", "never", "--force", "--report", report]
    t0 = time.monotonic()
    done = subprocess.run(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    seconds = time.monotonic() - t0
    if done.returncode != 0:
        fail(f"{' '.join(cmd)}: exit {done.returncode}: {done.stderr.strip()[-400:]}")
    with open(report) as f:
        r = json.load(f)
    return {"process_seconds": seconds, "report_seconds": r["total"]["wall_seconds"]}, r


def main():
    a = parse()
    with tempfile.TemporaryDirectory(prefix="conv_speedup.") as folder:
        network = quick_network(a.network, folder) if a.quick else a.network
        pairs = 1 if a.quick else a.pairs
        _, base = run(a, network, 1, folder)  # the warm-up, and the counters to match
        runs = {1: [], a.ranks: []}
        for k in range(pairs):
            for ranks in (1, a.ranks) if k % 2 == 0 else (a.ranks, 1):
                times, report = run(a, network, ranks, folder)
                if ranks > 1 and counters(report) != counters(base):
                    fail(f"{ranks} ranks: the report's counters differ from 1 rank's")
                runs[ranks].append(times)
                print(f"pair {k + 1}: {ranks} rank(s): report {times['report_seconds']:.2f} s,"
                      f" process {times['process_seconds']:.2f} s", flush=True)
    result = {"network": a.network, "quick": a.quick, "ranks": a.ranks, "mxu": a.mxu,
              "method": a.method, "runs": {str(r): v for r, v in runs.items()}}
    for key in ("report_seconds", "process_seconds"):
        m1 = statistics.median(t[key] for t in runs[1])
        mr = statistics.median(t[key] for t in runs[a.ranks])
        result[key] = {"median_1": m1, f"median_{a.ranks}": mr, "speedup": m1 / mr}
        print(f"{key.replace('_', ' ')}: median {m1:.2f} s on 1 rank, {mr:.2f} s on {a.ranks}:"
              f" {m1 / mr:.2f}x")
    print(f"counters: the same on 1 and {a.ranks} ranks")
    if a.json:
        with open(a.json, "w") as f:
            json.dump(result, f, indent=1)


if __name__ == "__main__":
    main()
