"""triada-explore's sweep spec (doc/explore.md): the TOML file read and checked, its
workloads and axes expanded into points, each a resolved command with its cache key."""

from __future__ import annotations

import dataclasses
import hashlib
import itertools
import json
import math
import os
import pathlib
import re
import shutil
import stat
import subprocess
import tomllib
from typing import Any

# The special axes and the program options they set; every other axis key is an option.
SPECIAL_AXES = {"cell_mode": "cell-mode", "esop": "esop", "executor": "executor"}
# Axes that set no option of the program: the rank count (the launcher's) and the
# repetition (a point run once per value, for timings; counters must not change).
NO_OPTION_AXES = {"ranks", "rep"}
# Axes "generate.KEY" set triada-gen's --KEY for a workload whose input it generates.
GENERATE = "generate."
# Options whose value names an input file (FILE[:/DATASET]): its contents go into the key.
# Options naming a file: resolved against the spec's folder, their contents in the key
# ("none" for machine.calibration: the built-in constants, no file).
FILE_OPTIONS = {"input", "coeffs", "initial", "mesh", "network", "weights", "machine.calibration"}
PROGRAMS = {"transform": "triada-transform", "gemt": "triada-transform",
            "tcu": "triada-tcu", "conv": "triada-conv", "bench": "triada-bench"}
# Each kind's own keys besides name, kind, options, axes and alone.
KIND_KEYS: dict[str, set[str]] = {
    "transform": {"transform", "shape", "input", "generate"},
    "gemt": {"shape", "input", "coeffs", "generate"},
    "tcu": {"algo"}, "conv": {"network", "layer", "onnx", "batch", "input_shapes"},
    "bench": set()}
# A transform's input: one of these at most.
INPUT_SOURCES = ("shape", "input", "generate")
# The option that names a program's JSON report.
REPORT_OPTION = {"triada-bench": "json"}
# A conv workload's network sources: one at most.
CONV_SOURCES = ("network", "layer", "onnx")
DEFAULT_METRICS = ["physical.seconds", "physical.energy_j.total", "physical.area_mm2.total",
                   "counters.macs"]
DEFAULT_LAUNCHER = ["mpirun", "--oversubscribe", "-np", "{ranks}"]
SECTION_KEYS: dict[str, dict[str, type]] = {
    "sweep": {"name": str, "out": str, "jobs": int, "mode": str, "metrics": list, "bin": str,
              "launcher": list, "keep_hdf5": bool},
    "plot": {"color": str, "time": str, "energy": str, "area": str, "scripts": list},
    "slurm": {"options": list},
}
SESSION = "{session}"


class SpecError(Exception):
    """A bad spec: one line, exit code 2 (1: a file the spec names cannot be read)."""

    def __init__(self, message: str, code: int = 2) -> None:
        super().__init__(message)
        self.code = code


@dataclasses.dataclass
class Point:
    """One run of a program: its workload, axis values, command (with {session}) and key."""
    index: int
    workload: str
    kind: str
    program: str
    axes: dict[str, Any]
    argv: list[str]
    ranks: int | None
    run: str  # "model" (closed forms, --model-only) or "real" (computes on data)
    version: str = ""  # the program's --version: "NAME VERSION\ncommit COMMIT"
    key: str = ""
    # An ONNX model's layers, written as SESSION/network.csv before the program runs.
    network: list[Any] | None = None
    # The triada-gen command writing SESSION/input.h5 and its report SESSION/generate.json
    # before the program runs; None: no generated input.
    generate: list[str] | None = None
    alone: bool = False  # runs with no other point running (timings)


@dataclasses.dataclass
class Spec:
    path: pathlib.Path
    name: str
    out: pathlib.Path
    jobs: int
    mode: str
    metrics: list[str]
    bin: pathlib.Path | None
    launcher: list[str]
    plot: dict[str, str]
    plot_scripts: list[pathlib.Path]  # run as `python3 SCRIPT OUT` after the table
    slurm_options: list[str]
    workloads: list[dict[str, Any]]
    axes: dict[str, list[Any]]
    excludes: list[dict[str, Any]]
    keep_hdf5: bool = True  # false: a point's HDF5 files (input, output) go when it ends


def load(path: pathlib.Path) -> Spec:
    """The spec at PATH, checked: unknown sections or keys, wrong types and empty axes
    raise SpecError."""
    try:
        if not stat.S_ISREG(path.stat().st_mode):  # a FIFO would block the read forever
            raise SpecError("not a regular file (a spec is read from a file)", 1)
        raw = tomllib.loads(path.read_text(encoding="utf-8"))
    except OSError as e:
        raise SpecError(f"cannot read the spec: {e.strerror}", 1) from e
    except (tomllib.TOMLDecodeError, UnicodeDecodeError) as e:
        raise SpecError(f"not a valid TOML file: {e}") from e
    unknown = set(raw) - {"sweep", "workload", "axes", "exclude", "plot", "slurm"}
    if unknown:
        raise SpecError(f"unknown section [{sorted(unknown)[0]}] (sections: sweep, workload, "
                        "axes, exclude, plot, slurm)")
    for section in SECTION_KEYS:
        check_section(raw.get(section, {}), section)
    return build_spec(path, raw)


def check_section(table: Any, section: str) -> None:
    if not isinstance(table, dict):
        raise SpecError(f"[{section}] must be a table")
    for key, value in table.items():
        want = SECTION_KEYS[section].get(key)
        if want is None:
            raise SpecError(f"[{section}] {key}: unknown key (known: "
                            f"{', '.join(SECTION_KEYS[section])})")
        if not isinstance(value, want) or (want is not bool and isinstance(value, bool)):
            raise SpecError(f"[{section}] {key}: expected {want.__name__}, got {value!r}")
        for text in value if isinstance(value, list) else [value]:
            if isinstance(text, str):
                check_value(text, f"[{section}] {key}")
        if isinstance(value, list) and not (value and all(isinstance(v, str) for v in value)):
            raise SpecError(f"[{section}] {key}: expected a non-empty list of strings")


def build_spec(path: pathlib.Path, raw: dict[str, Any]) -> Spec:
    sweep, here = raw.get("sweep", {}), path.resolve().parent
    name = sweep.get("name", path.stem)
    jobs = sweep.get("jobs", os.cpu_count() or 1)
    if jobs < 1:
        raise SpecError(f"[sweep] jobs: expected a positive integer, got {jobs}")
    mode = sweep.get("mode", "local")
    if mode not in ("local", "slurm"):
        raise SpecError(f"[sweep] mode: expected 'local' or 'slurm', got {mode!r}")
    launcher = sweep.get("launcher", DEFAULT_LAUNCHER)
    if "{ranks}" not in launcher:
        raise SpecError("[sweep] launcher: no '{ranks}' argument (the rank count goes there)")
    metrics = list(sweep.get("metrics", DEFAULT_METRICS))
    plot = {"time": "physical.seconds", "energy": "physical.energy_j.total",
            "area": "physical.area_mm2.total", **raw.get("plot", {})}
    scripts = [here / s for s in plot.pop("scripts", [])]
    for script in scripts:
        if not script.is_file():
            raise SpecError(f"[plot] scripts: {script}: no such file", 1)
    metrics += [plot[m] for m in ("time", "energy", "area") if plot[m] not in metrics]
    return Spec(path, name, here / sweep.get("out", name), jobs, mode, metrics,
                here / sweep["bin"] if "bin" in sweep else None, launcher, plot, scripts,
                raw.get("slurm", {}).get("options", []), check_workloads(raw.get("workload")),
                check_axes(raw.get("axes", {}), "[axes]"), check_excludes(raw.get("exclude", [])),
                sweep.get("keep_hdf5", True))


def check_axes(table: Any, where: str) -> dict[str, list[Any]]:
    if not isinstance(table, dict):
        raise SpecError(f"{where} must be a table of lists")
    for key, values in table.items():
        if not isinstance(values, list) or not values:
            raise SpecError(f"{where} {key}: expected a non-empty list of values, got {values!r}")
        for v in values:
            check_value(v, f"{where} {key}")
        if len({json.dumps(v) for v in values}) != len(values):
            raise SpecError(f"{where} {key}: a value is listed twice")
        if key in NO_OPTION_AXES and not all(type(v) is int and v >= 1 for v in values):
            raise SpecError(f"{where} {key}: expected positive integers, got {values!r}")
    return table


def check_value(value: Any, where: str) -> None:
    """An option value: a string, number, bool or a list of numbers (N1,N2,N3)."""
    if isinstance(value, list) and value and all(
            isinstance(v, (int, float)) and not isinstance(v, bool) for v in value):
        return
    if not isinstance(value, (str, int, float, bool)):
        raise SpecError(f"{where}: expected a string, number, bool or list of numbers, "
                        f"got {value!r}")
    if isinstance(value, str) and any(ord(c) < 32 or ord(c) == 127 for c in value):
        raise SpecError(f"{where}: {value!r} holds a control character (a NUL or newline "
                        "cannot be a program's argument)")


def check_workloads(workloads: Any) -> list[dict[str, Any]]:
    if not isinstance(workloads, list) or not workloads:
        raise SpecError("no [[workload]]: name at least one")
    names = set()
    for i, w in enumerate(workloads):
        if not isinstance(w, dict):
            raise SpecError(f"[[workload]] {i + 1}: must be a table")
        kind = w.get("kind")
        if kind not in PROGRAMS:
            raise SpecError(f"[[workload]] {i + 1}: kind: expected one of "
                            f"{', '.join(PROGRAMS)}, got {kind!r}")
        w.setdefault("name", f"{kind}{i + 1}")
        where = f"[[workload]] {w['name']}"
        if w["name"] in names:
            raise SpecError(f"{where}: name used twice")
        names.add(w["name"])
        unknown = set(w) - KIND_KEYS[kind] - {"name", "kind", "options", "axes", "alone"}
        if unknown:
            known = ", ".join(sorted(KIND_KEYS[kind]) + ["options", "axes", "alone"])
            raise SpecError(f"{where}: unknown key {sorted(unknown)[0]!r} for kind {kind} "
                            f"(known: {known})")
        if not isinstance(w.get("alone", False), bool):
            raise SpecError(f"{where} alone: expected true or false, got {w['alone']!r}")
        sources = [k for k in (CONV_SOURCES if kind == "conv" else INPUT_SOURCES) if k in w]
        if len(sources) > 1:
            what = "network source" if kind == "conv" else "input (shape, input or generate)"
            raise SpecError(f"{where}: {sources[0]} and {sources[1]}: name one {what}")
        check_axes(w.get("axes", {}), f"{where} axes:")
        check_generate(w, where)
        if not isinstance(w.get("onnx", ""), str):
            raise SpecError(f"{where} onnx: expected the model's file name, got {w['onnx']!r}")
        check_input_shapes(w, where)
        if not isinstance(w.get("options", {}), dict):
            raise SpecError(f"{where} options: expected a table of option = value, got "
                            f"{w['options']!r}")
        own = {k: w[k] for k in KIND_KEYS[kind] & set(w) - {"generate", "input_shapes"}}
        for key, value in {**w.get("options", {}), **own}.items():
            check_value(value, f"{where} {key}")
    return workloads


def check_input_shapes(w: dict[str, Any], where: str) -> None:
    """An ONNX model's input shapes: a table of input name = [D0, D1, ...] (what the dims
    mean is onnx_net's to check when the model is read)."""
    shapes = w.get("input_shapes")
    if shapes is None:
        return
    if "onnx" not in w:
        raise SpecError(f"{where} input_shapes: only with onnx (an ONNX model's inputs)")
    if not isinstance(shapes, dict) or not all(
            isinstance(d, list) and d and all(isinstance(v, int) and not isinstance(v, bool)
                                              for v in d) for d in shapes.values()):
        raise SpecError(f"{where} input_shapes: expected a table of input name = [D0, D1, "
                        f"...], got {shapes!r}")


def check_generate(w: dict[str, Any], where: str) -> None:
    """A generated input: a table of triada-gen options, or "generate.KEY" axes alone."""
    gen = w.get("generate")
    if gen is None:
        if any(a.startswith(GENERATE) for a in w.get("axes", {})):
            raise SpecError(f"{where} axes: a generate.KEY axis needs a generate table "
                            "(the input's triada-gen options)")
        return
    if not isinstance(gen, dict):
        raise SpecError(f"{where} generate: expected a table of triada-gen options, got {gen!r}")
    for key, value in gen.items():
        if key in ("output", "report", "force"):
            raise SpecError(f"{where} generate: {key}: set by triada-explore (the input is "
                            "SESSION/input.h5)")
        check_value(value, f"{where} generate.{key}")


def check_excludes(excludes: Any) -> list[dict[str, Any]]:
    if not isinstance(excludes, list) or not all(isinstance(e, dict) and e for e in excludes):
        raise SpecError("[[exclude]] must be non-empty tables of axis = value (or [values])")
    return excludes


class Resolver:
    """Turns a spec's workloads into points: commands, input files' hashes, keys."""

    def __init__(self, spec: Spec, bin_dir: pathlib.Path) -> None:
        self.spec, self.bin = spec, bin_dir
        self.versions: dict[str, str] = {}
        self.helps: dict[str, set[str]] = {}
        self.hashes: dict[pathlib.Path, str] = {}
        self.models: dict[tuple[str, Any, str], tuple[list[Any], int]] = {}

    def program(self, name: str) -> str:
        path = self.bin / name
        if not os.access(path, os.X_OK):
            raise SpecError(f"{name}: no such program in {self.bin} (use --bin or [sweep] bin)", 1)
        return str(path)

    def options_of(self, name: str) -> set[str]:
        """The long options NAME's --help names (the mesh keys among them)."""
        if name not in self.helps:
            text = run_text([self.program(name), "--help"])
            found = re.findall(r"(?<![\w-])--([a-z0-9](?:[a-z0-9_.-]*[a-z0-9])?)", text)
            self.helps[name] = set(found)
        return self.helps[name]

    def version(self, name: str) -> str:
        """NAME --version's version and commit lines: part of every key."""
        if name not in self.versions:
            lines = run_text([self.program(name), "--version"]).splitlines()
            self.versions[name] = "\n".join(lines[:2])
        return self.versions[name]

    def file_hash(self, value: str) -> str:
        path, _, dataset = value.partition(":/")
        full = (self.spec.path.resolve().parent / path).resolve()
        if full not in self.hashes:
            try:
                if not stat.S_ISREG(full.stat().st_mode):  # a FIFO would block forever
                    raise SpecError(f"{value}: not a regular file (an input is read whole)", 1)
                self.hashes[full] = hashlib.sha256(full.read_bytes()).hexdigest()
            except OSError as e:
                raise SpecError(f"{value}: cannot read this input file: {e.strerror}", 1) from e
        return f"sha256:{self.hashes[full]}" + (f":/{dataset}" if dataset else "")

    def onnx_model(self, value: str, batch: Any, where: str,
                   input_shapes: dict[str, list[int]] | None = None) -> tuple[list[Any], int]:
        """An ONNX model's layers (its data inputs' first dim set to BATCH unless None, the
        inputs named in INPUT_SHAPES given those shapes) and the --batch their network
        file runs with."""
        key = (value, batch, json.dumps(input_shapes, sort_keys=True))
        if key not in self.models:
            from . import onnx_net
            from .errors import Error
            path = self.spec.path.resolve().parent / value
            try:
                layers = onnx_net.onnx_layers(path, batch, input_shapes)
                self.models[key] = layers, onnx_net.network_batch(layers)
            except (Error, ImportError) as e:
                raise SpecError(f"{where} onnx: {e}") from e
        return self.models[key]

    def resolved(self, option: str, value: Any) -> tuple[Any, Any]:
        """(value on the command line, value in the key) of one option."""
        if option not in FILE_OPTIONS or value in ("", False, "none") or \
                str(value).startswith(SESSION):
            return value, value
        path, sep, dataset = str(value).partition(":/")
        full = str((self.spec.path.resolve().parent / path).resolve()) + sep + dataset
        return full, self.file_hash(str(value))


def run_text(argv: list[str]) -> str:
    p = subprocess.run(argv, capture_output=True, text=True, timeout=60)
    return p.stdout


def fixed_options(w: dict[str, Any]) -> dict[str, Any]:
    """A workload's own keys as the program's options (shape: --model-only N1,N2,N3)."""
    kind, own = w["kind"], dict(w.get("options", {}))
    for key in KIND_KEYS[kind] & set(w):
        own["model-only" if key == "shape" else key] = w[key]
    if kind == "gemt":
        own["transform"] = "gemt"
    if "generate" in own:  # written by triada-gen into the session (make_point)
        own["input"] = f"{SESSION}/input.h5"
        del own["generate"]
    if kind in ("transform", "gemt") and "input" in own:
        own["output"] = f"{SESSION}/y.h5"  # a real run's result, kept in its session
    if "onnx" in own:  # converted into the session (make_point)
        own["network"] = f"{SESSION}/network.csv"
        del own["onnx"]
        own.pop("input_shapes", None)
    own[REPORT_OPTION.get(PROGRAMS[kind], "report")] = f"{SESSION}/report.json"
    return own


def option_name(axis: str, kind: str) -> str:
    """The option an axis sets (of triada-gen for generate.KEY)."""
    if axis == "shape" and kind in ("transform", "gemt"):
        return "model-only"
    return SPECIAL_AXES.get(axis, axis.removeprefix(GENERATE))


def takes_axis(resolver: Resolver, w: dict[str, Any], axis: str) -> bool:
    """Whether the axis sets something of this workload's runs."""
    if axis in NO_OPTION_AXES:
        return True
    if axis.startswith(GENERATE):
        return "generate" in w and option_name(axis, w["kind"]) in resolver.options_of(
            "triada-gen")
    return option_name(axis, w["kind"]) in resolver.options_of(PROGRAMS[w["kind"]])


def workload_axes(resolver: Resolver, w: dict[str, Any]) -> dict[str, list[Any]]:
    """The global axes the workload's program takes, then its own (which win)."""
    axes = {k: v for k, v in resolver.spec.axes.items() if takes_axis(resolver, w, k)}
    for k in w.get("axes", {}):
        if not takes_axis(resolver, w, k):
            program = "triada-gen" if k.startswith(GENERATE) else PROGRAMS[w["kind"]]
            raise SpecError(f"[[workload]] {w['name']} axes: {k}: {program} has "
                            f"no option --{option_name(k, w['kind'])}")
    return {**axes, **w.get("axes", {})}


def check_global_axes(resolver: Resolver) -> None:
    for axis in resolver.spec.axes:
        if not any(takes_axis(resolver, w, axis) for w in resolver.spec.workloads):
            program = "triada-gen" if axis.startswith(GENERATE) else "workload's program"
            raise SpecError(f"[axes] {axis}: no {program} has an option "
                            f"--{option_name(axis, 'transform')}")


def excluded(spec: Spec, workload: str, values: dict[str, Any]) -> bool:
    def alternatives(want: Any, have: Any) -> list[Any]:
        # A list is a choice of values, except where the axis's values are lists
        # themselves (a shape, a mesh): there a list of lists is the choice.
        if isinstance(have, list):
            return want if isinstance(want, list) and want and isinstance(want[0], list) else [want]
        return want if isinstance(want, list) else [want]

    def matches(rule: dict[str, Any]) -> bool:
        for k, want in rule.items():
            have = workload if k == "workload" else values.get(k, None)
            if have is None or have not in alternatives(want, have):
                return False
        return True
    return any(matches(rule) for rule in spec.excludes)


# The table's own columns (triada/_explore_table.py): a metric of one of these names, or of
# an axis's, would overwrite that column in every row.
PROVENANCE = ["status", "error", "version", "commit", "key", "session", "wall_s", "host",
              "command"]
FRONTS = {"time_energy": ("time", "energy"), "time_area": ("time", "area")}
TABLE_COLUMNS = {"point", "workload", "kind", "run", *PROVENANCE, *(f"pareto_{f}" for f in FRONTS)}


def check_metric_names(resolver: Resolver) -> None:
    axes = {a for w in resolver.spec.workloads for a in workload_axes(resolver, w)}
    for m in resolver.spec.metrics:
        if m in TABLE_COLUMNS or m in axes:
            what = "an axis" if m in axes else "a column of the table"
            raise SpecError(f"[sweep] metrics: {m!r} is {what}; a metric names a report field "
                            "(e.g. physical.seconds)")


def check_exclude_keys(resolver: Resolver) -> None:
    """Every [[exclude]] key names an axis of some workload (or is `workload`): a rule
    that can match nothing would exclude nothing without a word."""
    names = {"workload"} | {a for w in resolver.spec.workloads for a in workload_axes(resolver, w)}
    for rule in resolver.spec.excludes:
        for key in rule:
            if key not in names:
                raise SpecError(f"[[exclude]] {key}: no axis of that name (axes: "
                                f"{', '.join(sorted(names - {'workload'})) or 'none'})")


MAX_POINTS = 1_000_000  # a sweep's points before exclusions, counted before expanding


def expand(resolver: Resolver) -> list[Point]:
    """Every point of the spec, in order: workloads as listed, then the cartesian product of
    their axes (the last axis varying fastest), less the excluded ones."""
    check_global_axes(resolver)
    check_exclude_keys(resolver)
    check_metric_names(resolver)
    count = sum(math.prod(len(v) for v in workload_axes(resolver, w).values())
                for w in resolver.spec.workloads)
    if count > MAX_POINTS:
        raise SpecError(f"the axes make {count} points, over the limit of {MAX_POINTS} "
                        "(split the sweep, or exclude points)")
    points: list[Point] = []
    for w in resolver.spec.workloads:
        axes = workload_axes(resolver, w)
        fixed = fixed_options(w)
        clash = sorted(f"--{o}" for o in set(fixed) & {
            option_name(a, w["kind"]) for a in axes if not a.startswith(GENERATE)})
        clash += sorted({f"{GENERATE}{k}" for k in w.get("generate", {})} & set(axes))
        if clash:
            raise SpecError(f"[[workload]] {w['name']}: {clash[0]} is both fixed and an axis")
        for combo in itertools.product(*axes.values()):
            values = dict(zip(axes, combo))
            if not excluded(resolver.spec, w["name"], values):
                points.append(make_point(resolver, w, fixed, values, len(points)))
    return points


def make_point(resolver: Resolver, w: dict[str, Any], fixed: dict[str, Any],
               values: dict[str, Any], index: int) -> Point:
    options = dict(fixed)
    for axis, value in values.items():
        if axis not in NO_OPTION_AXES and not axis.startswith(GENERATE):
            options[option_name(axis, w["kind"])] = value
    program = PROGRAMS[w["kind"]]
    argv, key_args = [resolver.program(program)], []
    network = None
    if "onnx" in w:  # the model's contents and the batch asked for make its network
        where = f"[[workload]] {w['name']}"
        key_args += ["--onnx", resolver.file_hash(w["onnx"]), f"--batch={options.get('batch')}"]
        if "input_shapes" in w:  # only where given, so that other points keep their keys
            key_args.append(f"--input-shapes={json.dumps(w['input_shapes'], sort_keys=True)}")
        network, options["batch"] = resolver.onnx_model(w["onnx"], options.get("batch"), where,
                                                        w.get("input_shapes"))
    for name in sorted(options):
        shown, keyed = resolver.resolved(name, options[name])
        argv += format_option(name, shown)
        key_args += format_option(name, keyed)
    ranks = values.get("ranks")
    run = "model" if "model-only" in options else "real"
    point = Point(index, w["name"], w["kind"], program, values, argv, ranks, run,
                  resolver.version(program), network=network, alone=w.get("alone", False))
    material = {"program": program, "version": point.version, "args": key_args,
                "ranks": ranks, "launcher": resolver.spec.launcher if ranks else None}
    if "generate" in w:
        args = generate_args(w, values)
        point.generate = [resolver.program("triada-gen"), *args]
        material["generate"] = [resolver.version("triada-gen"), args]
    if "rep" in values:  # only where swept, so that other points keep their keys
        material["rep"] = values["rep"]
    point.key = hashlib.sha256(json.dumps(material, sort_keys=True).encode()).hexdigest()
    return point


def generate_args(w: dict[str, Any], values: dict[str, Any]) -> list[str]:
    """triada-gen's options for the point's input: the workload's generate table and its
    generate.KEY axis values, sorted by name, then the session's input and report."""
    options = {**w["generate"], **{a.removeprefix(GENERATE): v for a, v in values.items()
                                   if a.startswith(GENERATE)}}
    args = [a for name in sorted(options) for a in format_option(name, options[name])]
    return args + ["--output", f"{SESSION}/input.h5", "--report", f"{SESSION}/generate.json"]


def format_option(name: str, value: Any) -> list[str]:
    """--NAME VALUE; "" leaves it out. A bool is a flag (true: given, false: left out),
    except for a mesh key (--section.key, which always takes a value): on or off. (false
    left --esop.enabled out, so ESOP stayed on in a row labelled off.)"""
    if isinstance(value, bool) and "." in name:
        return [f"--{name}", "on" if value else "off"]
    if value is True:
        return [f"--{name}"]
    if value is False or value == "":
        return []
    return [f"--{name}", format_value(value)]


def format_value(value: Any) -> str:
    if isinstance(value, list):
        return ",".join(format_value(v) for v in value)
    if isinstance(value, bool):
        return "on" if value else "off"
    return str(value)


def default_bin() -> pathlib.Path | None:
    """The build folder the package lives in, an install prefix's bin/, or PATH."""
    package = pathlib.Path(__file__).resolve().parent
    for candidate in (package.parent.parent, package.parent.parent.parent.parent / "bin"):
        if (candidate / "triada-transform").is_file():
            return candidate
    found = shutil.which("triada-transform")
    return pathlib.Path(found).parent if found else None
