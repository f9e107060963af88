#!/usr/bin/env python3
"""Table I and the stride study of Zhou et al. ("Characterizing and Demystifying the Implicit
Convolution Algorithm on Commercial Matrix-Multiplication Accelerators") on our planar MXU.

Usage: run_scripts/plot_conv.py --bin BUILD_DIR [--src SRC_DIR] [--work DIR] [--out DIR]
                                [--mxu S] [--networks a,b,...] [--quick] [--rerun]

1. Runs triada-conv on each network of data/networks/ at batch 1 (both methods, --verify; reports
   WORK/net_<name>.json, reused unless --rerun) and draws OUT/conv_memory.png: IFMap vs
   lowered-matrix memory per network (the shape of the paper's Table I) and the extra-memory
   ratio next to the paper's.
2. Runs representative layers (W_I, C_I, C_O, W_F as in the paper's Fig. 4, "same" padding)
   at stride 1, 2 and 4 (WORK/stride_*.json) and draws OUT/conv_stride.png: MXU utilisation
   and effective utilisation (lowering time counted) of explicit vs implicit.
3. Prints both tables in Markdown (also written to WORK/conv_tables.md).

--quick runs only AlexNet's first two layers (unless --networks) and two small stride layers
(for tests).
"""
import argparse
import json
import os
import subprocess
import sys

from plot_common import pyplot

plt = pyplot("plot_conv.py")

NETWORKS = ["alexnet", "vgg16", "resnet50", "googlenet", "yolov2", "densenet121"]
LABELS = {"alexnet": "AlexNet", "vgg16": "VGG16", "resnet50": "ResNet-50",
          "googlenet": "GoogLeNet", "yolov2": "YOLOv2", "densenet121": "DenseNet-121"}
MIB = 2.0 ** 20  # memory figures in MiB (doc/design.md §5.8)
# The paper's Table I (its "MB", which match MiB of fp32; cuDNN explicit im2col on a V100):
# (IFMaps, lowered IFMaps).
PAPER_TABLE1 = {"alexnet": (1.39, 14.57), "resnet50": (34.55, 81.11), "vgg16": (34.65, 311.80),
                "yolov2": (530.56, 869.50), "densenet121": (1196.48, 5641.70)}
# (tag, W_I, C_I, C_O, W_F): ResNet-like layers in the paper's Fig. 4 notation.
STRIDE_LAYERS = [("56-64-64-3", 56, 64, 64, 3), ("28-128-128-3", 28, 128, 128, 3),
                 ("14-256-256-3", 14, 256, 256, 3), ("7-512-512-3", 7, 512, 512, 3),
                 ("224-3-64-7", 224, 3, 64, 7)]
QUICK_STRIDE_LAYERS = [("16-8-16-3", 16, 8, 16, 3), ("16-3-16-3", 16, 3, 16, 3)]
STRIDES = [1, 2, 4]


def run(cmd, report, rerun):
    if os.path.exists(report) and not rerun:
        return
    print("plot_conv.py: " + " ".join(cmd), file=sys.stderr, flush=True)
    res = subprocess.run(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    if res.returncode != 0:
        sys.exit(f"plot_conv.py: error: {' '.join(cmd)} exited {res.returncode}: {res.stderr}")


def load(path):
    with open(path) as f:
        return json.load(f)


def memory_table(reports):
    lines = ["| network | layers | IFMap MiB float64 | lowered MiB float64 | ratio | "
             "IFMap MiB fp32 | lowered MiB fp32 | paper IFMap | paper lowered | paper ratio | "
             "verified |",
             "| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | --- |"]
    for name, rep in reports.items():
        t = rep["total"]
        ifm, low = t["ifmap_bytes"], t["lowered_bytes"]
        p = PAPER_TABLE1.get(name)
        paper = (f"{p[0]:.2f} | {p[1]:.2f} | {p[1] / p[0]:.2f}" if p else "- | - | -")
        checked = (f"{t['verified_layers']} of {t['layers']}"
                   + (f" ({t['skipped_layers']} over budget)" if t["skipped_layers"] else ""))
        lines.append(f"| {LABELS.get(name, name)} | {t['layers']} | {ifm / MIB:.2f} | "
                     f"{low / MIB:.2f} | {low / ifm:.2f} | {ifm / 2 / MIB:.2f} | "
                     f"{low / 2 / MIB:.2f} | {paper} | {checked} |")
    return "\n".join(lines)


def method_table(reports):
    lines = ["| network | method | MXU calls | cell steps | util | eff. util | energy mJ | "
             "peak extra MiB float64 |", "| --- | --- | ---: | ---: | ---: | ---: | ---: | ---: |"]
    for name, rep in reports.items():
        for m in ("explicit", "implicit"):
            t = rep["total"].get(m)
            if not t:
                continue
            lines.append(f"| {LABELS.get(name, name)} | {m} | {t['calls']} | {t['cell_steps']} | "
                         f"{t['utilisation']:.3f} | {t['effective_utilisation']:.3f} | "
                         f"{t['energy_pj'] / 1e9:.2f} | {t['peak_extra_bytes'] / MIB:.3f} |")
    return "\n".join(lines)


def stride_table(stride):
    lines = ["| layer (W_I-C_I-C_O-W_F) | stride | H_O | explicit util | implicit util | "
             "explicit eff. util | implicit eff. util | lowered / IFMap |",
             "| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: |"]
    for tag, per in stride.items():
        for s, L in per.items():
            e, i = L["explicit"], L["implicit"]
            lines.append(f"| {tag} | {s} | {L['H_O']} | {e['utilisation']:.3f} | "
                         f"{i['utilisation']:.3f} | {e['effective_utilisation']:.3f} | "
                         f"{i['effective_utilisation']:.3f} | {L['extra_memory_ratio']:.2f} |")
    return "\n".join(lines)


def plot_memory(reports, out, mxu):
    names = list(reports)
    x = list(range(len(names)))
    ifm = [reports[n]["total"]["ifmap_bytes"] / MIB for n in names]
    low = [reports[n]["total"]["lowered_bytes"] / MIB for n in names]
    fig, (a, b) = plt.subplots(1, 2, figsize=(11, 4.4))
    w = 0.38
    a.bar([v - w / 2 for v in x], ifm, w, label="IFMap (sum over layers)", color="C0")
    a.bar([v + w / 2 for v in x], low, w, label="lowered matrix (explicit im2col)", color="C3")
    for v, i, l in zip(x, ifm, low):
        a.text(v + w / 2, l * 1.08, f"{l / i:.1f}x", ha="center", fontsize=8)
    a.set_yscale("log")
    a.set_ylim(min(ifm) / 2, max(low) * 3)
    a.set_xticks(x)
    a.set_xticklabels([LABELS.get(n, n) for n in names], rotation=20, fontsize=8)
    a.set_ylabel("MiB (float64 elements, batch 1)")
    a.set_title("memory per network (convolution layers)", fontsize=10)
    a.legend(fontsize=8, loc="upper left")
    a.grid(True, axis="y", which="both", alpha=0.3)
    ours = [l / i for i, l in zip(ifm, low)]
    paper = [PAPER_TABLE1[n][1] / PAPER_TABLE1[n][0] if n in PAPER_TABLE1 else float("nan")
             for n in names]
    b.bar([v - w / 2 for v in x], ours, w, label="ours (lowered / IFMap)", color="C2")
    b.bar([v + w / 2 for v in x], paper, w, label="paper Table I (V100, cuDNN)", color="C7")
    for v, n in zip(x, names):
        if n not in PAPER_TABLE1:
            b.text(v + w / 2, 0.2, "not in\nTable I", ha="center", fontsize=7, rotation=90)
    b.set_xticks(x)
    b.set_xticklabels([LABELS.get(n, n) for n in names], rotation=20, fontsize=8)
    b.set_ylabel("extra memory ratio")
    extra = max(reports[n]["total"]["implicit"]["peak_extra_bytes"] for n in names
                if "implicit" in reports[n]["total"])
    b.set_title(f"lowered / IFMap; implicit: 0 lowered, {extra / MIB:.2g} MiB extra",
                fontsize=10)
    b.legend(fontsize=8)
    b.grid(True, axis="y", alpha=0.3)
    fig.tight_layout()
    fig.savefig(out, dpi=110)
    plt.close(fig)


def plot_stride(stride, out, mxu):
    tags = list(stride)
    x = list(range(len(tags)))
    fig, axes = plt.subplots(2, 1, figsize=(11, 6.6), sharex=True)
    w = 0.13
    shades = {"explicit": ["#f4a582", "#d6604d", "#b2182b"],
              "implicit": ["#92c5de", "#4393c3", "#2166ac"]}
    for ax, key, title in ((axes[0], "utilisation",
                            "MXU utilisation: useful MACs / (sum over calls of r S^2)"),
                           (axes[1], "effective_utilisation",
                            "effective utilisation: explicit's lowering pass counted as time")):
        k = 0
        for method in ("explicit", "implicit"):
            for j, s in enumerate(STRIDES):
                vals = [stride[t][s][method][key] if s in stride[t] else 0 for t in tags]
                ax.bar([v + (k - 2.5) * w for v in x], vals, w, color=shades[method][j],
                       label=f"{method}, stride {s}", edgecolor="black", linewidth=0.3)
                k += 1
        ax.set_ylim(0, 1.12)
        ax.set_title(title, fontsize=10)
        ax.set_ylabel(f"fraction of the {mxu}x{mxu} unit")
        ax.grid(True, axis="y", alpha=0.3)
    axes[1].set_xticks(x)
    axes[1].set_xticklabels([f"{t}\n(H_O at s=1: {stride[t][1]['H_O']})" if 1 in stride[t] else t
                             for t in tags], fontsize=8)
    axes[1].set_xlabel("layer W_I-C_I-C_O-W_F (batch 1, 'same' padding)")
    axes[0].legend(fontsize=7, ncol=6, loc="upper center", bbox_to_anchor=(0.5, 1.0))
    fig.tight_layout()
    fig.savefig(out, dpi=110)
    plt.close(fig)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--bin", required=True, help="build directory holding triada-conv")
    ap.add_argument("--src", default=os.path.join(os.path.dirname(__file__), ".."),
                    help="source directory (data/networks)")
    ap.add_argument("--work", default="conv_runs", help="directory for the JSON reports")
    ap.add_argument("--out", default="doc/img", help="directory for the PNGs")
    ap.add_argument("--mxu", type=int, default=16, help="MXU side S")
    ap.add_argument("--networks", default=None,
                    help="comma-separated networks (default: all six; alexnet with --quick)")
    ap.add_argument("--quick", action="store_true", help="tiny configuration (tests)")
    ap.add_argument("--rerun", action="store_true", help="rerun even if a report exists")
    a = ap.parse_args()
    app = os.path.join(a.bin, "triada-conv")
    if not os.access(app, os.X_OK):
        sys.exit(f"plot_conv.py: error: {app} not found or not executable")
    os.makedirs(a.work, exist_ok=True)
    os.makedirs(a.out, exist_ok=True)
    mxu = ["--mxu", str(a.mxu)]

    reports = {}
    networks = a.networks or ("alexnet" if a.quick else ",".join(NETWORKS))
    for name in [n for n in networks.split(",") if n]:
        csv = os.path.join(a.src, "data", "networks", name + ".csv")
        rep = os.path.join(a.work, f"net_{name}{'_quick' if a.quick else ''}.json")
        extra = ["--max-layers", "2"] if a.quick else []
        run([app, "--network", csv, "--batch", "1", "--verify", "--report", rep] + mxu + extra, rep,
            a.rerun)
        reports[name] = load(rep)

    stride = {}
    for tag, wi, ci, co, wf in (QUICK_STRIDE_LAYERS if a.quick else STRIDE_LAYERS):
        stride[tag] = {}
        for s in STRIDES:
            rep = os.path.join(a.work, f"stride_{tag}_s{s}.json")
            spec = f"1,{ci},{wi},{wi},{co},{wf},{wf},{s},{wf // 2}"
            run([app, "--layer", spec, "--report", rep] + mxu, rep, a.rerun)
            stride[tag][s] = load(rep)["layers"][0]

    plot_memory(reports, os.path.join(a.out, "conv_memory.png"), a.mxu)
    plot_stride(stride, os.path.join(a.out, "conv_stride.png"), a.mxu)
    text = ("### Memory (Table I shape)\n\n" + memory_table(reports) +
            "\n\n### Per method\n\n" + method_table(reports) +
            "\n\n### Stride study\n\n" + stride_table(stride) + "\n")
    with open(os.path.join(a.work, "conv_tables.md"), "w") as f:
        f.write(text)
    print(text)
    print(f"plot_conv.py: wrote {a.out}/conv_memory.png and {a.out}/conv_stride.png",
          file=sys.stderr)


if __name__ == "__main__":
    main()
