#!/usr/bin/env python3
"""Plot DIR/scaling.json (written by run_scripts/scaling.sh) to PNG.

Writes, into the output directory:
  scaling_strong.png  strong scaling: simulation time, speed-up T1/Tr and efficiency vs brick
                      ranks, one line per layout (colocated, dedicated); the dedicated layout
                      also against the colocated 1-rank run (dashed)
  scaling_weak.png    weak scaling: simulation time, scaled speed-up (MAC throughput vs
                      1 brick rank) and efficiency (MAC throughput per brick rank, and the
                      classic T1/Tr) vs brick ranks, one line per layout
  scaling_split.png   where the time goes: per (kind, layout), a stacked bar per brick rank
                      count of the mean compute, pack, wait and idle seconds summed over the
                      stages; the modelled time (a diamond) when the reports have it, and
                      simulation_seconds (a bar) for comparison
  scaling_bytes.png   MPI bytes per rank and peak RSS per rank vs brick ranks
Every plot names the cores the ranks ran on (machine.cores; older files: machine.cpus).
Runs with more MPI processes than cores (oversubscribed: the ranks share cores, so the
attainable speed-up is the core count) have hollow markers; the grey band marks the brick
rank counts where even the colocated layout is oversubscribed. A triada-scaling/1 file
(colocated runs only, weak scaling on an r x 1 x 1 line) is read as well.
"""
import os

from plot_common import load_results, pyplot

plt = pyplot("plot_scaling.py")

MIB = 2.0 ** 20
PARTS = ("compute", "pack", "wait", "idle")
PART_COLORS = {"compute": "C2", "pack": "C4", "wait": "C3", "idle": "0.7"}
LAYOUT_COLORS = {"colocated": "C0", "dedicated": "C1"}
LAYOUT_LABELS = {"colocated": "colocated (every rank a brick rank)",
                 "dedicated": "dedicated (brick ranks + 3 actuator ranks)"}


def shape_str(r):
    return "x".join(str(v) for v in r["shape"])


def upgrade_v1(doc):
    """A triada-scaling/1 document in the keys of /2: colocated runs, weak on a line."""
    doc["settings"].setdefault("weak_grid", "line")
    cores = doc["machine"].get("cores") or doc["machine"]["cpus"]
    for r in doc["records"]:
        r["layout"] = "colocated"
        r["brick_ranks"] = r["ranks"]
        r.setdefault("world_size", r["ranks"])
        r["oversubscribed"] = r["world_size"] > cores
        r["split_total"] = None
        for b in ("layout_1", "colocated_1"):
            r[f"speedup_vs_{b}"] = r.get("speedup")
            r[f"efficiency_vs_{b}"] = r.get("efficiency")
            if r["kind"] == "weak":
                r[f"efficiency_time_vs_{b}"] = r.get("efficiency_time")
    return doc


def series(recs, kind, layout):
    return sorted((r for r in recs if r["kind"] == kind and r["layout"] == layout),
                  key=lambda r: r["brick_ranks"])


def setup_ranks_axis(ax, ranks):
    ax.set_xscale("log", base=2)
    ax.set_xticks(ranks)
    ax.set_xticklabels([str(r) for r in ranks])
    ax.set_xlabel("brick ranks")
    ax.grid(True, which="both", alpha=0.3)


def shade_oversubscribed(ax, ranks, cores):
    """Grey band over the brick rank counts above `cores` (colocated: ranks share cores)."""
    above = [r for r in ranks if r > cores]
    if not above:
        return
    start = (max([r for r in ranks if r <= cores], default=above[0] / 2) * above[0]) ** 0.5
    ax.axvspan(start, max(ranks) * 1.15, color="0.88", zorder=0,
               label=f"colocated oversubscribed: ranks > {cores} cores")


def line(ax, rs, key, color, style, marker, label):
    """rs' `key` against brick ranks: a line, filled markers, hollow where oversubscribed.
    Returns the points drawn."""
    pts = [(r["brick_ranks"], r[key], r["oversubscribed"]) for r in rs if r.get(key) is not None]
    if not pts:
        return []
    xs, ys = [p[0] for p in pts], [p[1] for p in pts]
    ax.plot(xs, ys, style, color=color, label=label)
    for x, y, over in pts:
        ax.plot([x], [y], marker, color=color, mfc="white" if over else color, ms=6)
    return list(zip(xs, ys))


def hollow_legend(ax, recs):
    if any(r["oversubscribed"] for r in recs):
        ax.plot([], [], "o", color="0.3", mfc="white", label="hollow: oversubscribed (processes > cores)")


def annotate_grid(ax, rs, key):
    for r in rs:
        if r.get(key) is not None:
            ax.annotate("x".join(map(str, r["brick_grid"])), (r["brick_ranks"], r[key]),
                        textcoords="offset points", xytext=(4, 4), fontsize=7, color="0.35")


def layouts_of(recs, kind):
    return [lay for lay in ("colocated", "dedicated") if series(recs, kind, lay)]


def plot_kind(recs, kind, meta, path):
    lays = layouts_of(recs, kind)
    if not lays:
        return False
    krecs = [r for r in recs if r["kind"] == kind]
    ranks = sorted({r["brick_ranks"] for r in krecs})
    cores = meta["cores"]
    fig, axes = plt.subplots(1, 3, figsize=(15, 4.8))
    ax = axes[0]
    for lay in lays:
        rs, c = series(recs, kind, lay), LAYOUT_COLORS[lay]
        line(ax, rs, "simulation_seconds", c, "-", "o", f"{lay}: simulation (engine only, best)")
        line(ax, rs, "wall_seconds", c, ":", "s", f"{lay}: wall (whole run incl. I/O)")
    annotate_grid(ax, series(recs, kind, lays[0]), "simulation_seconds")
    setup_ranks_axis(ax, ranks)
    ax.set_ylabel("time (s)")
    ax.set_ylim(bottom=0)
    ax.set_title("time per run (labels: brick grid)")
    ax.legend(fontsize=7)

    ax = axes[1]
    shade_oversubscribed(ax, ranks, cores)
    ax.plot(ranks, ranks, ":", color="k", label="ideal (one core per rank)")
    if max(ranks) > cores:
        ax.plot(ranks, [min(r, cores) for r in ranks], "--", color="0.4",
                label=f"ideal on {cores} cores (colocated): min(ranks, {cores})")
    for lay in lays:
        rs, c = series(recs, kind, lay), LAYOUT_COLORS[lay]
        what = "T1/Tr" if kind == "strong" else "MAC/s vs 1 brick rank"
        pts = line(ax, rs, "speedup_vs_layout_1", c, "-", "o", f"{lay}: {what}, same layout")
        for x, y in pts:
            ax.annotate(f"{y:.2f}", (x, y), textcoords="offset points", xytext=(4, -12), fontsize=7)
        if lay != "colocated":
            line(ax, rs, "speedup_vs_colocated_1", c, "--", "^", f"{lay}: {what}, colocated 1 rank")
    hollow_legend(ax, krecs)
    setup_ranks_axis(ax, ranks)
    ax.set_ylabel("speed-up (x)")
    ax.set_ylim(bottom=0)
    ax.set_title("speed-up" if kind == "strong" else "scaled speed-up")
    ax.legend(fontsize=7, loc="upper left")

    ax = axes[2]
    shade_oversubscribed(ax, ranks, cores)
    ax.axhline(1.0, ls=":", color="k", label="ideal (one core per rank)")
    if max(ranks) > cores:
        ax.plot(ranks, [min(r, cores) / r for r in ranks], "--", color="0.4",
                label=f"ideal on {cores} cores (colocated): min(ranks, {cores}) / ranks")
    top = 1.0
    for lay in lays:
        rs, c = series(recs, kind, lay), LAYOUT_COLORS[lay]
        if kind == "strong":
            pts = line(ax, rs, "efficiency_vs_layout_1", c, "-", "o", f"{lay}: T1/Tr / brick ranks")
        else:
            pts = line(ax, rs, "efficiency_vs_layout_1", c, "-", "o",
                       f"{lay}: MAC/s per brick rank vs 1 brick rank")
            line(ax, rs, "efficiency_time_vs_layout_1", c, ":", "s", f"{lay}: classic T1/Tr")
        for x, y in pts:
            ax.annotate(f"{y:.2f}", (x, y), textcoords="offset points", xytext=(4, 4), fontsize=7)
        if lay != "colocated":
            line(ax, rs, "efficiency_vs_colocated_1", c, "--", "^", f"{lay}: vs colocated 1 rank")
        top = max([top] + [r[k] for r in rs for k in ("efficiency_vs_layout_1", "efficiency_vs_colocated_1",
                                                     "efficiency_time_vs_layout_1") if r.get(k)])
    hollow_legend(ax, krecs)
    setup_ranks_axis(ax, ranks)
    ax.set_ylabel("parallel efficiency")
    ax.set_ylim(0, max(1.15, top * 1.1))
    ax.set_title("parallel efficiency")
    ax.legend(fontsize=7)

    fig.suptitle(f"triada-transform {meta['transform']} ({kind_str(recs, kind, meta)});\n"
                 f"{meta['host']}: {cores_str(meta, [r['world_size'] for r in krecs])}", fontsize=10)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return True


def kind_str(recs, kind, meta):
    rs = sorted((r for r in recs if r["kind"] == kind), key=lambda r: r["brick_ranks"])
    if kind == "strong":
        return f"strong scaling, fixed {shape_str(rs[0])} tensor"
    big = rs[-1]
    if meta.get("weak_grid") == "line":
        return (f"weak scaling, {shape_str(rs[0])} per rank on an r x 1 x 1 line; "
                f"{shape_str(big)} on {big['brick_ranks']}")
    return (f"weak scaling, {shape_str(rs[0])} per brick rank on MPI_Dims_create's grid; "
            f"{shape_str(big)} on {'x'.join(map(str, big['brick_grid']))}")


def cores_str(meta, ranks):
    """'ran on 2 cores; 7 ranks oversubscribed (3.5 ranks per core)' or 'ran on 16 cores, ...';
    `ranks`: the MPI process counts of the runs."""
    cores, most = meta["cores"], max(ranks)
    if most <= cores:
        return f"ran on {cores} cores, one rank per core at most"
    return f"ran on {cores} cores; {most} ranks oversubscribed ({most / cores:g} ranks per core)"


def plot_split(recs, meta, path):
    """Stacked mean compute/pack/wait/idle seconds, summed over the stages, per (kind,
    layout) and brick rank count. Returns False when no record has a split."""
    panels = [(k, lay) for k in ("strong", "weak") for lay in layouts_of(recs, k)
              if any(r.get("split_total") for r in series(recs, k, lay))]
    if not panels:
        return False
    kinds = [k for k in ("strong", "weak") if any(p[0] == k for p in panels)]
    lays = [lay for lay in ("colocated", "dedicated") if any(p[1] == lay for p in panels)]
    fig, axes = plt.subplots(len(kinds), len(lays), figsize=(6.5 * len(lays), 4.2 * len(kinds) + 0.8),
                             squeeze=False)
    legend = {}
    for i, kind in enumerate(kinds):
        for j, lay in enumerate(lays):
            ax = axes[i][j]
            rs = [r for r in series(recs, kind, lay) if r.get("split_total")]
            if not rs:
                ax.set_visible(False)
                continue
            xs = list(range(len(rs)))
            bottom = [0.0] * len(rs)
            for p in PARTS:
                h = [r["split_total"][p] for r in rs]
                ax.bar(xs, h, 0.6, bottom=bottom, color=PART_COLORS[p], label=f"{p} (mean over brick ranks)")
                bottom = [b + v for b, v in zip(bottom, h)]
            ax.plot(xs, [r["simulation_seconds"] for r in rs], "_", color="k", ms=22, mew=1.5,
                    label="simulation_seconds")
            mod = [(x, r["split_total"].get("model_seconds")) for x, r in zip(xs, rs)]
            mod = [(x, m) for x, m in mod if m is not None]
            if mod:
                ax.plot([m[0] for m in mod], [m[1] for m in mod], "D", color="C9", mec="k",
                        label="modelled time (model_seconds)")
            ax.set_xticks(xs)
            ax.set_xlim(-0.5 - 0.25 * max(1, 4 - len(rs)), len(rs) - 0.5 + 0.25 * max(1, 4 - len(rs)))
            ax.set_xticklabels([f"{r['brick_ranks']}{'*' if r['oversubscribed'] else ''}\n"
                                f"{'x'.join(map(str, r['brick_grid']))}" for r in rs])
            ax.set_xlabel("brick ranks (brick grid); *: oversubscribed")
            ax.set_ylabel("seconds, summed over the 3 stages")
            ax.set_ylim(bottom=0)
            ax.grid(True, axis="y", alpha=0.3)
            ax.set_title(f"{kind}, {LAYOUT_LABELS[lay]}", fontsize=9)
            for h, lbl in zip(*ax.get_legend_handles_labels()):
                legend.setdefault(lbl, h)
    worlds = [r["world_size"] for r in recs]
    fig.suptitle(f"triada-transform {meta['transform']}: where the stage time goes (per brick rank: "
                 f"compute + pack + wait + idle = the stage's time); {meta['host']}: "
                 f"{cores_str(meta, worlds)}", fontsize=9)
    fig.legend(list(legend.values()), list(legend), loc="lower center", ncol=3, fontsize=8)
    fig.tight_layout(rect=(0, 0.8 / (4.2 * len(kinds) + 0.8), 1, 1))
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return True


def plot_bytes(recs, meta, path):
    fig, axes = plt.subplots(1, 2, figsize=(13, 6.2))
    ranks_all = sorted({r["brick_ranks"] for r in recs})
    styles = {"colocated": ("o-", "x--", "^:"), "dedicated": ("s-.", "+--", "v:")}
    for kind, c in (("strong", "C0"), ("weak", "C1")):
        for lay in layouts_of(recs, kind):
            rs = series(recs, kind, lay)
            ranks = [r["brick_ranks"] for r in rs]
            st = styles[lay]
            lbl = f"{kind} {lay} ({shape_str(rs[0])}" + (" per brick rank)" if kind == "weak" else ")")
            axes[0].plot(ranks, [r["bytes_per_rank"] / MIB for r in rs], st[0], color=c, label=lbl)
            if all(r.get("peak_rss_bytes_per_rank") for r in rs):
                axes[1].plot(ranks, [max(r["peak_rss_bytes_per_rank"]) / MIB for r in rs], st[0], color=c,
                             label=f"{kind} {lay}: peak RSS, max over ranks")
                axes[1].plot(ranks, [max(r["baseline_rss_bytes_per_rank"]) / MIB for r in rs], st[1],
                             color=c, label=f"{kind} {lay}: RSS at start (libraries, MPI)")
                axes[1].plot(ranks, [max(r["brick_tensor_bytes_per_rank"]) / MIB for r in rs], st[2],
                             color=c, label=f"{kind} {lay}: brick tensor")
    axes[0].set_ylabel("MPI bytes per rank (MiB)")
    axes[0].set_title("simulated bus traffic: report mpi.bytes / MPI ranks")
    axes[1].set_ylabel("memory per rank (MiB)")
    axes[1].set_title("peak resident memory per rank (max over ranks)")
    for ax in axes:
        setup_ranks_axis(ax, ranks_all)
        ax.set_ylim(bottom=0)
        ax.legend(fontsize=7, loc="upper center", bbox_to_anchor=(0.5, -0.16), ncol=1 if ax is axes[0] else 2)
    fig.suptitle(f"triada-transform {meta['transform']}: MPI traffic and memory per rank; "
                 f"{meta['host']}: {cores_str(meta, [r['world_size'] for r in recs])}", fontsize=10)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)


def main():
    doc, _, out = load_results("plot_scaling.py", __doc__,
                               "scaling.json written by run_scripts/scaling.sh",
                               ("triada-scaling/2", "triada-scaling/1"))
    if doc["schema"] == "triada-scaling/1":
        doc = upgrade_v1(doc)
    machine = doc["machine"]
    meta = {"transform": doc["settings"]["transform"], "host": machine["host"],
            "cores": machine.get("cores") or machine["cpus"],
            "weak_grid": doc["settings"].get("weak_grid", "grid")}
    recs = doc["records"]
    written = []
    for kind in ("strong", "weak"):
        p = os.path.join(out, f"scaling_{kind}.png")
        if plot_kind(recs, kind, meta, p):
            written.append(p)
    p = os.path.join(out, "scaling_split.png")
    if plot_split(recs, meta, p):
        written.append(p)
    p = os.path.join(out, "scaling_bytes.png")
    plot_bytes(recs, meta, p)
    written.append(p)
    for p in written:
        print(f"wrote {p}")


if __name__ == "__main__":
    main()
