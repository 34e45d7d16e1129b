"""Multiple shooting from Python: `shooting_point`'s rows and Jacobian against central
differences (node states and controls, gaps open), its variables, and `optimize` on a
`[shooting]` problem reaching single shooting's optimum with the nodes in the summary, and
both reaching the ball's closed-form optimum."""

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
    # held to the solver's stop tolerance (the continuity rows are constraints of the SQP)
    assert shooting["max_defect"] <= 1e-9
    rel = abs(multiple["final_cost"] - single["final_cost"]) / single["final_cost"]
    # the independent reference: IPOPT (CasADi, benches/peers/thrust_ipopt.py) on this
    # optimum's impact sequence (benches/peers/README.md)
    ipopt = 13.687559080498612
    ra = abs(single["final_cost"] - ipopt) / ipopt
    rb = abs(multiple["final_cost"] - ipopt) / ipopt
    print(f"single {single['final_cost']!r}, multiple {multiple['final_cost']!r}: {rel:.1e}; "
          f"vs IPOPT {ra:.1e}, {rb:.1e}")
    # measured 3.0e-14 between them, 4.5e-14 and 1.4e-14 from IPOPT (2026-12-07; the
    # bound was 1e-8)
    assert rel <= 8e-13
    assert ra <= 1.1e-12 and rb <= 3.5e-13


# The ball thrown from y0 = 1 at v0 on [0, 2] (no drag), e and v0 free: its 2nd impact at
# t = 1.3 and e near 0.6. The optimum has zero residual, so it is known in closed form
# (tests/shooting.rs, `same_optimum_as_single_shooting`): e* = 0.6 and, since the ball
# lands at t1 = (v0 + w)/g with speed w = sqrt(v0² + 2 g y0) and again 2 e* w / g later,
# (1.3 g − v0)² = (1 + 2 e*)² (v0² + 2 g y0), whose root below 1.3 g is v0*.
BALL_T2 = """
[system]
kind = "bouncing_ball"
[simulation]
t_end = 2.0
rtol = 1e-12
atol = 1e-12
[parameters]
g = { value = 9.81 }
e = { value = 0.8, optimize = true, lower = 0.1, upper = 0.95 }
c = { value = 0.0 }
y0 = { value = 1.0 }
v0 = { value = 1.0, optimize = true, lower = -5.0, upper = 5.0 }
[[cost]]
kind = "event_time_squared"
guard = "ground"
occurrence = 2
target = 1.3
[[cost]]
kind = "parameter_squared"
param = "e"
target = 0.6
weight = 0.1
[optimizer]
tol_kkt = 1e-10
"""


def _ball_t2_closed_form():
    g, y0, k = 9.81, 1.0, 1.0 + 2.0 * 0.6
    a, b, c = k * k - 1.0, 2.0 * 1.3 * g, k * k * 2.0 * g * y0 - (1.3 * g) ** 2
    return 0.6, (-b + np.sqrt(b * b - 4.0 * a * c)) / (2.0 * a)


def test_single_and_multiple_shooting_reach_the_closed_form_optimum():
    e_star, v0_star = _ball_t2_closed_form()
    assert abs(v0_star - 2.03186779386) <= 1e-10
    single = hybridopt.Problem.from_toml(BALL_T2, "ball_t2").optimize()
    multiple = hybridopt.Problem.from_toml(BALL_T2 + "\n[shooting]\nsegments = 4\n", "ball_t2_ms").optimize()
    for r in (single, multiple):
        assert r["converged"], r["termination"]
    assert multiple["shooting"]["max_defect"] <= 1e-9
    worst = max(
        abs(r["parameters_final"][name] - want) / want
        for r in (single, multiple)
        for name, want in (("e", e_star), ("v0", v0_star))
    )
    print(f"closed form ({e_star}, {v0_star:.12f}): worst relative {worst:.1e}; "
          f"single ({single['solver']}) {single['parameters_final']}, "
          f"multiple ({multiple['solver']}) {multiple['parameters_final']}")
    # measured 1.6e-9 (single shooting's L-BFGS at its tol_grad 1e-9; multiple shooting's
    # SQP at tol_kkt 1e-10: 5.3e-11 (e) and 8.7e-11 (v0)) (2026-12-07)
    assert worst <= 4e-8
