"""triada-explore's results: the table (one row per point, from the cache alone, so a rerun
writes the same bytes), the Pareto fronts, the summary and the plots."""

from __future__ import annotations

import csv
import io
import json
import math
import pathlib
from typing import Any

from ._explore_cache import Cache
from ._files import write_atomically
from ._explore_spec import FRONTS, PROVENANCE, Point, Spec, format_value



def metric(report: Any, dotted: str) -> Any:
    """The report's value at a dotted key; a number picks a list's element (rows.0.seconds)."""
    for part in dotted.split("."):
        if isinstance(report, list) and part.isdigit() and int(part) < len(report):
            report = report[int(part)]
        elif isinstance(report, dict) and part in report:
            report = report[part]
        else:
            return None
    return report


def cell(value: Any) -> str:
    if value is None:
        return ""
    if isinstance(value, (dict, list)) and not all(isinstance(v, (int, float)) for v in value):
        return json.dumps(value, sort_keys=True)
    return format_value(value)


def rows(spec: Spec, points: list[Point], cache: Cache) -> list[dict[str, Any]]:
    """One row per point: its axis values, metrics, status and provenance; a point with no
    result yet has status 'pending'."""
    table = []
    for p in points:
        entry = cache.entry(p.key) or {"status": "pending", "error": "not run yet"}
        # The program's report, and triada-gen's as generate.* for a generated input.
        report = {**(entry.get("report") or {}), "generate": entry.get("generate")}
        version, commit = version_commit(p.version)
        row = {"point": p.index, "workload": p.workload, "kind": p.kind, "run": p.run,
               **{a: p.axes.get(a) for a in axis_names(points)},
               **{m: metric(report, m) for m in spec.metrics},
               "status": entry["status"], "error": entry.get("error", ""),
               "version": version, "commit": commit, "key": p.key,
               "session": session_of(p.key) if "command" in entry else None,
               "wall_s": entry.get("wall_s"), "host": entry.get("host"),
               "command": " ".join(entry.get("command", []))}
        table.append(row)
    mark_fronts(spec, table)
    return table


def session_of(key: str) -> str:
    """A point's session folder, relative to OUT (its report, logs and files)."""
    return f"runs/{key[:16]}"


def results(out: pathlib.Path | str) -> list[dict[str, Any]]:
    """OUT/results.csv's rows (strings, as written), each with `report` (the program's
    report, from the cache; None unless the point ran) and `generate` (triada-gen's report
    of a generated input, or None)."""
    out = pathlib.Path(out)
    with open(out / "results.csv", newline="", encoding="utf-8") as f:
        table = list(csv.DictReader(f))
    cache = Cache(out)
    for row in table:
        entry = (cache.entry(row["key"]) or {}) if row["status"] == "ok" else {}
        row["report"], row["generate"] = entry.get("report"), entry.get("generate")
    return table


def version_commit(text: str) -> tuple[str, str]:
    """("0.1.0", "<hash>") of --version's "triada-x 0.1.0" and "commit <hash>" lines."""
    lines = text.splitlines() + ["", ""]
    return lines[0].rpartition(" ")[2], lines[1].removeprefix("commit ").strip()


def axis_names(points: list[Point]) -> list[str]:
    names: dict[str, None] = {}
    for p in points:
        names.update(dict.fromkeys(p.axes))
    return list(names)


def columns(spec: Spec, points: list[Point]) -> list[str]:
    return (["point", "workload", "kind", "run"] + axis_names(points) + spec.metrics
            + [f"pareto_{f}" for f in FRONTS] + PROVENANCE)


def pareto_front(values: list[tuple[float, float]]) -> list[int]:
    """Indices of the points no other point dominates (<= in both, < in one), by a sort and
    one pass: sorted by (x, y), a point is on the front if its y is below every earlier
    point's, or equals the last front point's (x, y)."""
    order = sorted(range(len(values)), key=lambda i: values[i])
    front: list[int] = []
    best = math.inf
    for i in order:
        if values[i][1] < best or (front and values[i] == values[front[-1]]):
            front.append(i)
            best = min(best, values[i][1])
    return sorted(front)


def plotted(spec: Spec, row: dict[str, Any], x: str, y: str) -> tuple[float, float] | None:
    """The row's (x, y) metrics ([plot] time, energy or area), None unless both are finite."""
    vx: Any = row.get(spec.plot[x])
    vy: Any = row.get(spec.plot[y])
    if row["status"] != "ok" or not (finite(vx) and finite(vy)):
        return None
    return float(vx), float(vy)


def finite(v: Any) -> bool:
    return isinstance(v, (int, float)) and not isinstance(v, bool) and math.isfinite(v)


def plotted_all(spec: Spec, rows: list[dict[str, Any]], x: str,
                y: str) -> list[tuple[float, float]]:
    found = (plotted(spec, r, x, y) for r in rows)
    return [v for v in found if v is not None]


def mark_fronts(spec: Spec, table: list[dict[str, Any]]) -> None:
    """pareto_F: 1 on each workload's non-dominated points, 0 off, empty where unplotted."""
    for name, (x, y) in FRONTS.items():
        for row in table:
            row[f"pareto_{name}"] = None
        for workload in dict.fromkeys(r["workload"] for r in table):
            members = [r for r in table if r["workload"] == workload
                       and plotted(spec, r, x, y) is not None]
            front = set(pareto_front(plotted_all(spec, members, x, y)))
            for i, r in enumerate(members):
                r[f"pareto_{name}"] = int(i in front)


def write_table(out: pathlib.Path, cols: list[str], table: list[dict[str, Any]]) -> None:
    text = io.StringIO()
    writer = csv.writer(text, lineterminator="\n")
    writer.writerow(cols)
    for row in table:
        writer.writerow([cell(row.get(c)) for c in cols])
    write_atomically(out / "results.csv", text.getvalue())
    try:
        import pyarrow  # type: ignore[import]
        import pyarrow.parquet  # type: ignore[import]
    except ImportError:
        return
    data = {c: [cell(r.get(c)) for r in table] for c in cols}
    tmp = out / ".results.parquet.tmp"
    pyarrow.parquet.write_table(pyarrow.table(data), tmp)
    tmp.replace(out / "results.parquet")


def summary(spec: Spec, table: list[dict[str, Any]], axes: list[str]) -> str:
    """Per workload: its counts, then its time-energy front's points, fastest first."""
    lines = [f"sweep {spec.name}: {len(table)} points"]
    t, e, a = spec.plot["time"], spec.plot["energy"], spec.plot["area"]
    for workload in dict.fromkeys(r["workload"] for r in table):
        mine = [r for r in table if r["workload"] == workload]
        failed = sum(r["status"] == "failed" for r in mine)
        front = sorted((r for r in mine if r["pareto_time_energy"] == 1), key=lambda r: r[t])
        lines.append(f"\n{workload}: {len(mine)} points, {failed} failed; "
                     f"time-energy front of {len(front)}:")
        for r in front:
            setting = ", ".join(f"{k}={cell(r[k])}" for k in axes if r.get(k) is not None)
            shown = "  ".join(f"{m}={r[m]:.4g}" for m in (t, e, a) if finite(r.get(m)))
            lines.append(f"  {shown}  [{setting}]")
    return "\n".join(lines) + "\n"
