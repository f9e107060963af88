"""triada-explore's plots (matplotlib): the Pareto fronts, one panel per workload, and the
per-axis sensitivity of time and energy."""

from __future__ import annotations

import math
import pathlib
import statistics
from typing import Any

from ._explore_spec import Spec
from ._explore_table import FRONTS, cell, plotted, plotted_all


def pyplot() -> Any:
    import matplotlib  # type: ignore[import]
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt  # type: ignore[import]
    return plt


def panels(plt: Any, count: int) -> tuple[Any, list[Any]]:
    ncols = min(count, 3)
    nrows = math.ceil(count / ncols)
    fig, axs = plt.subplots(nrows, ncols, figsize=(4.6 * ncols, 3.8 * nrows), squeeze=False)
    for ax in axs.flat[count:]:
        ax.set_visible(False)
    return fig, list(axs.flat[:count])


def workloads(table: list[dict[str, Any]]) -> list[str]:
    return list(dict.fromkeys(r["workload"] for r in table))


def plot_fronts(spec: Spec, table: list[dict[str, Any]], color: str | None,
                out: pathlib.Path) -> None:
    plt = pyplot()
    colors = {v: f"C{i % 10}" for i, v in enumerate(dict.fromkeys(
        cell(r.get(color)) for r in table)) } if color else {}
    for name, (x, y) in FRONTS.items():
        fig, axs = panels(plt, len(workloads(table)))
        for ax, workload in zip(axs, workloads(table)):
            mine = [r for r in table if r["workload"] == workload and plotted(spec, r, x, y)]
            front_panel(ax, spec, mine, (x, y), color, colors)
            ax.set_title(workload)
        fig.tight_layout()
        fig.savefig(out / f"pareto_{name}.png", dpi=110)
        plt.close(fig)


def front_panel(ax: Any, spec: Spec, rows: list[dict[str, Any]], xy: tuple[str, str],
                color: str | None, colors: dict[str, str]) -> None:
    x, y = xy
    for value, c in colors.items() or {None: "C0"}.items():
        pts = plotted_all(spec, [r for r in rows if not color or cell(r.get(color)) == value], x, y)
        if pts:
            ax.scatter(*zip(*pts), s=14, color=c, alpha=0.6,
                       label=f"{color}={value}" if color else None)
    front = sorted(plotted_all(spec, [r for r in rows if r[f"pareto_{x}_{y}"] == 1], x, y))
    if front:
        ax.step(*zip(*front), where="post", color="k", lw=1)
        ax.scatter(*zip(*front), s=30, facecolors="none", edgecolors="k", label="front")
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_xlabel(spec.plot[x])
    ax.set_ylabel(spec.plot[y])
    if not rows:  # e.g. a triada-bench workload: no modelled time or energy
        ax.text(0.5, 0.5, "no point with both metrics", ha="center", transform=ax.transAxes)
    legend(ax)


def legend(ax: Any) -> None:
    if ax.get_legend_handles_labels()[0]:
        ax.legend(fontsize=7)


def plot_sensitivity(spec: Spec, table: list[dict[str, Any]], axes: list[str],
                     out: pathlib.Path) -> None:
    """Per axis of more than one value: each metric's median, min and max over the other
    axes' values, against that axis' values, a line per workload."""
    plt = pyplot()
    for axis in axes:
        values = list(dict.fromkeys(cell(r.get(axis)) for r in table if r.get(axis) is not None))
        if len(values) < 2:
            continue
        fig, axs = panels(plt, 2)
        for ax, which in zip(axs, ("time", "energy")):
            for k, workload in enumerate(workloads(table)):
                sensitivity_line(ax, spec.plot[which], table, workload, axis, values, f"C{k}")
            ax.set_xticks(range(len(values)), values)
            ax.set_xlabel(axis)
            ax.set_ylabel(spec.plot[which])
            ax.set_yscale("log")
            legend(ax)
        fig.tight_layout()
        fig.savefig(out / f"sensitivity_{axis.replace('/', '_')}.png", dpi=110)
        plt.close(fig)


def sensitivity_line(ax: Any, metric: str, table: list[dict[str, Any]], workload: str,
                     axis: str, values: list[str], color: str) -> None:
    xs, med, lo, hi = [], [], [], []
    for i, v in enumerate(values):
        got = [r[metric] for r in table if r["workload"] == workload and r["status"] == "ok"
               and cell(r.get(axis)) == v and isinstance(r.get(metric), (int, float))
               and r[metric] > 0]
        if got:
            xs.append(i)
            med.append(statistics.median(got))
            lo.append(min(got))
            hi.append(max(got))
    if xs:
        ax.plot(xs, med, "o-", color=color, label=workload)
        ax.fill_between(xs, lo, hi, color=color, alpha=0.15)
