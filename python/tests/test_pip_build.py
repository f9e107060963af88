"""pip install . building afresh, as a user's first install does (setup.py): from a checkout
whose path has a space, from a read-only one (nothing in it written), twice from one
checkout at once, and what it says while it builds (on the terminal without -v; on stderr
with -v; where its log is when it fails).

Each install builds in a folder of its own; the installs share one ccache, and each lays
out its checkout and its TMPDIR alike (<name>/src, <name>/tmp, ccache's base_dir above),
so the first compiles the library (about 4.5 CPU minutes) and the others find it cached.
Without ccache every install would compile it: skipped there (Debian: ccache)."""

import os
import pty
import re
import select
import shutil
import signal
import subprocess
import sys
import time

import pytest

from test_pip_install import copy_of_tree, env_without_the_build, run

pytestmark = pytest.mark.skipif(
    not shutil.which("git") or not shutil.which("ccache"),
    reason="needs git and ccache (without it each install compiles the library afresh)")

CHECK = """
import numpy as np, scipy.fft, sys, triada
assert triada.__file__.startswith(sys.prefix), triada.__file__
x = np.arange(60.0).reshape(3, 4, 5)
y, _ = triada.transform(x, "dct")
assert np.abs(y - scipy.fft.dctn(x, norm="ortho")).max() < 1e-9
print("ok")
"""


@pytest.fixture(scope="module")
def root(tmp_path_factory):
    """The folder of every install below, with their shared ccache and one copy of the
    tree, taken once: every install builds the same sources, whatever is edited meanwhile."""
    root = tmp_path_factory.mktemp("pip-build")
    copy_of_tree(root / "tree")
    return root


def lay_out(root, name):
    """(checkout, TMPDIR, environment) of one install, at root/name."""
    tree = shutil.copytree(root / "tree", root / name / "src")
    tmp = root / name / "tmp"
    tmp.mkdir()
    env = env_without_the_build()
    del env["PYTHONDONTWRITEBYTECODE"]  # as a user's pip runs: bytecode where it may
    env.update(TMPDIR=str(tmp), CCACHE_DIR=str(root / "ccache"), CCACHE_BASEDIR=str(root))
    return tree, tmp, env


def pip_install(venv, *options):
    """The command that installs the checkout it runs in into a new venv."""
    run([sys.executable, "-m", "venv", "--system-site-packages", venv])
    return [str(venv / "bin" / "python"), "-m", "pip", "install", "--no-build-isolation",
            "--no-index", *options, "."]


def installed_runs(venv, env, cwd):
    """The venv's triada imports from the venv and computes a DCT."""
    out = run([venv / "bin" / "python", "-c", CHECK], cwd=cwd, env=env)
    assert out.strip() == "ok", out


def said(text):
    """The lines "triada: ..." in text (pip may indent or frame them)."""
    return [line[line.index("triada: "):] for line in text.splitlines() if "triada: " in line]


def on_a_terminal(command, cwd, env, timeout=900):
    """(exit code, what the terminal showed): command run in a terminal of its own, as a
    user runs pip."""
    pid, fd = pty.fork()
    if pid == 0:  # the child: the terminal is its controlling one (/dev/tty)
        os.chdir(cwd)
        os.execve(command[0], command, env)
    shown, deadline = [], time.monotonic() + timeout
    while select.select([fd], [], [], max(0.0, deadline - time.monotonic()))[0]:
        try:
            data = os.read(fd, 65536)
        except OSError:  # EIO: the command closed the terminal
            break
        if not data:
            break
        shown.append(data)
    else:
        os.kill(pid, signal.SIGKILL)
    os.close(fd)
    return (os.waitstatus_to_exitcode(os.waitpid(pid, 0)[1]),
            b"".join(shown).decode(errors="replace").replace("\r\n", "\n"))


@pytest.fixture(scope="module")
def from_a_space(root):
    """pip install (no -v) on a terminal, from a checkout and with a TMPDIR (hence the
    build folder) whose paths have a space: (venv, env, exit code, terminal text, s)."""
    tree, _, env = lay_out(root, "with space")
    venv = root / "with space" / "venv"
    start = time.monotonic()
    code, shown = on_a_terminal(pip_install(venv), tree, env)
    return venv, env, code, shown, time.monotonic() - start


def test_a_checkout_whose_path_has_a_space_installs(from_a_space, root):
    venv, env, code, shown, seconds = from_a_space
    assert code == 0, shown[-4000:]
    assert "Could NOT find HDF5" not in shown
    installed_runs(venv, env, root)
    print(f"first install (cold ccache): {seconds:.0f} s")


def test_the_steps_show_on_the_terminal_without_v(from_a_space):
    """pip hides the backend's output without -v: the steps reach the terminal anyway."""
    _, _, code, shown, _ = from_a_space
    assert code == 0, shown[-4000:]
    steps = said(shown)
    assert steps and steps[0].startswith("triada: configuring CMake in "), shown[-4000:]
    assert "with space/tmp/triada-pip-" in steps[0], steps[0]
    assert any(s.startswith("triada: compiling the library and the extension (") for s in steps)
    assert sum(s.startswith("triada: compiling: ") for s in steps) >= 3, steps
    assert any(s.startswith("triada: built the extension in ") for s in steps), steps
    assert "-- Configuring done" not in shown  # CMake's own output: only with -v


def snapshot(tree):
    """Every file and folder under tree (the tree too): its kind, size and mtime."""
    def state(p):
        st = p.lstat()
        return (p.is_dir(), st.st_size, st.st_mtime_ns)
    return {str(p.relative_to(tree)): state(p) for p in [tree, *tree.rglob("*")]}


def read_only(tree, command):
    """command with tree read-only: a read-only bind mount where root may make one (root
    ignores permissions), else without write permission."""
    if os.geteuid() == 0 and shutil.which("unshare"):
        mount = ('mount --bind "$1" "$1" && mount -o remount,ro,bind "$1" || exit 97; '
                 'touch "$1/.probe" 2>/dev/null && exit 98; shift; exec "$@"')
        return ["unshare", "-m", "sh", "-c", mount, "sh", str(tree), *command]
    subprocess.run(["chmod", "-R", "a-w", str(tree)], check=True)
    return command


def test_a_read_only_checkout_installs_and_nothing_in_it_is_written(root):
    tree, tmp, env = lay_out(root, "read-only")
    venv = root / "read-only" / "venv"
    before = snapshot(tree)
    try:
        run(read_only(tree, pip_install(venv)), cwd=tree, env=env)
        after = snapshot(tree)
    finally:
        subprocess.run(["chmod", "-R", "u+w", str(tree)], check=True)
    changed = {p for p in before.keys() | after.keys() if before.get(p) != after.get(p)}
    assert not changed, sorted(changed)
    assert not os.listdir(tmp), os.listdir(tmp)  # the build folder removed after the install
    installed_runs(venv, env, root)


def test_two_installs_of_one_checkout_at_once_both_succeed(root):
    """Both at once, each with -v (stderr, not a terminal): each says its own build folder."""
    tree, tmp, env = lay_out(root, "twice")
    venvs = [root / "twice" / f"venv{i}" for i in (1, 2)]
    commands = [pip_install(v, "-v") for v in venvs]
    start = time.monotonic()
    running = [subprocess.Popen(c, cwd=tree, env=env, stdout=subprocess.PIPE,
                                stderr=subprocess.STDOUT, text=True) for c in commands]
    outs = [p.communicate(timeout=900)[0] for p in running]
    print(f"two installs at once (warm ccache): {time.monotonic() - start:.0f} s")
    for p, out in zip(running, outs):
        assert p.returncode == 0, out[-4000:]
    folders = [re.search(r"triada: configuring CMake in (.*) \(output: ", out).group(1)
               for out in outs]
    assert folders[0] != folders[1] and all(f.startswith(str(tmp)) for f in folders), folders
    for out in outs:
        assert "triada: compiling: " in out and "triada: built the extension in " in out
    assert not os.listdir(tmp), os.listdir(tmp)
    for venv in venvs:
        installed_runs(venv, env, root)


def test_a_failed_build_says_where_its_log_is(root):
    """Without -v pip shows the output of a failed build: the last step names the log,
    kept with its folder."""
    tree, tmp, env = lay_out(root, "failing")
    env["CMAKE_ARGS"] = "-DCMAKE_CXX_COMPILER=/nonexistent/c++"
    p = subprocess.run(pip_install(root / "failing" / "venv"), cwd=tree, env=env,
                       capture_output=True, text=True, timeout=600)
    assert p.returncode != 0
    failed = [s for s in said(p.stdout + p.stderr) if s.startswith("triada: configuring failed")]
    assert failed and "(the folder is kept)" in failed[0], p.stdout[-3000:] + p.stderr[-3000:]
    log = failed[0].split("the output is in ")[1].split(" (the folder")[0]
    assert log.startswith(str(tmp)) and "/nonexistent/c++" in open(log).read(), log
    shutil.rmtree(tmp)
