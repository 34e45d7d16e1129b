"""The Problem's θ by name, and simulations as numpy arrays equal to the CLI's output."""

import numpy as np
import pytest

import hybridopt


def test_theta_by_name(problems):
    p = hybridopt.Problem.from_file(problems / "impact_timing.toml")
    assert p.name == "impact_timing"
    assert p.parameter_names == ["g", "e", "c", "y0", "v0"]
    assert np.array_equal(p.values, [9.81, 0.8, 0.0, 1.0, 0.5])
    assert p.optimized == ["v0"] and np.array_equal(p.x0, [0.5])
    assert p.bounds == [(0.0, None)]
    assert p.objective_names == ["cost"]
    assert p.guard_names == ["ground"]
    p["e"] = 0.7
    p.set_value("v0", 1.0)
    assert (p["e"], p["v0"]) == (0.7, 1.0)
    v = p.values
    v[0] = 9.0
    assert p["g"] == 9.81  # `values` is a copy
    p.values = v
    assert p["g"] == 9.0
    # θ given to a call overrides the values for that call only, as a dict or in full
    a = p.simulate({"v0": 2.0})
    b = p.simulate([9.0, 0.7, 0.0, 1.0, 2.0])
    assert np.array_equal(a.table, b.table)
    assert p["v0"] == 1.0


def test_controls_are_entries_of_theta(problems):
    p = hybridopt.Problem.from_file(problems / "thrust_control.toml")
    controls = [n for n in p.parameter_names if n.startswith("thrust[")]
    assert controls and set(controls) <= set(p.optimized)
    p[controls[0]] = 0.25
    assert p[controls[0]] == 0.25
    s = p.simulate()
    assert list(s.controls) == ["thrust"]
    assert s.controls["thrust"].shape == s.t.shape


@pytest.mark.parametrize("name", ["thrust_control.toml", "locking_pendulum.toml",
                                  "impact_timing.toml"])
def test_simulation_equals_cli(cli, problems, tmp_path, name):
    f = problems / name
    want = cli.json("simulate", f, "--out", tmp_path)
    table = np.loadtxt(tmp_path / "trajectory.csv", delimiter=",", skiprows=1)
    header = (tmp_path / "trajectory.csv").read_text().splitlines()[0].split(",")
    p = hybridopt.Problem.from_file(f)
    s = p.simulate()
    assert s.columns == header
    assert np.array_equal(s.table, table)
    assert np.array_equal(s.t, table[:, 0])
    assert np.array_equal(s.modes, table[:, 1].astype(int))
    nx = len(p.state_names)
    assert s.state_names == p.state_names
    assert np.array_equal(s.states, table[:, 2:2 + nx])
    assert list(s.outputs) == p.output_names
    for i, n in enumerate(p.output_names):
        assert np.array_equal(s.outputs[n], table[:, 2 + nx + i]), n
    assert [(e.t, e.guard, e.mode_before, e.mode_after) for e in s.events] == [
        (e["t"], e["guard"], e["mode_before"], e["mode_after"]) for e in want["events"]]
    assert s.costs == want["costs"] and s.cost_error is None
    assert s.stats["steps"] == want["stats"]["steps"]
    assert s.stats["events"] == len(s.events)
    for n, v in want["final"]["outputs"].items():
        assert s.outputs[n][-1] == v, n
    assert np.array_equal(s["t"], s.t)


def test_undefined_cost_is_reported_not_raised(problems):
    """As `hybridopt simulate`: a cost that needs an event that did not happen is None
    with the reason; the trajectory is still there."""
    text = (problems / "impact_timing.toml").read_text().replace("t_end = 10.0", "t_end = 0.6")
    s = hybridopt.Problem.from_toml(text).simulate()
    assert s.costs == {}
    assert "needs occurrence 3 of guard 'ground'" in s.cost_error
    assert len(s.events) == 1 and s.t[-1] == 0.6
    with pytest.raises(hybridopt.InvalidInputError, match="no column `nope`"):
        s["nope"]


def test_type_stubs_name_what_exists():
    """hybridopt/_native.pyi declares exactly the runtime classes' public attributes."""
    import ast
    from pathlib import Path

    stub = Path(hybridopt.__file__).with_name("_native.pyi")
    tree = ast.parse(stub.read_text())
    classes = {n.name: n for n in tree.body if isinstance(n, ast.ClassDef)}
    assert set(classes) == {"Event", "Simulation", "Gradient", "Problem"}
    for name, node in classes.items():
        declared = {n.target.id for n in node.body if isinstance(n, ast.AnnAssign)}
        declared |= {n.name for n in node.body if isinstance(n, ast.FunctionDef)}
        runtime = {a for a in dir(getattr(hybridopt, name)) if not a.startswith("_")}
        declared = {a for a in declared if not a.startswith("_")}
        assert declared == runtime, (name, declared ^ runtime)
