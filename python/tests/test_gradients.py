"""Gradients from Python equal the command line's (`hybridopt gradient --json`) to the last
digit, for every shipped problem; τ = dt_e/dθ too; and the methods witness each other."""

import numpy as np
import pytest

import hybridopt



def shipped(problems):
    """The shipped problems with a cost ([periodic] ones are solved by `hybridopt periodic`)."""
    return sorted(f for f in problems.glob("*.toml") if "[periodic]" not in f.read_text())


def test_gradient_of_a_problem_without_cost_is_a_clear_error(problems):
    p = hybridopt.Problem.from_file(problems / "simplest_walker.toml")
    with pytest.raises(hybridopt.InvalidInputError, match="no objective to differentiate"):
        p.gradient()


@pytest.mark.parametrize("method", ["adjoint", "direct"])
def test_gradient_equals_cli_for_every_problem(cli, problems, method):
    files = shipped(problems)
    assert len(files) >= 10
    for f in files:
        p = hybridopt.Problem.from_file(f)
        g = p.gradient(method=method, tau=True)
        if f.stem == "compass_gait_four_steps":
            # its start θ walks one step only: the cost's gradient exists, but the CLI's
            # `gradient` also evaluates the constraints on the later heel strikes and
            # refuses (tests/cli.rs checks the message)
            assert len(g.events) == 1 and g.cost > 0, f.name
            continue
        want = cli.json("gradient", f, "--method", method, "--tau")
        assert g.cost == want["cost"], f.name
        assert g.as_dict() == want["gradient"], f.name
        # every objective, value and gradient
        for i, name in enumerate(g.objective_names):
            assert g.values[i] == want["objectives"][name]["cost"], (f.name, name)
            got = dict(zip(g.parameter_names, g.gradients[i]))
            assert got == want["objectives"][name]["gradient"], (f.name, name)
        # the events and their τ, exactly
        assert len(g.events) == len(want["events"]), f.name
        for e, w in zip(g.events, want["events"]):
            assert (e.t, e.guard, e.mode_before, e.mode_after) == (
                w["t"], w["guard"], w["mode_before"], w["mode_after"]), f.name
            assert dict(zip(g.parameter_names, e.tau)) == w["dt_dp"], (f.name, e)


@pytest.mark.parametrize("method", ["fd", "dual"])
def test_witness_methods_equal_cli(cli, problems, method):
    for name in ["impact_timing.toml", "bouncing_ball.toml", "thrust_control.toml"]:
        f = problems / name
        g = hybridopt.Problem.from_file(f).gradient(method=method)
        want = cli.json("gradient", f, "--method", method, "--no-tau")
        assert g.cost == want["cost"]
        assert g.as_dict() == want["gradient"], name


def test_methods_witness_each_other(problems):
    """adjoint, dual and central FD against the direct method, per component relative to
    max(|g_i|, 1e-3·max|g|). Measured worst (adjoint, dual, fd): impact_timing 4.7e-15,
    3.7e-15, 8.8e-12; bouncing_ball 1.3e-11, 1.2e-11, 1.3e-10; locking_pendulum 3.1e-11,
    4.6e-11, 3.3e-11. Bounds about 20-30x those."""
    bounds = {
        "impact_timing.toml": {"adjoint": 1e-13, "dual": 1e-13, "fd": 2e-10},
        "bouncing_ball.toml": {"adjoint": 3e-10, "dual": 3e-10, "fd": 3e-9},
        "locking_pendulum.toml": {"adjoint": 1e-9, "dual": 1e-9, "fd": 1e-9},
    }
    for name, tols in bounds.items():
        p = hybridopt.Problem.from_file(problems / name)
        by = {m: np.asarray(p.gradient(method=m).gradient) for m in ["adjoint", "direct", "dual", "fd"]}
        ref = by["direct"]
        big = np.max(np.abs(ref))
        assert big > 0
        den = np.maximum(np.abs(ref), 1e-3 * big)
        for m, tol in tols.items():
            worst = np.max(np.abs(by[m] - ref) / den)
            print(f"measured {name} {m} vs direct: {worst:.2e} (tol {tol:.0e})")
            assert worst <= tol, (name, m, worst)


def test_tau_is_the_derivative_of_the_event_time(problems):
    """τ of the 3rd impact of impact_timing against central differences of the simulated
    event time in v0."""
    p = hybridopt.Problem.from_file(problems / "impact_timing.toml")
    g = p.gradient(method="adjoint", tau=True)
    assert g.tau_from == "direct_pass"
    assert p.gradient(method="direct", tau=True).tau_from == "direct"
    j = p.parameter_names.index("v0")
    h = 1e-6
    t_plus = p.simulate({"v0": 0.5 + h}).events[2].t
    t_minus = p.simulate({"v0": 0.5 - h}).events[2].t
    fd = (t_plus - t_minus) / (2 * h)
    assert abs(g.events[2].tau[j] - fd) < 1e-7 * abs(fd), (g.events[2].tau[j], fd)
    # without tau=True the events carry none
    assert all(e.tau is None for e in p.gradient().events)


def test_fun_and_grad_is_the_gradient_over_the_optimized_entries(problems):
    p = hybridopt.Problem.from_file(problems / "thrust_control.toml")
    x = p.x0
    assert len(x) == len(p.optimized) > 1
    f, df = p.fun_and_grad(x)
    g = p.gradient()
    idx = [p.parameter_names.index(n) for n in p.optimized]
    assert f == g.cost
    assert np.array_equal(df, g.gradient[idx])
    # central differences along a random direction
    rng = np.random.default_rng(1)
    d = rng.standard_normal(len(x))
    h = 1e-5
    fd = (p.fun_and_grad(x + h * d)[0] - p.fun_and_grad(x - h * d)[0]) / (2 * h)
    assert abs(fd - df @ d) < 1e-5 * max(abs(fd), 1e-12), (fd, df @ d)


def test_tolerances_equal_the_cli_overrides(cli, problems):
    f = problems / "bouncing_ball.toml"
    p = hybridopt.Problem.from_file(f)
    assert p.tolerances == (1e-10, 1e-10)
    p.tolerances = (1e-6, 1e-7)
    g = p.gradient(method="adjoint", tau=True)
    want = cli.json("gradient", f, "--rtol", "1e-6", "--atol", "1e-7", "--tau")
    assert want["tolerances"] == {"rtol": 1e-6, "atol": 1e-7}
    assert g.cost == want["cost"] and g.as_dict() == want["gradient"]
    # the events without τ are the adjoint's own run; with τ, the direct pass's (as the
    # CLI's): the same events, their times within the direct pass's own step control
    # (measured 6.5e-14 apart at rtol 1e-6)
    plain = p.gradient(method="adjoint")
    assert [e.guard for e in plain.events] == [e.guard for e in g.events]
    assert max(abs(a.t - b.t) for a, b in zip(plain.events, g.events)) < 1e-9
    with pytest.raises(hybridopt.InvalidInputError, match=r"rtol 0: a tolerance must be in \(0, 1\)"):
        p.tolerances = (0.0, 1e-6)
    assert p.tolerances == (1e-6, 1e-7)


def test_the_setup_follows_the_values(cli, problems):
    """ball_identify tracks a reference run made with the problem's other values (y0 here):
    the setup built once is reused while the values stay, and built anew after a change,
    as the CLI builds it from `--param`."""
    f = problems / "ball_identify.toml"
    p = hybridopt.Problem.from_file(f)
    x = p.x0
    f1, g1 = p.fun_and_grad(x)
    f2, g2 = p.fun_and_grad(x)
    assert f1 == f2 and np.array_equal(g1, g2)
    p["y0"] = 1.2
    f3, g3 = p.fun_and_grad(x)
    want = cli.json("gradient", f, "--param", "y0=1.2", "--no-tau")
    assert f3 == want["cost"]
    assert list(g3) == [want["gradient"][n] for n in p.optimized]
    assert f3 != f1
