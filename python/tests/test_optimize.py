"""scipy's L-BFGS-B over `fun_and_grad` reaches the optimum of `hybridopt optimize`;
`Problem.optimize` returns the CLI's summary.json and writes results only when asked."""

import json
import math

import numpy as np
import pytest
from scipy.optimize import minimize

import hybridopt

# reference-models §1: v0* = (k √(g²t*² − 2 g y0 (k² − 1)) − g t*)/(k² − 1), k = 1 + 2e + 2e²
G, E, Y0, T_STAR = 9.81, 0.8, 1.0, 2.0
K = 1 + 2 * E + 2 * E * E
V0_CLOSED = (K * math.sqrt(G * G * T_STAR**2 - 2 * G * Y0 * (K * K - 1)) - G * T_STAR) / (K * K - 1)


def test_scipy_reaches_the_cli_optimum_on_impact_timing(cli, problems, tmp_path):
    f = problems / "impact_timing.toml"
    want = cli.json("optimize", f, "--out", tmp_path / "cli", "--quiet")
    p = hybridopt.Problem.from_file(f)
    assert p.optimized == ["v0"]
    r = minimize(p.fun_and_grad, p.x0, jac=True, method="L-BFGS-B", bounds=p.bounds,
                 options={"ftol": 1e-30, "gtol": 1e-14})
    assert r.success, r.message
    v0_scipy = r.x[0]
    v0_cli = want["parameters_final"]["v0"]
    print(f"v0: scipy {v0_scipy!r}, CLI {v0_cli!r}, closed form {V0_CLOSED!r}; "
          f"scipy cost {r.fun:.3e} in {r.nfev} evaluations")
    assert abs(v0_scipy - v0_cli) <= 1e-8
    assert abs(v0_scipy - V0_CLOSED) <= 1e-8
    assert abs(v0_cli - V0_CLOSED) <= 1e-8


def test_optimize_returns_the_cli_summary(cli, problems, tmp_path, monkeypatch):
    f = problems / "impact_timing.toml"
    want = cli.json("optimize", f, "--out", tmp_path / "cli", "--quiet")
    monkeypatch.chdir(tmp_path)
    p = hybridopt.Problem.from_file(f)
    got = p.optimize()
    # nothing is written without `out` (the CLI's default folder would be results/<name>)
    assert sorted(x.name for x in tmp_path.iterdir()) == ["cli"]
    for s in (got, want):
        assert s.pop("wall_time_s") > 0
    assert got == want
    assert got["outcome"] == "converged"
    # the problem's values are unchanged
    assert p["v0"] == 0.5


def test_optimize_out_writes_the_cli_results_folder(cli, problems, tmp_path):
    f = problems / "thrust_control.toml"
    cli.json("optimize", f, "--out", tmp_path / "cli", "--quiet", "--max-iters", "5")
    p = hybridopt.Problem.from_file(f)
    got = p.optimize(max_iters=5, out=str(tmp_path / "py"))
    files = sorted(x.name for x in (tmp_path / "cli").iterdir())
    assert sorted(x.name for x in (tmp_path / "py").iterdir()) == files
    assert "controls.png" in files and "history.csv" in files
    written = json.loads((tmp_path / "py" / "summary.json").read_text())
    assert written == got
    want = json.loads((tmp_path / "cli" / "summary.json").read_text())
    for s in (got, want):
        s.pop("wall_time_s")
    assert got == want
    # same iterates, so the same history
    for name in ["history.csv", "trajectory.csv"]:
        a = np.loadtxt(tmp_path / "py" / name, delimiter=",", skiprows=1)
        b = np.loadtxt(tmp_path / "cli" / name, delimiter=",", skiprows=1)
        assert np.array_equal(a, b), name


def test_optimize_overrides_and_bad_names(problems):
    p = hybridopt.Problem.from_file(problems / "impact_timing.toml")
    s = p.optimize(solver="gd", max_iters=3, gradient="direct")
    assert (s["solver"], s["gradient"]) == ("gd", "direct")
    assert s["iterations"] <= 3
    with pytest.raises(hybridopt.InvalidInputError, match="valid solvers are lbfgs, gd"):
        p.optimize(solver="newton")
    with pytest.raises(hybridopt.InvalidInputError, match="adjoint, direct or fd"):
        p.optimize(gradient="dual")
