"""The example script runs (so that it cannot rot) and scipy's optimum matches the library's."""

import re
import subprocess
import sys
from pathlib import Path

EXAMPLE = Path(__file__).resolve().parents[1] / "examples" / "five_bar_stiffness.py"


def test_five_bar_example_runs(tmp_path):
    r = subprocess.run([sys.executable, str(EXAMPLE), str(EXAMPLE.parents[2] / "problems" /
                        "five_bar_stiffness.toml"), str(tmp_path / "plot.png")],
                       capture_output=True, text=True, timeout=300, cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    print(r.stdout)
    assert "scipy L-BFGS-B: CONVERGENCE" in r.stdout
    scipy_cost = float(re.search(r"-> (\S+) at", r.stdout).group(1))
    library_cost = float(re.search(r"converged, \d+ iterations, cost (\S+) at", r.stdout).group(1))
    # printed to 7 digits: the two optimizers agree on the optimum's cost
    assert abs(scipy_cost - library_cost) <= 1e-6 * library_cost
