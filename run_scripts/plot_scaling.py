#!/usr/bin/env python3
"""Plot DIR/scaling.json (written by run_scripts/scaling.sh) to PNG.

Writes, into the output directory:
  scaling_strong.png  strong scaling: simulation time, speed-up T1/Tr and efficiency vs ranks
  scaling_weak.png    weak scaling: simulation time, scaled speed-up (MAC throughput vs
                      1 rank) and efficiency (work-normalised and classic T1/Tr) vs ranks
  scaling_bytes.png   MPI bytes per rank and peak RSS per rank vs ranks (strong and weak)
Every plot names the cores the ranks ran on (machine.cores; older files: machine.cpus) and
shades the rank counts above them: there the ranks share cores (oversubscribed), so the
attainable speed-up is the core count, not the rank count.
"""
import os

from plot_common import load_results, pyplot

plt = pyplot("plot_scaling.py")

MIB = 2.0 ** 20


def shape_str(r):
    return "x".join(str(v) for v in r["shape"])


def setup_ranks_axis(ax, ranks):
    ax.set_xscale("log", base=2)
    ax.set_xticks(ranks)
    ax.set_xticklabels([str(r) for r in ranks])
    ax.set_xlabel("MPI ranks (brick ranks, actuators co-located)")
    ax.grid(True, which="both", alpha=0.3)


def shade_oversubscribed(ax, ranks, cores):
    """Grey band over the rank counts above `cores`, labelled."""
    above = [r for r in ranks if r > cores]
    if not above:
        return
    start = (max([r for r in ranks if r <= cores], default=above[0] / 2) * above[0]) ** 0.5
    ax.axvspan(start, max(ranks) * 1.15, color="0.88", zorder=0,
               label=f"oversubscribed: ranks > {cores} cores share them")


def annotate_grid(ax, rs, ys):
    for r, y in zip(rs, ys):
        ax.annotate("x".join(map(str, r["brick_grid"])), (r["ranks"], y), textcoords="offset points",
                    xytext=(4, 4), fontsize=7, color="0.35")


def plot_kind(recs, kind, meta, path):
    rs = sorted((r for r in recs if r["kind"] == kind), key=lambda r: r["ranks"])
    if not rs:
        return False
    ranks = [r["ranks"] for r in rs]
    cores = meta["cores"]
    attainable = [min(r, cores) for r in ranks]  # speed-up the cores allow
    fig, axes = plt.subplots(1, 3, figsize=(14, 4.3))
    t = [r["simulation_seconds"] for r in rs]
    w = [r["wall_seconds"] for r in rs]
    ax = axes[0]
    ax.plot(ranks, t, "o-", label="simulation (engine only, best)")
    ax.plot(ranks, w, "s--", color="0.5", label="wall (whole run incl. I/O)")
    annotate_grid(ax, rs, t)
    setup_ranks_axis(ax, ranks)
    ax.set_ylabel("time (s)")
    ax.set_ylim(bottom=0)
    ax.set_title("time per run (labels: brick grid)")
    ax.legend(fontsize=8)

    ax = axes[1]
    shade_oversubscribed(ax, ranks, cores)
    ax.plot(ranks, ranks, ":", color="k", label="ideal (one core per rank)")
    if max(ranks) > cores:
        ax.plot(ranks, attainable, "--", color="0.4", label=f"ideal on {cores} cores: min(ranks, {cores})")
    if all(r.get("speedup") is not None for r in rs):
        sp = [r["speedup"] for r in rs]
        ax.plot(ranks, sp, "o-", color="C1",
                label="speed-up T1/Tr" if kind == "strong" else "scaled speed-up (MAC/s vs 1 rank)")
        for x, y in zip(ranks, sp):
            note = f" ({x} ranks on {cores} cores)" if x > cores else ""
            ax.annotate(f"{y:.2f}{note}", (x, y), textcoords="offset points", xytext=(4, -12),
                        fontsize=8, ha="right" if note else "left")
    setup_ranks_axis(ax, ranks)
    ax.set_ylabel("speed-up (x)")
    ax.set_ylim(bottom=0)
    ax.set_title("speed-up")
    ax.legend(fontsize=8, loc="upper left")

    ax = axes[2]
    shade_oversubscribed(ax, ranks, cores)
    ax.axhline(1.0, ls=":", color="k", label="ideal (one core per rank)")
    if max(ranks) > cores:
        ax.plot(ranks, [a / r for a, r in zip(attainable, ranks)], "--", color="0.4",
                label=f"ideal on {cores} cores: min(ranks, {cores}) / ranks")
    if all(r.get("efficiency") is not None for r in rs):
        ef = [r["efficiency"] for r in rs]
        if kind == "strong":
            ax.plot(ranks, ef, "o-", color="C2", label="efficiency = speed-up / ranks")
        else:
            ax.plot(ranks, ef, "o-", color="C2", label="work-normalised (MAC/s per rank vs 1 rank)")
            ax.plot(ranks, [r["efficiency_time"] for r in rs], "s--", color="C3",
                    label="classic T1/Tr (work per rank grows)")
        for x, y in zip(ranks, ef):
            ax.annotate(f"{y:.2f}", (x, y), textcoords="offset points", xytext=(4, 4), fontsize=8)
    setup_ranks_axis(ax, ranks)
    ax.set_ylabel("parallel efficiency")
    ax.set_ylim(0, max(1.15, max((r.get("efficiency") or 0) for r in rs) * 1.1))
    ax.set_title("parallel efficiency")
    ax.legend(fontsize=8)

    if kind == "strong":
        what = f"strong scaling, fixed {shape_str(rs[0])} tensor"
    else:
        what = f"weak scaling, {shape_str(rs[0])} per rank ({shape_str(rs[-1])} on {rs[-1]['ranks']} ranks)"
    fig.suptitle(f"triada-transform {meta['transform']} ({what}); {meta['host']}: {cores_str(meta, ranks)}")
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return True


def cores_str(meta, ranks):
    """'2 cores; 4 ranks oversubscribed (2 ranks per core)' or '16 cores'."""
    cores, most = meta["cores"], max(ranks)
    if most <= cores:
        return f"ran on {cores} cores, one rank per core at most"
    return f"ran on {cores} cores; {most} ranks oversubscribed ({most / cores:g} ranks per core)"


def plot_bytes(recs, meta, path):
    fig, axes = plt.subplots(1, 2, figsize=(13, 5.6))
    ranks_all = sorted({r["ranks"] for r in recs})
    for kind, c in (("strong", "C0"), ("weak", "C1")):
        rs = sorted((r for r in recs if r["kind"] == kind), key=lambda r: r["ranks"])
        if not rs:
            continue
        ranks = [r["ranks"] for r in rs]
        lbl = f"{kind} ({shape_str(rs[0])}" + (" per rank)" if kind == "weak" else ")")
        axes[0].plot(ranks, [r["bytes_per_rank"] / MIB for r in rs], "o-", color=c, label=lbl)
        if all(r.get("peak_rss_bytes_per_rank") for r in rs):
            axes[1].plot(ranks, [max(r["peak_rss_bytes_per_rank"]) / MIB for r in rs], "o-", color=c,
                         label=f"{lbl}: peak RSS, max over ranks")
            axes[1].plot(ranks, [max(r["baseline_rss_bytes_per_rank"]) / MIB for r in rs], "x--", color=c,
                         label=f"{kind}: RSS at start (libraries, MPI), max over ranks")
            axes[1].plot(ranks, [max(r["brick_tensor_bytes_per_rank"]) / MIB for r in rs], "^:", color=c,
                         label=f"{kind}: brick tensor, max over ranks")
    axes[0].set_ylabel("MPI bytes per rank (MiB)")
    axes[0].set_title("simulated bus traffic: report mpi.bytes / ranks")
    axes[1].set_ylabel("memory per rank (MiB)")
    axes[1].set_title("peak resident memory per rank")
    for ax in axes:
        setup_ranks_axis(ax, ranks_all)
        ax.set_ylim(bottom=0)
        ax.legend(fontsize=8, loc="upper center", bbox_to_anchor=(0.5, -0.16), ncol=1 if ax is axes[0] else 2)
    fig.suptitle(f"triada-transform {meta['transform']}: MPI traffic and memory per rank; "
                 f"{meta['host']}: {cores_str(meta, ranks_all)}")
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)


def main():
    doc, _, out = load_results("plot_scaling.py", __doc__,
                               "scaling.json written by run_scripts/scaling.sh", "triada-scaling/1")
    machine = doc["machine"]
    meta = {"transform": doc["settings"]["transform"], "host": machine["host"],
            "cores": machine.get("cores") or machine["cpus"]}
    recs = doc["records"]
    written = []
    for kind in ("strong", "weak"):
        p = os.path.join(out, f"scaling_{kind}.png")
        if plot_kind(recs, kind, meta, p):
            written.append(p)
    p = os.path.join(out, "scaling_bytes.png")
    plot_bytes(recs, meta, p)
    written.append(p)
    for p in written:
        print(f"wrote {p}")


if __name__ == "__main__":
    main()
