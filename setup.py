"""pip install . (pyproject.toml): the package python/triada with its extension _triada, built
by CMake from this tree with only what the extension needs (no tests, no benchmark).

Environment:
- TRIADA_BUILD_DIR: the CMake build directory to build the extension in. A new one is
  configured as below; one already configured (a developer's build/) is built as it is, so
  nothing up to date is compiled again. Default: one under build-pip/, kept for the next
  install.
- CMAKE_ARGS: more arguments for a new configuration (-DTRIADA_ARCH=-march=native, ...).
- CMAKE_BUILD_PARALLEL_LEVEL: parallel compile jobs (default: the CPUs).
ccache is used where it is installed, unless CMAKE_ARGS names a compiler launcher.
"""

import os
import re
import shlex
import shutil
import sys
import sysconfig
from pathlib import Path

from setuptools import Extension, setup
from setuptools.command.build_ext import build_ext

ROOT = Path(__file__).resolve().parent
BUILD_BASE = "build-pip"


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


class CMakeBuild(build_ext):
    """Builds the target triada_python with CMake and takes its module _triada."""

    def build_extension(self, ext):
        given = os.environ.get("TRIADA_BUILD_DIR")
        build_dir = Path(given or Path(self.build_temp) / "cmake").resolve()
        cache = build_dir / "CMakeCache.txt"
        if not cache.is_file():
            self.spawn(["cmake"] + configure_args(build_dir))
        elif "TRIADA_PYTHON:BOOL=ON" not in cache.read_text(encoding="utf-8"):
            sys.exit(f"setup.py: TRIADA_BUILD_DIR={given}: configured without the Python "
                     "module (TRIADA_PYTHON=OFF)")
        jobs = os.environ.get("CMAKE_BUILD_PARALLEL_LEVEL") or str(os.cpu_count() or 1)
        self.spawn(["cmake", "--build", str(build_dir), "--target", "triada_python",
                    "--parallel", jobs])
        target = Path(self.get_ext_fullpath(ext.name))
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(built_module(build_dir), target)


def built_module(build_dir):
    """The module the build made, for this Python (its file name suffix)."""
    suffix = sysconfig.get_config_var("EXT_SUFFIX")
    module = build_dir / "python" / "triada" / f"_triada{suffix}"
    if not module.is_file():
        made = sorted(p.name for p in (build_dir / "python" / "triada").glob("_triada*"))
        sys.exit(f"setup.py: {build_dir}: no python/triada/_triada{suffix} (found: "
                 f"{', '.join(made) or 'none'}): a build for another Python?")
    return module


if __name__ == "__main__":  # as pip's setuptools backend runs it; the tests import it
    # setuptools' files (and the CMake build) in build-pip/, not in the sources nor in a
    # developer's build/; kept, so that the next pip install compiles only what changed.
    (ROOT / BUILD_BASE).mkdir(exist_ok=True)
    setup(version=project_version(), ext_modules=[Extension("triada._triada", sources=[])],
          cmdclass={"build_ext": CMakeBuild},
          options={"build": {"build_base": BUILD_BASE}, "egg_info": {"egg_base": BUILD_BASE}})
