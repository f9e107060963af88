"""triada-explore SPEC: a design-space sweep of the simulator's programs (doc/explore.md).

The spec (TOML) names workloads (transforms, GEMT, TCU problems, convolution networks) and
axes (any option or mesh key, cell mode, ESOP, executor, rank count); every point of their
product runs as its own process in its own session folder, model-only where the counters
have a closed form. Reports are cached by a key of the point's resolved command, its input
files' contents and the program's version and commit: a rerun computes only new or
changed points, a killed sweep resumes. Writes OUT/results.csv (and .parquet with
pyarrow), the Pareto fronts, sensitivity plots and OUT/summary.txt; or, for SLURM, a job
array (OUT/sweep.sbatch) whose tasks fill the cache, then --collect.

Exit codes: 0 (done; failed points are rows with status 'failed'), 1 (a file the spec
names cannot be read), 2 (a bad spec or option), 130 (interrupted).
"""

from __future__ import annotations

import argparse
import concurrent.futures
import fcntl
import json
import os
import pathlib
import shlex
import subprocess
import sys
from typing import Any

from ._explore_cache import Cache, Runner, write_atomically
from ._explore_spec import Point, Resolver, Spec, SpecError, default_bin, expand, load
from ._explore_table import axis_names, columns, results, rows, summary, write_table

__all__ = ["main", "results"]
PROG = "triada-explore"


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    p = argparse.ArgumentParser(prog=PROG, description=__doc__.split("\n\n")[0])
    p.add_argument("spec", type=pathlib.Path, help="the sweep spec (TOML, doc/explore.md)")
    p.add_argument("--out", type=pathlib.Path, help="output folder (default: the spec's out)")
    p.add_argument("--bin", type=pathlib.Path, help="folder of the programs")
    p.add_argument("--jobs", type=int, help="points run at a time (default: the spec's, nproc)")
    what = p.add_mutually_exclusive_group()
    what.add_argument("--slurm", action="store_true",
                      help="write OUT/sweep.sbatch (an array, a task per pending point) and exit")
    what.add_argument("--task", type=int, metavar="I", help="run pending point I of the array")
    what.add_argument("--collect", action="store_true",
                      help="write the table and plots from the cache, run nothing")
    what.add_argument("--list", action="store_true", help="print the points and exit")
    p.add_argument("--no-plot", action="store_true",
                   help="write no PNG files and run no [plot] scripts")
    return p.parse_args(argv)


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    try:
        return run(args)
    except SpecError as e:
        print(f"{PROG}: error: {args.spec}: {e}", file=sys.stderr)
        return e.code
    except KeyboardInterrupt:
        print(f"{PROG}: interrupted; the finished points are cached, a rerun resumes",
              file=sys.stderr)
        return 130


def run(args: argparse.Namespace) -> int:
    spec = load(args.spec)
    if args.out:
        spec.out = args.out.resolve()
    if args.jobs is not None:
        if args.jobs < 1:
            raise SpecError(f"--jobs: expected a positive integer, got {args.jobs}")
        spec.jobs = args.jobs
    bin_dir = args.bin or spec.bin or default_bin()
    if bin_dir is None:
        raise SpecError("no triada-transform found: name the programs' folder with --bin", 1)
    args.bin = bin_dir.resolve()
    points = expand(Resolver(spec, args.bin))
    cache = Cache(spec.out)
    if args.list:
        for p in points:
            state = "cached" if cache.done(p.key) else "pending"
            print(f"{p.index} {p.workload} {json.dumps(p.axes)} {p.run} {state} {p.key[:16]}")
        return 0
    spec.out.mkdir(parents=True, exist_ok=True)
    if args.task is not None:
        return run_task(spec, points, cache, args.task)
    if not args.collect and (args.slurm or spec.mode == "slurm"):
        return write_sbatch(spec, points, cache, args)
    if not args.collect:
        with locked(spec.out):
            run_local(spec, [p for p in points if not cache.done(p.key)], cache)
    return finish(spec, points, cache, not args.no_plot)


class locked:
    """Holds OUT/.lock: one local sweep at a time writes into a folder."""

    def __init__(self, out: pathlib.Path) -> None:
        self.path = out / ".lock"

    def __enter__(self) -> None:
        self.file = open(self.path, "w")
        try:
            fcntl.flock(self.file, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError as e:
            self.file.close()
            raise SpecError(f"{self.path.parent}: another triada-explore is running there",
                            1) from e

    def __exit__(self, *exc: Any) -> None:
        self.file.close()
        self.path.unlink(missing_ok=True)


def run_local(spec: Spec, pending: list[Point], cache: Cache) -> None:
    """Runs the pending points, spec.jobs at a time; on an interrupt ends those under way
    (the finished ones stay cached)."""
    runner = Runner(spec, cache)
    pool = concurrent.futures.ThreadPoolExecutor(max_workers=spec.jobs)
    try:
        futures = [pool.submit(runner.run, p) for p in pending]
        for done, future in enumerate(concurrent.futures.as_completed(futures), 1):
            entry = future.result()
            print(f"{PROG}: {done}/{len(pending)} {entry['workload']} {json.dumps(entry['axes'])}"
                  f": {entry['status']}", file=sys.stderr)
    except BaseException:
        pool.shutdown(wait=False, cancel_futures=True)
        runner.interrupt()
        raise
    pool.shutdown()


def finish(spec: Spec, points: list[Point], cache: Cache, plot: bool) -> int:
    table = rows(spec, points, cache)
    write_table(spec.out, columns(spec, points), table)
    axes = axis_names(points)
    write_atomically(spec.out / "summary.txt", summary(spec, table, axes))
    if plot:
        from ._explore_plot import plot_fronts, plot_sensitivity
        color = spec.plot.get("color") or next(
            (a for a in axes if len({json.dumps(p.axes.get(a)) for p in points}) > 1), None)
        plot_fronts(spec, table, color, spec.out)
        plot_sensitivity(spec, table, axes, spec.out)
    failed = sum(r["status"] != "ok" for r in table)
    tail = f"; {failed} not ok (status in the table)" if failed else ""
    print(f"{PROG}: {len(table)} points in {spec.out / 'results.csv'}{tail}", file=sys.stderr)
    return run_plot_scripts(spec) if plot else 0


def run_plot_scripts(spec: Spec) -> int:
    """[plot] scripts, each as `python3 SCRIPT OUT` with this package importable: 0, or 1
    with one line for the first that fails."""
    package_root = str(pathlib.Path(__file__).resolve().parent.parent)
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [package_root, env.get("PYTHONPATH")]))
    for script in spec.plot_scripts:
        code = subprocess.run([sys.executable, str(script), str(spec.out)], env=env).returncode
        if code != 0:
            print(f"{PROG}: error: {spec.path}: [plot] scripts: {script} failed "
                  f"(exit code {code})", file=sys.stderr)
            return 1
    return 0


def write_sbatch(spec: Spec, points: list[Point], cache: Cache, args: argparse.Namespace) -> int:
    """OUT/tasks.json (the pending points' keys, in array order) and OUT/sweep.sbatch."""
    pending = [p.key for p in points if not cache.done(p.key)]
    if not pending:
        print(f"{PROG}: every point is cached: run --collect", file=sys.stderr)
        return finish(spec, points, cache, not args.no_plot)
    write_atomically(spec.out / "tasks.json", json.dumps({"keys": pending}, indent=1) + "\n")
    package_root = pathlib.Path(__file__).resolve().parent.parent
    task = [sys.executable, "-m", "triada.explore", str(args.spec.resolve()),
            "--out", str(spec.out), "--bin", str(args.bin),
            "--task", "$SLURM_ARRAY_TASK_ID"]
    lines = ["#!/bin/bash", f"#SBATCH --job-name={spec.name}",
             f"#SBATCH --array=0-{len(pending) - 1}",
             f"#SBATCH --output={spec.out}/slurm/%A_%a.out",
             *(f"#SBATCH {o}" for o in spec.slurm_options),
             "set -euo pipefail",
             f"export PYTHONPATH={shlex.quote(str(package_root))}${{PYTHONPATH:+:$PYTHONPATH}}",
             " ".join(shlex.quote(a) for a in task[:-1]) + ' "$SLURM_ARRAY_TASK_ID"']
    (spec.out / "slurm").mkdir(exist_ok=True)
    write_atomically(spec.out / "sweep.sbatch", "\n".join(lines) + "\n")
    print(f"{PROG}: {len(pending)} tasks: sbatch {spec.out / 'sweep.sbatch'}, "
          f"then {PROG} {args.spec} --collect", file=sys.stderr)
    return 0


def run_task(spec: Spec, points: list[Point], cache: Cache, index: int) -> int:
    """Array task INDEX: the point whose key OUT/tasks.json lists at INDEX."""
    try:
        keys = json.loads((spec.out / "tasks.json").read_text(encoding="utf-8"))["keys"]
    except (OSError, ValueError, KeyError) as e:
        raise SpecError(f"{spec.out / 'tasks.json'}: no task list ({e}): run --slurm first", 1)
    if not 0 <= index < len(keys):
        raise SpecError(f"--task: {index} is not in 0..{len(keys) - 1}")
    point = next((p for p in points if p.key == keys[index]), None)
    if point is None:
        raise SpecError(f"--task {index}: the spec or the programs changed since --slurm "
                        "(its point is gone): run --slurm again")
    if not cache.done(point.key):
        entry = Runner(spec, cache).run(point)
        print(f"{PROG}: task {index}: {point.workload} {json.dumps(point.axes)}: "
              f"{entry['status']} {entry['error']}".rstrip(), file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
