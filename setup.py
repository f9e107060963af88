"""pip install . (pyproject.toml): the package python/triada with its extension _triada, built
by CMake from this tree with only what the extension needs (no tests, no benchmark).

Where: each run builds in a folder of its own outside the source tree (triada-pip-* in the
temporary directory, TMPDIR), setuptools' files included, and removes it once the wheel is
made; a failed build keeps it, with the build's output in pip-build.log, and says where.
Nothing is written into the checkout: a read-only one installs, and two installs of one
checkout at once do not meet.

What it says: each step (configuring, compiling with its percentage, done) as a line
"triada: ...". pip shows a backend's output only with -v or when the build fails, so the
lines go to the terminal pip runs in (/dev/tty) where there is one, else to stderr.

Environment:
- TRIADA_BUILD_DIR: the CMake build directory to build the extension in instead (kept). A
  new one is configured as below; one already configured (a developer's build/) is built
  as it is, so nothing up to date is compiled again. Two installs at once must not share it.
- CMAKE_ARGS: more arguments for a new configuration (-DTRIADA_ARCH=-march=native, ...).
- CMAKE_BUILD_PARALLEL_LEVEL: parallel compile jobs (default: the CPUs).
ccache is used where it is installed, unless CMAKE_ARGS names a compiler launcher: each
install builds afresh, and ccache makes a repeated one take seconds instead of minutes.
"""

import os
import re
import shlex
import shutil
import subprocess
import sys
import sysconfig
import tempfile
import time
from pathlib import Path

from setuptools import Extension, setup
from setuptools.command.build_ext import build_ext
from setuptools.errors import ExecError

ROOT = Path(__file__).resolve().parent
LOG = "pip-build.log"  # CMake's output (configure and build), in the per-install folder


def project_version():
    """The version in CMakeLists.txt's project(), the library's own."""
    text = (ROOT / "CMakeLists.txt").read_text(encoding="utf-8")
    found = re.search(r"^project\(triada\b[^)]*\bVERSION\s+([0-9.]+)", text, re.M)
    if not found:
        sys.exit("setup.py: no VERSION in CMakeLists.txt's project(triada ...)")
    return found.group(1)


def configure_args(build_dir):
    """cmake's arguments for a new build directory: the module's targets, this Python."""
    args = ["-S", str(ROOT), "-B", str(build_dir), "-DCMAKE_BUILD_TYPE=Release",
            "-DTRIADA_BUILD_TESTS=OFF", "-DTRIADA_BUILD_BENCH=OFF", "-DTRIADA_PYTHON=ON",
            f"-DPython3_EXECUTABLE:FILEPATH={sys.executable}"]
    try:
        import pybind11  # the pip package's CMake files, where pybind11-dev's are absent
        args.append(f"-Dpybind11_DIR={pybind11.get_cmake_dir()}")
    except ImportError:
        pass
    extra = shlex.split(os.environ.get("CMAKE_ARGS", ""))
    if shutil.which("ccache") and not any("COMPILER_LAUNCHER" in a for a in extra):
        args += ["-DCMAKE_C_COMPILER_LAUNCHER=ccache", "-DCMAKE_CXX_COMPILER_LAUNCHER=ccache"]
    return args + extra


class Say:
    """Lines "triada: ..." where the user sees them: the terminal, else stderr."""

    def __init__(self):
        try:
            self.tty = open("/dev/tty", "w", encoding="utf-8")  # pip's own, if any
        except OSError:
            self.tty = None

    def __call__(self, text, always=False):
        line = f"triada: {text}"
        if self.tty:
            # a line of its own under pip's; pip's spinner takes the last trailing space
            self.tty.write(f"\n{line}  ")
            self.tty.flush()
        if always or not self.tty:
            print(line, file=sys.stderr, flush=True)


class Percent:
    """Says the build's progress at each tenth, read from make's or ninja's lines."""

    PATTERN = re.compile(r"^\[\s*(?:(\d+)%|(\d+)/(\d+))\]")

    def __init__(self, say):
        self.say, self.said = say, 0

    def __call__(self, line):
        found = self.PATTERN.match(line)
        if not found:
            return
        done, of = found.group(2, 3)
        percent = int(found.group(1)) if found.group(1) else 100 * int(done) // int(of)
        if percent // 10 > self.said // 10:
            self.said = percent
            self.say(f"compiling: {percent}% ...")


def run_logged(command, log, env, on_line=None):
    """Runs command, its output into log and onto stdout (pip -v shows it); True if it
    succeeded."""
    with subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                          env=env, text=True, errors="replace") as p:
        for line in p.stdout:
            log.write(line)
            log.flush()
            sys.stdout.write(line)
            sys.stdout.flush()
            if on_line:
                on_line(line)
    return p.returncode == 0


def build_env(build_dir, given):
    """The build's environment. A per-install folder's random name would be in every
    compile command, a ccache miss each time: ccache's base_dir at the folders' parent
    (TMPDIR; unless one is set) makes them relative, so a repeated install hits."""
    env = dict(os.environ)
    if not given:  # build_dir: TMPDIR/triada-pip-*/temp.*/cmake
        env.setdefault("CCACHE_BASEDIR", str(build_dir.parents[2]))
    return env


def minutes(seconds):
    return f"{int(seconds) // 60}m {int(seconds) % 60:02d}s"


class CMakeBuild(build_ext):
    """Builds the target triada_python with CMake and takes its module _triada."""

    def build_extension(self, ext):
        given = os.environ.get("TRIADA_BUILD_DIR")
        build_dir = Path(given or Path(self.build_temp) / "cmake").resolve()
        log_path = Path(self.build_temp).resolve() / LOG  # in the per-install folder
        for folder in (build_dir, log_path.parent):
            folder.mkdir(parents=True, exist_ok=True)
        say, started, env = Say(), time.monotonic(), build_env(build_dir, given)
        with open(log_path, "w", encoding="utf-8") as log:
            for step, command, on_line in self.steps(build_dir, given, log_path, say):
                if not run_logged(command, log, env, on_line):
                    say(f"{step} failed after {minutes(time.monotonic() - started)}; the "
                        f"output is in {log_path} (the folder is kept)", always=True)
                    raise ExecError(f"setup.py: {step} failed: {log_path}")
        say(f"built the extension in {minutes(time.monotonic() - started)}; packing ...")
        target = Path(self.get_ext_fullpath(ext.name))
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(built_module(build_dir), target)

    @staticmethod
    def steps(build_dir, given, log_path, say):
        """(what, command, line reader): configure where new, then build."""
        cache = build_dir / "CMakeCache.txt"
        if not cache.is_file():
            say(f"configuring CMake in {build_dir} (output: {log_path}) ...")
            yield "configuring", ["cmake"] + configure_args(build_dir), None
        elif "TRIADA_PYTHON:BOOL=ON" not in cache.read_text(encoding="utf-8"):
            sys.exit(f"setup.py: TRIADA_BUILD_DIR={given}: configured without the Python "
                     "module (TRIADA_PYTHON=OFF)")
        jobs = os.environ.get("CMAKE_BUILD_PARALLEL_LEVEL") or str(os.cpu_count() or 1)
        launcher = re.search(r"(?m)^CMAKE_CXX_COMPILER_LAUNCHER:\w+=(.*)$",
                             cache.read_text(encoding="utf-8"))
        ccache = "ccache, " if launcher and "ccache" in launcher.group(1) else ""
        say(f"compiling the library and the extension ({jobs} jobs, {ccache}about 4.5 CPU "
            "minutes where nothing is built or cached yet) ...")
        yield "the build", ["cmake", "--build", str(build_dir), "--target", "triada_python",
                            "--parallel", jobs], Percent(say)


def built_module(build_dir):
    """The module the build made, for this Python (its file name suffix)."""
    suffix = sysconfig.get_config_var("EXT_SUFFIX")
    module = build_dir / "python" / "triada" / f"_triada{suffix}"
    if not module.is_file():
        made = sorted(p.name for p in (build_dir / "python" / "triada").glob("_triada*"))
        sys.exit(f"setup.py: {build_dir}: no python/triada/_triada{suffix} (found: "
                 f"{', '.join(made) or 'none'}): a build for another Python?")
    return module


def main():
    """setup() with every file it writes in a new folder outside the tree, removed after
    (kept after a failed build, whose log is in it)."""
    base = Path(tempfile.mkdtemp(prefix="triada-pip-"))
    keep = False
    try:
        setup(version=project_version(),
              ext_modules=[Extension("triada._triada", sources=[])],
              cmdclass={"build_ext": CMakeBuild},
              options={"build": {"build_base": str(base)},
                       "egg_info": {"egg_base": str(base)}})
    except (Exception, SystemExit):  # setuptools exits on a failed command
        keep = any(base.rglob(LOG))
        raise
    finally:
        if not keep:
            shutil.rmtree(base, ignore_errors=True)


if __name__ == "__main__":  # as pip's setuptools backend runs it; the tests import it
    main()
