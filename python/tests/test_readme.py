"""The README's Python example runs as printed and says what it claims, from any folder (its
sample is the package's: triada.data.sample())."""

import re
import subprocess
import sys

from conftest import SRC, clean_env


def test_the_readme_example_runs_and_matches_scipy(tmp_path):
    readme = (SRC / "README.md").read_text()
    block = re.search(r"<!-- python example[^\n]*\n```python\n(.*?)```", readme, re.S)
    assert block, "the README's python example block"
    code = block.group(1)
    assert len(code.strip().splitlines()) == 5
    p = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                       cwd=tmp_path, env=clean_env(), timeout=120)  # not the source tree
    assert p.returncode == 0, p.stderr
    lines = p.stdout.splitlines()
    assert float(lines[0].split(":")[1]) < 1e-12
    assert re.fullmatch(r"52508 MACs, 28\.\d% energy saved by ESOP", lines[1]), lines[1]
