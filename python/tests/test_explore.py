"""triada-explore (python -m triada.explore): a small model-only sweep run twice computes
nothing the second time and writes the same table; a changed spec runs only its new points;
a sweep killed halfway resumes to the table of an uninterrupted one; the SLURM array's
tasks, run here one by one, give the same table; the Pareto columns equal a brute-force
dominance check; a failing point is a row with its error line; generated inputs against
h5py and the DFT's closed form, repetitions, excludes and --list; the processor slots;
a triada-bench workload; [plot] scripts; a bad spec is one line and exit 2."""

import csv
import json
import os
import random
import re
import shlex
import signal
import subprocess
import sys
import time

import pytest

from conftest import BIN, clean_env, run_program

SPEC = """
[sweep]
name = "tiny"
jobs = {jobs}
metrics = ["physical.seconds", "physical.energy_j.total", "physical.area_mm2.total",
           "counters.macs"]

[[workload]]
name = "dct8"
kind = "transform"
transform = "dct"
shape = [8, 8, 8]

[[workload]]
name = "gemt"
kind = "gemt"
shape = [8, 8, 4]
options = {{ "memory.kind" = "hbm3" }}
axes = {{ cell_mode = ["fp64", "fp32"] }}

[axes]
"chip.area_mm2" = {areas}
"technology.node_nm" = [7, 45]

[plot]
color = "technology.node_nm"
"""


def write_spec(path, jobs=2, areas="[100, 400]", text=None):
    path.write_text(text if text is not None else SPEC.format(jobs=jobs, areas=areas))
    return path


def explore_command(spec, *args):
    return [sys.executable, "-m", "triada.explore", str(spec), "--bin", str(BIN), *map(str, args)]


def explore(spec, *args):
    p = subprocess.run(explore_command(spec, *args), capture_output=True, text=True,
                       env=clean_env(), timeout=300)
    return p.returncode, p.stderr


def table(out, drop=("wall_s",)):
    with open(out / "results.csv", newline="") as f:
        return [{k: v for k, v in row.items() if k not in drop} for row in csv.DictReader(f)]


def started(out):
    return sum(" start " in line for line in (out / "explore.log").read_text().splitlines())


@pytest.fixture(scope="module")
def reference(tmp_path_factory):
    """An uninterrupted run of SPEC: (spec, out)."""
    tmp = tmp_path_factory.mktemp("reference")
    spec = write_spec(tmp / "spec.toml")
    code, err = explore(spec, "--out", tmp / "out")
    assert code == 0, err
    return spec, tmp / "out"


def test_a_rerun_computes_nothing_and_writes_the_same_bytes(reference):
    spec, out = reference
    rows = table(out)
    assert len(rows) == 12 and {r["status"] for r in rows} == {"ok"}
    assert {r["cell_mode"] for r in rows if r["workload"] == "dct8"} == {""}
    assert {r["workload"] for r in rows} == {"dct8", "gemt"}
    assert {r["run"] for r in rows} == {"model"}
    before, runs = (out / "results.csv").read_bytes(), len(os.listdir(out / "runs"))
    assert started(out) == 12 and runs == 12
    code, err = explore(spec, "--out", out)
    assert code == 0, err
    assert (out / "results.csv").read_bytes() == before
    assert started(out) == 12 and len(os.listdir(out / "runs")) == runs


def test_a_row_equals_the_program_run_by_hand(reference, tmp_path):
    _, out = reference
    row = next(r for r in table(out) if r["workload"] == "gemt" and r["cell_mode"] == "fp32"
               and r["chip.area_mm2"] == "400" and r["technology.node_nm"] == "7")
    code, _, err = run_program("triada-transform", "--model-only", "8,8,4", "-t", "gemt",
                               "--memory.kind", "hbm3", "--chip.area_mm2", "400",
                               "--technology.node_nm", "7", "--cell-mode", "fp32",
                               "--report", tmp_path / "r.json")
    assert code == 0, err
    report = json.loads((tmp_path / "r.json").read_text())
    assert float(row["physical.seconds"]) == report["physical"]["seconds"]
    assert float(row["physical.energy_j.total"]) == report["physical"]["energy_j"]["total"]
    assert int(row["counters.macs"]) == report["counters"]["macs"] == 8 * 8 * 4 * (8 + 8 + 4)
    assert row["commit"] == report["provenance"]["commit"]


def test_plots_and_summary_are_written(reference):
    _, out = reference
    for name in ("pareto_time_energy", "pareto_time_area", "sensitivity_chip.area_mm2",
                 "sensitivity_technology.node_nm", "sensitivity_cell_mode"):
        assert (out / f"{name}.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n", name
    summary = (out / "summary.txt").read_text()
    fronts = sum(r["pareto_time_energy"] == "1" for r in table(out))
    assert summary.count("[chip.area_mm2=") == fronts, summary


def test_a_changed_spec_runs_only_its_new_points(reference, tmp_path):
    spec, out = reference
    copy = tmp_path / "out"
    subprocess.run(["cp", "-r", str(out), str(copy)], check=True)
    code, err = explore(write_spec(tmp_path / "spec.toml", areas="[100, 400, 800]"),
                        "--out", copy)
    assert code == 0, err
    assert started(copy) == 12 + 6
    # The old points' rows, but for their index and the fronts the new points may change.
    derived = ("wall_s", "point", "pareto_time_energy", "pareto_time_area")
    old = {r["key"]: r for r in table(out, derived)}
    new = table(copy, derived)
    assert len(new) == 18
    assert [r for r in new if r["key"] in old] == [old[r["key"]] for r in new if r["key"] in old]


def test_pareto_front_against_brute_force(reference):
    from triada._explore_table import pareto_front

    def dominated(p, others):
        return any(q[0] <= p[0] and q[1] <= p[1] and q != p for q in others)

    rng = random.Random(5)
    for n in (1, 2, 7, 40, 200):
        pts = [(rng.randint(0, 6), rng.randint(0, 6)) for _ in range(n)]
        assert pareto_front(pts) == [i for i, p in enumerate(pts) if not dominated(p, pts)]
    _, out = reference
    rows = table(out)
    for x, y, column in (("physical.seconds", "physical.energy_j.total", "pareto_time_energy"),
                         ("physical.seconds", "physical.area_mm2.total", "pareto_time_area")):
        for workload in ("dct8", "gemt"):
            mine = [r for r in rows if r["workload"] == workload]
            pts = [(float(r[x]), float(r[y])) for r in mine]
            want = ["0" if dominated(p, pts) else "1" for p in pts]
            assert [r[column] for r in mine] == want, (workload, column)
            assert "1" in want


def test_a_killed_sweep_resumes_to_the_same_table(reference, tmp_path):
    _, ref_out = reference
    spec, out = write_spec(tmp_path / "spec.toml", jobs=1), tmp_path / "out"
    p = subprocess.Popen(explore_command(spec, "--out", out), env=clean_env(),
                         stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline and cached(out) < 5:
        time.sleep(0.05)
    p.send_signal(signal.SIGKILL)
    p.wait()
    assert 5 <= cached(out) < 12
    assert not (out / "results.csv").exists()
    code, err = explore(spec, "--out", out)
    assert code == 0, err
    assert table(out) == table(ref_out)
    assert not list((out / "cache").glob(".*tmp"))


def cached(out):
    return len(list((out / "cache").glob("*.json"))) if (out / "cache").is_dir() else 0


@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGHUP])
def test_a_terminated_sweep_ends_its_runs_and_says_so(tmp_path, sig):
    # kill -TERM (or HUP) of explore left its points running, writing into the session
    # folders of a resumed sweep. Now: their process groups end before it exits 128 + sig
    # with one line, no program of the sweep is left, and a rerun completes the table.
    slow = tmp_path / "slow.sh"  # a point that runs until it is stopped
    slow.write_text("#!/bin/bash\nexec sleep 300\n")
    slow.chmod(0o755)
    spec = write_spec(tmp_path / "spec.toml", text=f"""
[sweep]
jobs = 2
launcher = ["{slow}", "{{ranks}}"]

[[workload]]
kind = "transform"
transform = "dct"
shape = [8, 8, 8]

[axes]
ranks = [1]
"chip.area_mm2" = [100, 400]
""")
    out = tmp_path / "out"
    p = subprocess.Popen(explore_command(spec, "--out", out), env=clean_env(),
                         stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline and not (
            (out / "explore.log").is_file() and started(out) >= 1):
        time.sleep(0.05)
    time.sleep(0.5)
    p.send_signal(sig)
    _, err = p.communicate(timeout=60)
    assert p.returncode == 128 + sig, err
    assert err.strip().endswith("a rerun resumes") and f"stopped by {sig.name}" in err, err
    left = subprocess.run(["pgrep", "-f", str(slow)], capture_output=True, text=True).stdout
    assert not left.strip(), left


def test_the_slurm_array_tasks_run_here_give_the_same_table(reference, tmp_path):
    _, ref_out = reference
    spec, out = write_spec(tmp_path / "spec.toml"), tmp_path / "out"
    code, err = explore(spec, "--out", out, "--slurm")
    assert code == 0, err
    sbatch = (out / "sweep.sbatch").read_text()
    last = int(re.search(r"^#SBATCH --array=0-(\d+)$", sbatch, re.M).group(1))
    assert last == 11 and cached(out) == 0
    for i in range(last + 1):
        env = dict(clean_env(), SLURM_ARRAY_TASK_ID=str(i))
        del env["PYTHONPATH"]  # the script sets it
        p = subprocess.run(["bash", str(out / "sweep.sbatch")], env=env, capture_output=True,
                           text=True, timeout=120)
        assert p.returncode == 0, p.stderr
    code, err = explore(spec, "--out", out, "--collect")
    assert code == 0, err
    assert table(out) == table(ref_out)
    code, err = explore(spec, "--out", out, "--slurm")
    assert code == 0 and "every point is cached" in err, err


def sbatch_directives(script):
    """{option: value} of the #SBATCH lines as sbatch reads them: shell words of one line."""
    out = {}
    for line in script.splitlines():
        if line.startswith("#SBATCH "):
            for word in shlex.split(line[len("#SBATCH "):]):
                key, _, value = word.partition("=")
                out[key] = value
    return out


def test_the_sbatch_script_quotes_what_the_spec_and_out_give_it(tmp_path):
    # A name that would run a command in the script, an OUT with a space and a '%', an
    # option with a newline: the script parses (bash -n), its #SBATCH words are the values
    # (the '%' doubled for sbatch), nothing runs but the task, and a bad option is one line.
    # (A name with a newline, which put a command on a line of its own, is refused with
    # every other control character: BAD_SPECS.)
    text = SPEC.format(jobs=1, areas="[100]").replace('name = "tiny"',
                                                      'name = "x $(touch PWNED) #"', 1)
    spec, out = write_spec(tmp_path / "spec.toml", text=text), tmp_path / "my out 100%"
    code, err = explore(spec, "--out", out, "--slurm")
    assert code == 0, err
    script = (out / "sweep.sbatch").read_text()
    assert subprocess.run(["bash", "-n", str(out / "sweep.sbatch")]).returncode == 0
    d = sbatch_directives(script)
    assert d["--job-name"] == "x___touch_PWNED___", d
    assert d["--output"] == str(out).replace("%", "%%") + "/slurm/%A_%a.out", d
    env = dict(clean_env(), SLURM_ARRAY_TASK_ID="0")
    del env["PYTHONPATH"]
    p = subprocess.run(["bash", str(out / "sweep.sbatch")], env=env, capture_output=True,
                       text=True, timeout=120, cwd=tmp_path)
    assert p.returncode == 0, p.stderr
    assert not list(tmp_path.rglob("PWNED")) and cached(out) == 1
    bad = text + '\n[slurm]\noptions = ["--time=1\\ntouch PWNED"]\n'
    code, err = explore(write_spec(tmp_path / "bad.toml", text=bad), "--out", tmp_path / "o2",
                        "--slurm")
    assert code == 2 and err.count("\n") == 1 and "[slurm] options" in err, err


def test_a_failing_point_is_a_row_with_its_error_and_is_retried(tmp_path):
    spec = write_spec(tmp_path / "spec.toml", text="""
[[workload]]
kind = "transform"
transform = "dct"
shape = [4, 4, 4]
[axes]
"chip.area_mm2" = [-4, 100]
""")
    out = tmp_path / "out"
    code, err = explore(spec, "--out", out, "--no-plot")
    assert code == 0 and "1 not ok" in err, err
    bad, good = table(out)
    assert bad["status"] == "failed" and good["status"] == "ok"
    assert re.fullmatch(r"triada-transform: error: --chip\.area_mm2: .*'-4'", bad["error"]), bad
    assert bad["version"] and bad["commit"] == good["commit"]
    assert bad["physical.seconds"] == "" and float(good["physical.seconds"]) > 0
    code, err = explore(spec, "--out", out, "--no-plot")
    assert code == 0 and started(out) == 3  # the failed point again, the good one not
    assert table(out) == [bad, good]


BAD_SPECS = [
    ("options = 5\n", "options: expected a table of option = value, got 5"),
    ("axes = [1]\n", "axes: must be a table of lists"),
    ("options = { norm = \"or\\u0000tho\" }\n", "holds a control character"),
    ("[sweep]\nname = \"a\\nb\"\n", "[sweep] name: 'a\\nb' holds a control character"),
    ("[axes]\n\"chip.area_mm2\" = [%s]\n\"timing.driver_ps\" = [%s]\n"
     % (",".join(map(str, range(1, 1001))), ",".join(map(str, range(1, 1002)))),
     "the axes make 1001000 points, over the limit of 1000000"),
    ("[sweep]\nmetrics = [\"workload\"]\n", "[sweep] metrics: 'workload' is a column"),
    ("axes = { \"chip.area_mm2\" = [50] }\n[sweep]\nmetrics = [\"chip.area_mm2\"]\n",
     "[sweep] metrics: 'chip.area_mm2' is an axis"),
    ("[[exclude]]\nnope = 1\n", "[[exclude]] nope: no axis of that name"),
    ("[sweeep]\nname = 'x'\n", "unknown section [sweeep]"),
    ("[sweep]\nnmae = 'x'\n", "[sweep] nmae: unknown key"),
    ("[sweep]\njobs = '2'\n", "[sweep] jobs: expected int, got '2'"),
    ("[axes]\ncell_mode = []\n", "[axes] cell_mode: expected a non-empty list"),
    ("[axes]\n'chip.bogus' = [1]\n", "[axes] chip.bogus: no workload's program has an option"),
    ("[axes]\nranks = [0]\n", "[axes] ranks: expected positive integers"),
    ("[sweep]\nmode = 'cloud'\n", "[sweep] mode: expected 'local' or 'slurm'"),
    ("[sweep]\nkeep_hdf5 = 'no'\n", "[sweep] keep_hdf5: expected bool, got 'no'"),
    ("[sweep]\njobs = true\n", "[sweep] jobs: expected int, got True"),
    ("[sweep\n", "not a valid TOML file"),
]


@pytest.mark.parametrize("extra,message", BAD_SPECS)
def test_a_bad_spec_is_one_line_and_exit_2(tmp_path, extra, message):
    workload = "[[workload]]\nkind = 'transform'\ntransform = 'dct'\nshape = [4, 4, 4]\n"
    spec = write_spec(tmp_path / "spec.toml", text=workload + extra)
    code, err = explore(spec, "--out", tmp_path / "out")
    assert code == 2, err
    assert len(err.splitlines()) == 1 and err.startswith(f"triada-explore: error: {spec}: "), err
    assert message in err, err
    assert not (tmp_path / "out").exists()


def test_bad_workloads_and_missing_files(tmp_path):
    cases = [("[[workload]]\nkind = 'fft'\n", 2, "kind: expected one of"),
             ("[[workload]]\nkind = 'tcu'\nalgo = 'matmul'\nsize = 4\n", 2, "unknown key 'size'"),
             ("[[workload]]\nkind = 'transform'\ntransform = 'dct'\ninput = 'nothere.h5'\n", 1,
              "nothere.h5: cannot read this input file"),
             ("[[workload]]\nkind = 'conv'\nlayer = '1,1,4,4,1,1,1,1,0'\nonnx = 'm.onnx'\n", 2,
              "layer and onnx: name one network source"),
             ("[[workload]]\nkind = 'conv'\nonnx = 'spec.toml'\n", 2,
              "onnx: "),
             ("[[workload]]\nkind = 'conv'\nonnx = 3\n", 2, "onnx: expected the model's file")]
    for text, want_code, message in cases:
        spec = write_spec(tmp_path / "spec.toml", text=text)
        code, err = explore(spec, "--out", tmp_path / "out")
        assert code == want_code and message in err and len(err.splitlines()) == 1, err
    code, err = explore(tmp_path / "absent.toml")
    assert code == 1 and "cannot read the spec" in err, err


def test_what_a_row_says_is_what_ran(tmp_path):
    # A bool axis of a mesh key is given as on/off (false left --esop.enabled out: ESOP on
    # in a row labelled off); an exclude of a list-valued axis value excludes it; a
    # calibration file is resolved from the spec's folder and its contents are in the key;
    # a damaged cache entry is rerun, not cached forever.
    from triada._explore_spec import format_option
    assert format_option("esop.enabled", False) == ["--esop.enabled", "off"]
    assert format_option("esop.enabled", True) == ["--esop.enabled", "on"]
    assert format_option("check", True) == ["--check"] and format_option("check", False) == []
    workload = "[[workload]]\nkind = 'transform'\ntransform = 'dct'\nshape = [8, 8, 8]\n"
    cells = workload + "axes = { \"mesh.cells\" = [[2, 2, 2], [4, 4, 4]] }\n" \
        "[[exclude]]\n\"mesh.cells\" = [2, 2, 2]\n"
    listed = subprocess.run(explore_command(write_spec(tmp_path / "c.toml", text=cells),
                                            "--out", tmp_path / "c", "--list"),
                            capture_output=True, text=True, env=clean_env())
    assert listed.returncode == 0 and len(listed.stdout.splitlines()) == 1, listed
    assert "[4, 4, 4]" in listed.stdout, listed.stdout
    (tmp_path / "sub").mkdir()
    (tmp_path / "sub" / "cal.json").write_text("{}\n")
    spec = write_spec(tmp_path / "sub" / "k.toml", text=workload +
                      "options = { \"machine.calibration\" = \"cal.json\" }\n")
    key = lambda: subprocess.run(explore_command(spec, "--out", tmp_path / "k", "--list"),
                                 capture_output=True, text=True, env=clean_env(),
                                 cwd=tmp_path).stdout.split()[-1]
    first = key()
    (tmp_path / "sub" / "cal.json").write_text('{"changed": 1}\n')
    assert key() != first
    spec, out = write_spec(tmp_path / "one.toml", text=workload), tmp_path / "one"
    code, err = explore(spec, "--out", out)
    assert code == 0 and cached(out) == 1, err
    entry = next((out / "cache").glob("*.json"))
    entry.write_text(entry.read_text()[:40])  # truncated, as a crash leaves it
    code, err = explore(spec, "--out", out)
    assert code == 0, err
    assert json.loads(entry.read_text())["status"] == "ok"


def test_outs_fifos_locks_and_repeated_points(tmp_path):
    # --out a file or a path that cannot be made, a FIFO as the spec or as an input: one
    # line, exit 1, no hang (each read a FIFO's writer that never comes). The lock file
    # stays after a sweep (unlinked, two sweeps could each lock their own). Two spec points
    # of one key run once (one session folder) and --slurm lists the key once.
    workload = "[[workload]]\nkind = 'transform'\ntransform = 'dct'\nshape = [4, 4, 4]\n"
    spec = write_spec(tmp_path / "spec.toml", text=workload)
    (tmp_path / "afile").write_text("x")
    for out, message in ((tmp_path / "afile", "is not a folder"),
                         ("/proc/nope/out", "cannot create /proc/nope/out")):
        code, err = explore(spec, "--out", out)
        assert code == 1 and len(err.splitlines()) == 1 and message in err, err
    os.mkfifo(tmp_path / "fifo.toml")
    code, err = explore(tmp_path / "fifo.toml")
    assert code == 1 and "not a regular file" in err and len(err.splitlines()) == 1, err
    os.mkfifo(tmp_path / "x.h5")
    fifo_input = write_spec(tmp_path / "in.toml", text=workload.replace(
        "shape = [4, 4, 4]", "input = 'x.h5'"))
    code, err = explore(fifo_input, "--out", tmp_path / "o1")
    assert code == 1 and "x.h5: not a regular file" in err, err
    twice = workload + "[[workload]]\nname = 'again'\nkind = 'transform'\n" \
        "transform = 'dct'\nshape = [4, 4, 4]\n"
    spec2, out = write_spec(tmp_path / "twice.toml", text=twice), tmp_path / "o2"
    keys = [line.split()[-1] for line in
            subprocess.run(explore_command(spec2, "--out", out, "--list"), capture_output=True,
                           text=True, env=clean_env()).stdout.splitlines()]
    assert len(keys) == 2 and keys[0] == keys[1], keys
    code, err = explore(spec2, "--out", out, "--slurm")
    assert code == 0, err
    listed = json.loads((out / "tasks.json").read_text())["keys"]
    assert len(listed) == 1 and listed[0].startswith(keys[0]), listed
    code, err = explore(spec2, "--out", tmp_path / "o3")
    assert code == 0 and cached(tmp_path / "o3") == 1, err
    assert len(table(tmp_path / "o3")) == 2 and (tmp_path / "o3" / ".lock").exists()


def test_real_runs_on_data_under_mpirun_and_a_changed_input_reruns(tmp_path):
    """An input file makes real runs (ESOP's counters depend on the data); its contents,
    not its name, are in the key: rewritten, its points run again."""
    import h5py
    import numpy as np

    def write_input(zeros):
        x = np.arange(1.0, 65.0).reshape(4, 4, 4)
        x.flat[:zeros] = 0
        with h5py.File(tmp_path / "x.h5", "w") as f:
            f["x"] = x

    write_input(16)
    spec = write_spec(tmp_path / "spec.toml", text="""
[sweep]
metrics = ["counters.macs", "mesh.world_size"]
[[workload]]
kind = "transform"
transform = "dct"
input = "x.h5"
[axes]
esop = ["on", "off"]
ranks = [2]
""")
    out = tmp_path / "out"
    code, err = explore(spec, "--out", out, "--no-plot")
    assert code == 0, err
    on, off = table(out)
    assert {on["run"], on["mesh.world_size"], on["status"], off["status"]} == {"real", "2", "ok"}
    assert int(off["counters.macs"]) == 3 * 4**4 > int(on["counters.macs"])
    assert (out / "runs" / on["key"][:16] / "y.h5").is_file()
    write_input(32)
    code, err = explore(spec, "--out", out, "--no-plot")
    assert code == 0 and started(out) == 4, err
    again_on, again_off = table(out)
    assert again_on["key"] != on["key"] and again_off["counters.macs"] == off["counters.macs"]


def tiny_cnn(path, seed=3, dims=("N", 4, 9, 9)):
    """Conv (per-axis strides and dilations, asymmetric pads, 2 groups), a 1x1 Conv,
    Flatten and a Gemm, on a symbolic batch (and the other DIMS); returns the layers'
    attributes."""
    import numpy as np
    onnx = pytest.importorskip("onnx", reason="needs python3-onnx")
    from onnx import TensorProto, helper, numpy_helper

    rng = np.random.default_rng(seed)
    weights = {"w1": rng.standard_normal((6, 2, 3, 3)), "w2": rng.standard_normal((4, 6, 1, 1)),
               "b": rng.standard_normal((112, 5))}
    nodes = [helper.make_node("Conv", ["x", "w1"], ["h1"], strides=[2, 1], dilations=[1, 2],
                              pads=[1, 0, 0, 2], group=2),
             helper.make_node("Conv", ["h1", "w2"], ["h2"]),
             helper.make_node("Flatten", ["h2"], ["f"]),
             helper.make_node("Gemm", ["f", "b"], ["y"])]
    f = TensorProto.FLOAT
    graph = helper.make_graph(
        nodes, "g", [helper.make_tensor_value_info("x", f, list(dims))],
        [helper.make_tensor_value_info("y", f, None)],
        [numpy_helper.from_array(v.astype(np.float32), n) for n, v in weights.items()])
    onnx.save(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)]), path)


def onnx_macs(n):
    """The closed form: N H_O W_O C_O H_F W_F C_I / g per convolution, M K N for the Gemm."""
    ho, wo = (9 + 1 + 0 - 1 * (3 - 1) - 1) // 2 + 1, (9 + 0 + 2 - 2 * (3 - 1) - 1) // 1 + 1
    return n * ho * wo * 6 * 3 * 3 * 4 // 2 + n * ho * wo * 4 * 6 + n * (4 * ho * wo) * 5


def test_an_onnx_workload_runs_its_layers_and_reruns_nothing(tmp_path):
    """The row's MACs are the closed form summed over the model's layers; the model's
    contents, not its name, are in the key."""
    tiny_cnn(tmp_path / "cnn.onnx")
    spec = write_spec(tmp_path / "spec.toml", text="""
[sweep]
metrics = ["total.macs", "total.layers"]
[[workload]]
kind = "conv"
onnx = "cnn.onnx"
batch = 3
[axes]
method = ["explicit", "implicit"]
""")
    out = tmp_path / "out"
    code, err = explore(spec, "--out", out, "--no-plot")
    assert code == 0, err
    rows = table(out)
    assert [r["status"] for r in rows] == ["ok", "ok"], rows
    assert [int(r["total.macs"]) for r in rows] == [onnx_macs(3)] * 2
    assert {r["total.layers"] for r in rows} == {"3"}
    assert (out / "runs" / rows[0]["key"][:16] / "network.csv").is_file()
    before = (out / "results.csv").read_bytes()
    code, err = explore(spec, "--out", out, "--no-plot")
    assert code == 0 and started(out) == 2, err
    assert (out / "results.csv").read_bytes() == before
    tiny_cnn(tmp_path / "cnn.onnx")  # the same bytes: still cached
    code, err = explore(spec, "--out", out, "--no-plot")
    assert code == 0 and started(out) == 2, err
    tiny_cnn(tmp_path / "cnn.onnx", seed=4)  # other weights: its points run again
    code, err = explore(spec, "--out", out, "--no-plot")
    assert code == 0 and started(out) == 4, err


def test_an_onnx_workload_takes_input_shapes(tmp_path):
    """input_shapes gives a symbolic height and width (the MACs of the fixed model's
    closed form); a dim left symbolic, or input_shapes without onnx, is one line."""
    tiny_cnn(tmp_path / "cnn.onnx", dims=("N", 4, "H", "W"))
    text = """
[sweep]
metrics = ["total.macs"]
[[workload]]
kind = "conv"
onnx = "cnn.onnx"
{shapes}
options = {{ method = "implicit" }}
"""
    spec = write_spec(tmp_path / "spec.toml",
                      text=text.format(shapes="input_shapes = { x = [2, 4, 9, 9] }"))
    code, err = explore(spec, "--out", tmp_path / "out", "--no-plot")
    assert code == 0, err
    assert [int(r["total.macs"]) for r in table(tmp_path / "out")] == [onnx_macs(2)]
    for shapes, message in [
            ("batch = 2", "onnx: input 'x': dim 2 ('H') is symbolic; give "
             "input_shapes={'x': (2, 4, H, W)}"),
            ("input_shapes = { x = [2, 4, 9] }", "onnx: input 'x': input_shapes={'x': (2, 4, "
             "9)} has 3 dims, the model's input has 4 (?x4x?x?)"),
            ("input_shapes = { x = 3 }", "input_shapes: expected a table of input name")]:
        spec = write_spec(tmp_path / "spec.toml", text=text.format(shapes=shapes))
        code, err = explore(spec, "--out", tmp_path / "bad")
        assert code == 2 and message in err and len(err.splitlines()) == 1, err
    spec = write_spec(tmp_path / "spec.toml", text="[[workload]]\nkind = 'conv'\nlayer = "
                      "'1,1,4,4,1,1,1,1,0'\ninput_shapes = { x = [1] }\n")
    code, err = explore(spec, "--out", tmp_path / "bad")
    assert code == 2 and "input_shapes: only with onnx" in err, err


def test_generated_inputs_repetitions_excludes_and_list(tmp_path):
    """A generate table makes each point's input with triada-gen: its report's nonzeros
    are the input's (h5py), and the DFT's first stage (coefficients never zero) does
    nnz(x) N3 MACs; repetitions are points of their own with the same counters; an
    [[exclude]] drops its points; --list names every point and whether it is cached."""
    import h5py
    import numpy as np
    spec = write_spec(tmp_path / "spec.toml", text="""
[sweep]
jobs = 2
metrics = ["counters.macs", "generate.nonzeros", "generate.zero_fraction"]
[[workload]]
name = "lines"
kind = "transform"
transform = "dft"
generate = { shape = [6, 5, 4], seed = 9 }
axes = { "generate.zero-lines" = [0.3, 0.6] }
[axes]
rep = [1, 2]
esop = ["on"]
[[exclude]]
"generate.zero-lines" = 0.6
rep = [2]
""")
    out = tmp_path / "out"
    code, err = explore(spec, "--out", out, "--list")
    assert code == 0 and not out.exists(), err
    code, err = explore(spec, "--out", out, "--no-plot")
    assert code == 0, err
    rows = table(out)
    assert [(r["rep"], r["generate.zero-lines"]) for r in rows] == [
        ("1", "0.3"), ("1", "0.6"), ("2", "0.3")], rows
    for r in rows:
        x = h5py.File(out / r["session"] / "input.h5", "r")["/x"][()]
        nnz = int(np.count_nonzero(x))
        assert int(r["generate.nonzeros"]) == nnz and x.shape == (6, 5, 4)
        assert x.size - nnz == round(float(r["generate.zero-lines"]) * 30) * 4
        report = json.loads((out / r["session"] / "report.json").read_text())
        assert report["counters"]["per_stage"][0]["macs"] == nnz * 4
    assert rows[0]["counters.macs"] == rows[2]["counters.macs"] and rows[0]["key"] != rows[2]["key"]
    p = subprocess.run(explore_command(spec, "--out", out, "--list"), capture_output=True,
                       text=True, env=clean_env(), timeout=120)
    lines = p.stdout.splitlines()
    assert len(lines) == 3 and all(" real cached " in ln for ln in lines), lines
    assert [ln.split()[-1] for ln in lines] == [r["key"][:16] for r in rows]
    assert sorted(f.name for f in (out / rows[0]["session"]).glob("*.h5")) == ["input.h5", "y.h5"]
    changed = spec.read_text().replace("seed = 9", "seed = 10")
    write_spec(spec, text=changed)
    p = subprocess.run(explore_command(spec, "--out", out, "--list"), capture_output=True,
                       text=True, env=clean_env(), timeout=120)
    assert all(" pending " in ln for ln in p.stdout.splitlines()), p.stdout
    # keep_hdf5 = false: the same table, the sessions without their tensors.
    write_spec(spec, text=spec.read_text().replace("seed = 10", "seed = 9").replace(
        "jobs = 2", "jobs = 2\nkeep_hdf5 = false"))
    lean = tmp_path / "lean"
    code, err = explore(spec, "--out", lean, "--no-plot")
    assert code == 0, err
    assert table(lean) == table(out)  # keep_hdf5 is not part of a point's key
    for r in table(lean):
        files = {f.name for f in (lean / r["session"]).iterdir()}
        assert {"report.json", "generate.json", "stdout.txt"} <= files and not any(
            f.endswith(".h5") for f in files), files


def test_slots_bound_the_processes_and_an_alone_point_runs_alone():
    """Points take a slot per rank (at most all of them), an alone point all slots: the
    slots in use never pass the total, and nothing runs beside an alone point."""
    import threading
    from types import SimpleNamespace
    from triada._explore_cache import Slots

    slots = Slots(3)
    assert slots.need(SimpleNamespace(alone=False, ranks=None)) == 1
    assert slots.need(SimpleNamespace(alone=False, ranks=2)) == 2
    assert slots.need(SimpleNamespace(alone=False, ranks=8)) == 3
    assert slots.need(SimpleNamespace(alone=True, ranks=None)) == 3
    lock, running, seen = threading.Lock(), [], []

    def work(need, name):
        slots.acquire(need)
        with lock:
            running.append((name, need))
            seen.append((list(running), sum(n for _, n in running)))
        time.sleep(0.02)
        with lock:
            running.remove((name, need))
        slots.release(need)

    jobs = [(1, "a"), (2, "b"), (3, "alone1"), (1, "c"), (1, "d"), (3, "alone2"), (2, "e")] * 3
    threads = [threading.Thread(target=work, args=(n, f"{name}{i}"))
               for i, (n, name) in enumerate(jobs)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert len(seen) == len(jobs) and max(used for _, used in seen) <= 3
    assert all(len(now) == 1 for now, _ in seen if any("alone" in n for n, _ in now))
    assert slots.free == 3


@pytest.mark.skipif(not (BIN / "triada-bench").is_file(), reason="no triada-bench")
def test_a_bench_workload_measures_alone(tmp_path):
    spec = write_spec(tmp_path / "spec.toml", text="""
[sweep]
metrics = ["rows.0.seconds", "rows.0.variant", "rows.0.macs_dense"]
[[workload]]
name = "measured"
kind = "bench"
alone = true
options = { sparsity = "dense", reps = 1 }
axes = { variants = ["fftw-dct", "openblas"], sizes = [6] }
""")
    out = tmp_path / "out"
    code, err = explore(spec, "--out", out, "--no-plot")
    assert code == 0, err
    rows = table(out)
    assert [r["rows.0.variant"] for r in rows] == ["fftw-dct", "openblas"], rows
    for r in rows:
        report = json.loads((out / r["session"] / "report.json").read_text())
        [row] = report["rows"]
        assert float(r["rows.0.seconds"]) == row["seconds"] > 0 and row["shape"] == [6, 6, 6]
        assert int(r["rows.0.macs_dense"]) == 3 * 6**4 and r["run"] == "real"
        assert "--json" in r["command"] and r["physical.seconds"] == ""


def test_plot_scripts_read_the_table_and_their_failure_is_one_line(tmp_path):
    script = tmp_path / "count.py"
    script.write_text("import sys\nfrom triada.explore import results\n"
                      "rows = results(sys.argv[1])\n"
                      "open(sys.argv[1] + '/count.txt', 'w').write("
                      "str(sum(r['report']['counters']['macs'] for r in rows)))\n")
    (tmp_path / "fail.py").write_text("import sys\nsys.exit(3)\n")
    text = """
[[workload]]
kind = "transform"
transform = "dct"
shape = [4, 4, 4]
[axes]
"technology.node_nm" = [7, 45]
[plot]
scripts = [{scripts}]
"""
    spec = write_spec(tmp_path / "spec.toml", text=text.format(scripts='"count.py"'))
    out = tmp_path / "out"
    code, err = explore(spec, "--out", out)
    assert code == 0, err
    assert (out / "count.txt").read_text() == str(2 * 3 * 4**4)
    write_spec(spec, text=text.format(scripts='"count.py", "fail.py"'))
    code, err = explore(spec, "--out", out)
    assert code == 1 and len(err.splitlines()) == 2, err  # the table's line, then the error
    assert err.splitlines()[1] == (f"triada-explore: error: {spec}: [plot] scripts: "
                                   f"{tmp_path / 'fail.py'} failed (exit code 3)"), err
    write_spec(spec, text=text.format(scripts='"absent.py"'))
    code, err = explore(spec, "--out", out)
    assert code == 1 and "[plot] scripts: " in err and "absent.py: no such file" in err, err


GENERATE_SPECS = [
    ("generate = { shape = [4, 4, 4] }\nshape = [4, 4, 4]\n",
     "shape and generate: name one input"),
    ("axes = { 'generate.sparsity' = [0.5] }\n", "a generate.KEY axis needs a generate table"),
    ("generate = { shape = [4, 4, 4], output = 'x.h5' }\n", "generate: output: set by"),
    ("generate = 3\n", "generate: expected a table"),
    ("generate = { shape = [4, 4, 4] }\naxes = { 'generate.bogus' = [1] }\n",
     "generate.bogus: triada-gen has no option --bogus"),
    ("generate = { shape = [4, 4, 4], seed = 2 }\naxes = { 'generate.seed' = [1] }\n",
     "generate.seed is both fixed and an axis"),
    ("shape = [4, 4, 4]\noptions = { 'chip.area_mm2' = 100 }\naxes = { 'chip.area_mm2' = [200] }\n",
     "--chip.area_mm2 is both fixed and an axis"),
    ("shape = [4, 4, 4]\nalone = 1\n", "alone: expected true or false"),
    ("shape = [4, 4, 4]\naxes = { rep = [0] }\n", "rep: expected positive integers"),
]


@pytest.mark.parametrize("extra,message", GENERATE_SPECS)
def test_bad_generated_inputs_and_keys_are_one_line_and_exit_2(tmp_path, extra, message):
    text = "[[workload]]\nname = 'w'\nkind = 'transform'\ntransform = 'dct'\n" + extra
    spec = write_spec(tmp_path / "spec.toml", text=text)
    code, err = explore(spec, "--out", tmp_path / "out")
    assert code == 2 and len(err.splitlines()) == 1 and message in err, err
    assert not (tmp_path / "out").exists()


def test_the_parquet_table_equals_the_csv(reference):
    """Written only where pyarrow is installed (Debian 12 does not package it)."""
    pq = pytest.importorskip("pyarrow.parquet", reason="needs pyarrow")
    _, out = reference
    data = pq.read_table(out / "results.parquet").to_pydict()
    with open(out / "results.csv", newline="") as f:
        rows = list(csv.DictReader(f))
    assert list(data) == list(rows[0])
    assert [dict(zip(data, values)) for values in zip(*data.values())] == rows
