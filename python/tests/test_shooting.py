"""Multiple shooting from Python: `shooting_point`'s rows and Jacobian against central
differences (node states and controls, gaps open), its variables, and `optimize` on a
`[shooting]` problem reaching single shooting's optimum with the nodes in the summary."""

import numpy as np
import pytest

import hybridopt


def _with_segments(problems, k):
    text = (problems / "thrust_constrained.toml").read_text()
    return hybridopt.Problem.from_toml(text + f"\n[shooting]\nsegments = {k}\n", "thrust_ms")


def test_shooting_point_jacobian_equals_central_differences(problems):
    p = _with_segments(problems, 3)
    start = p.shooting_point()
    nu = len(p.optimized)
    states = p.state_names
    assert start["variables"][:nu] == p.optimized
    assert start["variables"][nu:] == [f"{s}@{k}" for k in (1, 2) for s in states]
    assert start["names"] == ["second_impact", "final_height"] + [
        f"continuity[{k}].{s}" for k in (1, 2) for s in states
    ]
    # the start is single shooting's run: the gaps are closed; open them, and move the
    # controls off zero, so that every block of the Jacobian is exercised
    x = np.array(start["x"], dtype=float)
    x[:nu] = [3.0 * np.sin(0.37 * (k + 5)) for k in range(nu)]
    x[nu:] += 0.01 * np.cos(np.arange(len(x) - nu))
    pt = p.shooting_point(x)
    gaps = np.abs(pt["values"][2:])
    assert gaps.max() > 1e-3, gaps
    jac = np.array(pt["jacobian"])
    h = 1e-6
    columns = list(range(0, nu, 13)) + list(range(nu, len(x)))
    for j in columns:
        e = np.zeros_like(x)
        e[j] = h
        hi, lo = p.shooting_point(x + e), p.shooting_point(x - e)
        fd = (hi["values"] - lo["values"]) / (2 * h)
        scale = np.maximum(np.abs(jac).max(axis=1), 1.0)
        assert np.all(np.abs(jac[:, j] - fd) <= 1e-6 * scale), (pt["variables"][j], jac[:, j], fd)
        fd_cost = (hi["cost"] - lo["cost"]) / (2 * h)
        assert abs(pt["cost_gradient"][j] - fd_cost) <= 1e-6 * max(1.0, abs(fd_cost)), j


def test_shooting_point_needs_a_shooting_table(problems):
    p = hybridopt.Problem.from_file(problems / "thrust_constrained.toml")
    with pytest.raises(hybridopt.InvalidInputError, match=r"no \[shooting\] table"):
        p.shooting_point()


def test_optimize_with_segments_reaches_single_shootings_optimum(problems):
    single = hybridopt.Problem.from_file(problems / "thrust_constrained.toml").optimize()
    multiple = _with_segments(problems, 4).optimize()
    assert multiple["converged"], multiple["termination"]
    shooting = multiple["shooting"]
    assert shooting["segments"] == 4 and len(shooting["nodes"]) == 4
    assert shooting["max_defect"] <= 1e-9
    rel = abs(multiple["final_cost"] - single["final_cost"]) / single["final_cost"]
    print(f"single {single['final_cost']!r}, multiple {multiple['final_cost']!r}: {rel:.1e}")
    assert rel <= 1e-8
