"""pip install . as a user does it (README "Python"): into a fresh virtual environment, from a
copy of the tree (nothing written into the sources); the package installed there, with every
module of python/triada, its extension and py.typed, imports from there and runs a DCT
that equals scipy's, and the README's example runs there as printed.

The extension is built in this build's tree (TRIADA_BUILD_DIR), where it is up to date, so
the test takes seconds, not a library build (about 4.5 CPU minutes);
test_a_new_pip_build_configures_only_the_module checks what a new build directory gets. As
every test, it expects the build up to date (cmake --build before ctest): in a stale one its
build would bring the module alone up to date, ahead of the programs."""

import importlib.util
import os
import pathlib
import re
import shutil
import subprocess
import sys
import sysconfig

import pytest

from conftest import BIN, SRC, clean_env

pytestmark = pytest.mark.skipif(
    not (BIN / "CMakeCache.txt").is_file() or shutil.which("git") is None,
    reason="needs this build's tree and git")


def copy_of_tree(dest):
    """The files of the tree a clone or the working copy has (tracked and not ignored)."""
    listed = subprocess.run(["git", "-C", str(SRC), "ls-files", "-z", "-c", "-o",
                             "--exclude-standard"], capture_output=True, check=True).stdout
    for name in filter(None, listed.decode().split("\0")):
        source = SRC / name
        if source.is_file():
            (dest / name).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(source, dest / name)
    return dest


def env_without_the_build():
    """The tests' environment, importing nothing from the build (no PYTHONPATH)."""
    env = clean_env()
    del env["PYTHONPATH"]
    env.update(PIP_DISABLE_PIP_VERSION_CHECK="1", PIP_NO_INPUT="1", PYTHONDONTWRITEBYTECODE="1")
    return env


def run(command, **kw):
    p = subprocess.run([str(c) for c in command], capture_output=True, text=True, timeout=600,
                       **kw)
    assert p.returncode == 0, f"{command}:\n{p.stdout[-3000:]}\n{p.stderr[-3000:]}"
    return p.stdout


@pytest.fixture(scope="module")
def installed(tmp_path_factory):
    """(venv's python, copied tree) after pip install --no-build-isolation . in the copy."""
    tmp = tmp_path_factory.mktemp("pip")
    tree = copy_of_tree(tmp / "src")
    run([sys.executable, "-m", "venv", "--system-site-packages", tmp / "venv"])
    python = tmp / "venv" / "bin" / "python"
    env = dict(env_without_the_build(), TRIADA_BUILD_DIR=str(BIN))
    run([python, "-m", "pip", "install", "--no-build-isolation", "--no-index", "."],
        cwd=tree, env=env)
    return python, tree


def test_the_installed_package_runs_a_dct_equal_to_scipys(installed):
    python, tree = installed
    code = """
import importlib.metadata, pathlib, sys
import numpy as np, scipy.fft, triada
from triada.transform import gemt, transform
from triada.errors import ConfigError
assert pathlib.Path(triada.__file__).is_relative_to(sys.prefix), triada.__file__
x = np.random.default_rng(7).standard_normal((6, 5, 4))
y, report = transform(x, "dct")
assert np.abs(y - scipy.fft.dctn(x, norm="ortho")).max() < 1e-12
assert report["counters"]["macs"] > 0 and triada.transform is transform and triada.gemt is gemt
assert importlib.metadata.version("triada") == triada.__version__
try:
    triada.transform(x, "dct", norm="unitary")
except ConfigError as e:
    print("ConfigError:", e)
print(triada.__file__)
"""
    out = run([python, "-c", code], cwd=tree.parent, env=env_without_the_build())
    assert "ConfigError: norm: unknown norm 'unitary'" in out, out
    package = os.path.dirname(out.strip().splitlines()[-1])
    shipped = {p.name for p in (SRC / "python" / "triada").iterdir()
               if p.suffix == ".py" or p.name in ("py.typed", "sample.h5")}
    installed_files = {n for n in os.listdir(package) if n != "__pycache__"}
    ext = "_triada" + sysconfig.get_config_var("EXT_SUFFIX")
    assert installed_files == shipped | {ext}, installed_files ^ (shipped | {ext})
    # the sample is a file of its own in the installed package, the tree's bytes
    sample = pathlib.Path(package) / "sample.h5"
    assert not sample.is_symlink() and sample.read_bytes() == (SRC / "data/sample.h5").read_bytes()


def test_the_readme_example_runs_as_printed_after_pip_install(installed, tmp_path):
    python, tree = installed
    readme = (tree / "README.md").read_text()
    assert re.search(r"```sh\n[^`]*pip install --no-build-isolation \.", readme)
    code = re.search(r"<!-- python example[^\n]*\n```python\n(.*?)```", readme, re.S).group(1)
    out = run([python, "-c", code], cwd=tmp_path, env=env_without_the_build())  # anywhere
    assert float(out.splitlines()[0].split(":")[1]) < 1e-12, out


USER_CODE = """
import numpy as np
import triada
from triada.tcu import tcu
y, report = triada.transform(np.ones((2, 3, 4)), "dct", norm="ortho")
reveal_type(y)
product, _ = tcu("matmul", 8, m=16)
triada.transform(np.ones((2, 3, 4)), inverse="yes")
"""


def test_a_type_checker_reads_the_installed_hints(installed, tmp_path):
    """mypy, as a user runs it on their code: the installed package is typed (py.typed),
    its hints hold together, and a wrong argument type is reported where it is made."""
    python, _ = installed
    if subprocess.run([python, "-c", "import mypy"], capture_output=True).returncode:
        pytest.skip("needs mypy (Debian: python3-mypy)")
    mypy = [python, "-m", "mypy", "--cache-dir", tmp_path / "cache", "--no-error-summary"]
    env = env_without_the_build()
    run(mypy + ["--ignore-missing-imports", "-p", "triada"], cwd=tmp_path, env=env)
    (tmp_path / "user.py").write_text(USER_CODE)
    p = subprocess.run([str(c) for c in mypy + ["user.py"]], capture_output=True, text=True,
                       cwd=tmp_path, env=env, timeout=600)
    lines = p.stdout.splitlines()
    assert len(lines) == 2 and "user.py:6: note: Revealed type is" in lines[0], p.stdout
    assert "numpy.ndarray" in lines[0] and "BrickArray" in lines[0], lines[0]
    assert lines[1].startswith('user.py:8: error: Argument "inverse" to "transform" has '
                               'incompatible type "str"; expected "bool"'), lines[1]


def test_a_new_pip_build_configures_only_the_module(tmp_path):
    """What pip's build configures in a new directory: the module's targets for this
    Python, no tests, no benchmark (configured only: a build would compile the library)."""
    spec = importlib.util.spec_from_file_location("triada_setup", SRC / "setup.py")
    setup_py = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(setup_py)  # defines its functions; setup() runs only as __main__
    build = tmp_path / "cmake"
    run(["cmake"] + setup_py.configure_args(build), env=env_without_the_build())
    cache = dict(re.findall(r"(?m)^(\w+):\w+=(.*)$", (build / "CMakeCache.txt").read_text()))
    assert cache["TRIADA_BUILD_TESTS"] == cache["TRIADA_BUILD_BENCH"] == "OFF"
    assert cache["TRIADA_PYTHON"] == "ON" and cache["Python3_EXECUTABLE"] == sys.executable
    targets = run(["cmake", "--build", build, "--target", "help"])
    assert "triada_python" in targets and "triada_app_transform" in targets, targets
    for unwanted in ("triada_unit_tests", "triada_mpi_tests", "triada-bench"):
        assert unwanted not in targets, unwanted
    if shutil.which("ccache"):
        assert cache["CMAKE_CXX_COMPILER_LAUNCHER"] == "ccache"


def test_the_console_script_triada_explore_is_installed(installed):
    python, tree = installed
    out = run([python.parent / "triada-explore", "--help"], cwd=tree,
              env=env_without_the_build())
    assert out.startswith("usage: triada-explore") and "--slurm" in out, out
