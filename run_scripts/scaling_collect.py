#!/usr/bin/env python3
"""The Python half of run_scripts/scaling.sh.

  scaling_collect.py grid N       prints the balanced brick grid of N ranks, "p1 p2 p3"
                                  (MPI_Dims_create(N, 3), non-increasing)
  scaling_collect.py collect ...  reads DIR/reports/*.json, writes DIR/scaling.json (schema
                                  triada-scaling/2) and prints the table

scaling.sh --help documents every key of scaling.json; DEFINITIONS below holds the
formulas, and scaling.json repeats them under "definitions".
"""
import argparse
import glob
import json
import os
import platform
import re
import sys

SCHEMA = "triada-scaling/2"
PARTS = ("compute", "pack", "wait", "idle")
REPORT_NAME = re.compile(r"(strong|weak)_(colocated|dedicated)_r(\d+)_rep(\d+)\.json$")

DEFINITIONS = {
    "T": "simulation_seconds: the best of the reps (engine only, after the input is read and "
         "before the output is written)",
    "layout 1": "the run with 1 brick rank of the same kind and layout",
    "colocated 1": "the colocated run with 1 rank of the same kind",
    "macs_per_second_per_brick_rank": "counters.macs / T / brick_ranks",
    "strong speedup_vs_B": "T(B) / T",
    "strong efficiency_vs_B": "T(B) / T / brick_ranks",
    "weak efficiency_vs_B": "macs_per_second_per_brick_rank / that of B (MAC throughput per "
                            "brick rank against B)",
    "weak speedup_vs_B": "efficiency_vs_B * brick_ranks (scaled speed-up: MAC throughput "
                         "against B)",
    "weak efficiency_time_vs_B": "T(B) / T (classic weak-scaling efficiency; a stage's length "
                                 "grows with the grid, so the work per rank grows too)",
    "B": "layout_1 or colocated_1",
    "split": "per stage, the mean over brick ranks of the report's stage_time compute, pack, "
             "wait and idle seconds; per rank they add up to the stage's seconds",
}


def prime_factors(n):
    out, p = [], 2
    while p * p <= n:
        while n % p == 0:
            out.append(p)
            n //= p
        p += 1
    if n > 1:
        out.append(n)
    return out


def dims_create(n, ndims=3):
    """The balanced factors MPI_Dims_create(n, ndims) gives, non-increasing. Open MPI's
    algorithm: the prime factors of n, largest first, each multiplied into the smallest
    factor so far (the first of equals); the same as Open MPI 4.1's for every n up to 1024."""
    if n < 1:
        raise ValueError(f"rank count must be positive, got {n}")
    dims = [1] * ndims
    for f in sorted(prime_factors(n), reverse=True):
        k = min(range(ndims), key=lambda i: dims[i])
        dims[k] *= f
    return sorted(dims, reverse=True)


def model_seconds_of(report, i, stage):
    """The modelled seconds of stage i: stage_time[i].model_seconds, else report
    model_seconds[i] when that is a list; None when the report has neither."""
    if stage.get("model_seconds") is not None:
        return stage["model_seconds"]
    m = report.get("model_seconds")
    if isinstance(m, list) and i < len(m):
        return m[i]
    return None


def time_split(report):
    """(stages, split_total, split_slowest) from the report's stage_time, or Nones."""
    st = report.get("stage_time")
    if not st:
        return None, None, None
    stages = []
    for i, s in enumerate(st):
        e = {"axis": s["axis"], "seconds": s["seconds"]}
        for p in PARTS:
            e[p] = s[p]["mean"]
        e["model_seconds"] = model_seconds_of(report, i, s)
        stages.append(e)
    total = {k: sum(e[k] for e in stages) for k in ("seconds",) + PARTS}
    models = [e["model_seconds"] for e in stages]
    total["model_seconds"] = sum(models) if all(m is not None for m in models) else None
    slow = max(range(len(stages)), key=lambda i: stages[i]["seconds"])
    return stages, total, dict(stages[slow], stage=slow + 1)


def load_runs(out):
    runs = {}
    for path in sorted(glob.glob(os.path.join(out, "reports", "*.json"))):
        m = REPORT_NAME.match(os.path.basename(path))
        if not m:
            continue
        with open(path) as f:
            rep = json.load(f)
        runs.setdefault((m.group(1), m.group(2), int(m.group(3))), []).append(rep)
    return runs


def make_record(kind, layout, r, reps, cores):
    best = min(reps, key=lambda j: j["simulation_seconds"])
    world = best["mesh"]["world_size"]
    mem = best.get("memory", {})
    t = best["simulation_seconds"]
    macs = best["counters"]["macs"]
    stages, total, slowest = time_split(best)
    return {
        "kind": kind,
        "layout": layout,
        "brick_ranks": r,
        "actuator_ranks": best["mesh"].get("actuator_ranks", 3 if layout == "dedicated" else 0),
        "world_size": world,
        "oversubscribed": world > cores,
        "shape": best["problem"]["in_shape"],
        "brick_grid": best["mesh"]["brick_ranks"],
        "reps": len(reps),
        "simulation_seconds": t,
        "simulation_seconds_all": [j["simulation_seconds"] for j in reps],
        "wall_seconds": best["wall_seconds"],
        "stage_seconds": best.get("stage_seconds"),
        "stages": stages,
        "split_total": total,
        "split_slowest": slowest,
        "macs": macs,
        "macs_per_second_per_brick_rank": macs / t / r if t > 0 else None,
        "mpi_bytes": best["mpi"]["bytes"],
        "mpi_messages": best["mpi"]["messages"],
        "bytes_per_rank": best["mpi"]["bytes"] / world,
        "peak_rss_bytes_per_rank": mem.get("peak_rss_bytes"),
        "baseline_rss_bytes_per_rank": mem.get("baseline_rss_bytes"),
        "brick_tensor_bytes_per_rank": mem.get("brick_tensor_bytes"),
        "peak_rss_bytes_max": max(mem["peak_rss_bytes"]) if mem.get("peak_rss_bytes") else None,
    }


def add_ratios(rec, base, suffix):
    """The speed-up and efficiency keys of rec against the record `base` (or None)."""
    keys = [f"speedup_vs_{suffix}", f"efficiency_vs_{suffix}"]
    if rec["kind"] == "weak":
        keys.append(f"efficiency_time_vs_{suffix}")
    if base is None:
        rec.update({k: None for k in keys})
        return
    t_b, t = base["simulation_seconds"], rec["simulation_seconds"]
    r = rec["brick_ranks"]
    if rec["kind"] == "strong":
        rec[keys[0]] = t_b / t
        rec[keys[1]] = t_b / t / r
    else:
        eff = rec["macs_per_second_per_brick_rank"] / base["macs_per_second_per_brick_rank"]
        rec[keys[1]] = eff
        rec[keys[0]] = eff * r
        rec[keys[2]] = t_b / t


def physical_cores(cpus):
    """Distinct (package, core) pairs among the logical CPUs `cpus` (/proc/cpuinfo), or None."""
    pairs, cpu, package = set(), None, None
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                key, _, value = (s.strip() for s in line.partition(":"))
                if key == "processor":
                    cpu, package = int(value), None
                elif key == "physical id":
                    package = value
                elif key == "core id" and cpu in cpus:
                    pairs.add((package, value))
    except (OSError, ValueError):
        return None
    return len(pairs) or None


def cores_of_the_run():
    """Cores the ranks ran on: SLURM's CPUs (per node x nodes) in a job, else this machine's
    physical cores among the CPUs this process may use (logical CPUs if unknown)."""
    if os.environ.get("SLURM_CPUS_ON_NODE"):
        per_node = int(os.environ["SLURM_CPUS_ON_NODE"].split("(")[0].split(",")[0])
        return per_node * int(os.environ.get("SLURM_JOB_NUM_NODES", "1")), "slurm"
    cpus = os.sched_getaffinity(0)
    return physical_cores(cpus) or len(cpus), "local"


def fmt(v, spec, none="-"):
    return none if v is None else format(v, spec)


def print_table(records, cores):
    mib = 1 / 2**20
    has_model = any((r["split_total"] or {}).get("model_seconds") is not None for r in records)
    head = (f"{'kind':6} {'layout':9} {'bricks':>6} {'world':>5} {'oversub':>7} {'shape':>12} "
            f"{'grid':>7} {'sim s':>8} {'wall s':>8} {'T1/Tr':>6} {'eff':>5} {'eff/c1':>6} "
            f"{'compute':>8} {'pack':>7} {'wait':>7} {'idle':>7}")
    if has_model:
        head += f" {'model s':>8}"
    head += f" {'MPI MiB':>8} {'MiB/rank':>8} {'RSS MiB':>8}"
    print(head)
    for r in records:
        tt = r["efficiency_time_vs_layout_1"] if r["kind"] == "weak" else r["speedup_vs_layout_1"]
        sp = r["split_total"] or {}
        line = (f"{r['kind']:6} {r['layout']:9} {r['brick_ranks']:>6} {r['world_size']:>5} "
                f"{'yes' if r['oversubscribed'] else 'no':>7} {'x'.join(map(str, r['shape'])):>12} "
                f"{'x'.join(map(str, r['brick_grid'])):>7} {r['simulation_seconds']:8.4f} "
                f"{r['wall_seconds']:8.4f} {fmt(tt, '.2f'):>6} "
                f"{fmt(r['efficiency_vs_layout_1'], '.2f'):>5} "
                f"{fmt(r['efficiency_vs_colocated_1'], '.2f'):>6}")
        for p, w in zip(PARTS, (8, 7, 7, 7)):
            line += f" {fmt(sp.get(p), '.4f'):>{w}}"
        if has_model:
            line += f" {fmt(sp.get('model_seconds'), '.4f'):>8}"
        line += (f" {r['mpi_bytes'] * mib:8.2f} {r['bytes_per_rank'] * mib:8.2f} "
                 f"{fmt(r['peak_rss_bytes_max'] and r['peak_rss_bytes_max'] * mib, '.1f'):>8}")
        print(line)
    print(f"(bricks: brick ranks; world: MPI processes, bricks + 3 actuator ranks when dedicated; "
          f"oversub: world above the {cores} cores; sim s: best simulation_seconds of the reps; "
          "T1/Tr and eff against 1 brick rank of the same layout, eff/c1 against the colocated "
          "1-rank run; eff: strong T1/Tr/bricks, weak MAC throughput per brick rank; "
          "compute..idle: mean seconds over brick ranks, summed over the stages"
          + ("; model s: the modelled time, summed over the stages" if has_model else "") + ")")


def collect(a):
    cores, cores_from = cores_of_the_run()
    runs = load_runs(a.out)
    order = {"strong": 0, "weak": 1, "colocated": 0, "dedicated": 1}
    records = [make_record(k, lay, r, reps, cores)
               for (k, lay, r), reps in sorted(runs.items(), key=lambda kv: (
                   order[kv[0][0]], order[kv[0][1]], kv[0][2]))]
    if not records:
        sys.exit(f"scaling_collect.py: error: no reports in {a.out}/reports")
    for rec in records:
        same = [b for b in records if b["kind"] == rec["kind"] and b["brick_ranks"] == 1]
        add_ratios(rec, next((b for b in same if b["layout"] == rec["layout"]), None), "layout_1")
        add_ratios(rec, next((b for b in same if b["layout"] == "colocated"), None), "colocated_1")
    doc = {
        "schema": SCHEMA,
        "machine": {"host": platform.node(), "cpus": os.cpu_count(), "cores": cores,
                    "cores_from": cores_from, "processor": platform.processor(),
                    "loadavg_end": list(os.getloadavg())},
        "settings": {"transform": a.transform, "executor": a.executor, "transport": a.transport,
                     "reps": a.reps, "size": a.size, "weak_size": a.weak_size,
                     "weak_grid": a.weak_grid, "layouts": a.layouts.split(","),
                     "launcher": a.launcher, "oversubscribe": a.oversubscribe,
                     "oversubscribed": any(r["oversubscribed"] for r in records),
                     "timing": "simulation_seconds (engine only), best of reps"},
        "definitions": DEFINITIONS,
        "records": records,
    }
    with open(os.path.join(a.out, "scaling.json"), "w") as f:
        json.dump(doc, f, indent=1)
    print()
    print_table(records, cores)


def main():
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = ap.add_subparsers(dest="cmd", required=True)
    g = sub.add_parser("grid", help="balanced brick grid of N ranks")
    g.add_argument("n", type=int)
    c = sub.add_parser("collect", help="scaling.json and the table from DIR/reports")
    c.add_argument("--out", required=True)
    for k in ("transform", "executor", "transport", "weak-grid", "layouts", "launcher"):
        c.add_argument("--" + k, required=True)
    for k in ("reps", "size", "weak-size"):
        c.add_argument("--" + k, type=int, required=True)
    c.add_argument("--oversubscribe", action="store_true")
    a = ap.parse_args()
    if a.cmd == "grid":
        print(*dims_create(a.n))
    else:
        collect(a)


if __name__ == "__main__":
    main()
