"""The reports from Python are the command line's JSON, from the same library structs:
`Simulation.report` is `hybridopt simulate --json`, `Gradient.report` is
`hybridopt gradient --json --method <method>` (timings and memory aside), and `optimize()`
is `summary.json`."""

import pytest

import hybridopt

# measured per run, so not equal between two runs
VOLATILE = {"timing", "memory"}


def test_simulation_report_is_the_cli_json(cli, problems, tmp_path):
    for name in ["bouncing_ball.toml", "locking_pendulum.toml", "custom_thermostat.toml"]:
        f = problems / name
        s = hybridopt.Problem.from_file(f).simulate()
        want = cli.json("simulate", f, "--out", tmp_path / name)
        assert s.report == want, name
        assert s.report["stats"]["steps"] == s.stats["steps"]
        assert [e["t"] for e in s.report["events"]] == [e.t for e in s.events]


@pytest.mark.parametrize("method,tau", [("adjoint", True), ("direct", True), ("fd", False)])
def test_gradient_report_is_the_cli_json(cli, problems, method, tau):
    for name in ["impact_timing.toml", "bouncing_ball.toml", "biped_damping_symmetric.toml"]:
        f = problems / name
        g = hybridopt.Problem.from_file(f).gradient(method=method, tau=tau)
        args = ["gradient", f, "--method", method] + (["--tau"] if tau else ["--no-tau"])
        want = cli.json(*args)
        got = {k: v for k, v in g.report.items() if k not in VOLATILE}
        assert got == {k: v for k, v in want.items() if k not in VOLATILE}, (name, method)
        assert set(g.report) == set(want)
        assert g.report["timing"]["forward_from"] == want["timing"]["forward_from"]
        assert g.report["cost"] == g.cost
        assert g.report["tau_from"] if tau else "tau_from" not in g.report
