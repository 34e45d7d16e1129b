"""Feedback from Python: `Problem.feedback` writes the folder `hybridopt feedback` writes and
returns its summary with the gains as numpy arrays (equal to gains.csv, and the CLI's
summary), and `Problem.closed_loop` walks the stabilized gait from a push that fells the
open loop."""

import json

import numpy as np

import hybridopt


def test_feedback_gains_as_arrays_and_closed_loop(problems, cli, tmp_path):
    p = hybridopt.Problem.from_file(problems / "compass_gait_feedback.toml")
    out = tmp_path / "py"
    d = p.feedback(out, trials=4)
    assert d["design"] == "periodic_lqr" and d["clock"] == "extend"
    # the target 0.5; measured 0.2876 (the CLI's summary: the same run)
    assert d["closed_loop"]["spectral_radius"] < 0.5
    g = d["gains"]
    n, nx, nu = g["points"], len(p.state_names), 1
    assert g["t"].shape == (n,) and g["k"].shape == (n, nu, nx)
    assert g["x_ref"].shape == (n, nx) and g["u_nom"].shape == (n, nu)
    assert np.abs(g["k"]).max() == g["max_abs"]
    on_disk = json.loads((out / "summary.json").read_text())
    assert on_disk["closed_loop"] == d["closed_loop"]
    r = cli.run("feedback", problems / "compass_gait_feedback.toml", "--trials", "4",
                "--no-animation", "--json", "--out", tmp_path / "cli")
    assert r.returncode == 0, r.stderr
    c = json.loads(r.stdout)
    assert c["closed_loop"] == d["closed_loop"] and c["robustness"] == d["robustness"]
    # the robustness trial 1's push (θ̇_ns +0.054, θ̇_s −0.065): open loop falls within
    # two steps, the closed loop walks (measured: 2 steps open; 6 of 6 closed in the CLI)
    theta = p.optimize()["parameters_final"]
    push = [0.0, 0.0, 0.053915136362998106, -0.06541641782760588, 0.0]
    closed = p.closed_loop(push, steps=10, theta=theta)
    opened = p.closed_loop(push, steps=10, theta=theta, gains=False)
    assert closed["walked"] and closed["x_plus"].shape == (10, nx + 1)
    assert not opened["walked"] and opened["why"]
    # the distance from the orbit after 10 strikes (angles and rates): measured 1e-5 or
    # less; bound far above, far below the push
    x0 = np.array(g["x_ref"][0])
    assert np.linalg.norm(closed["x_plus"][-1][:4] - x0[:4]) < 1e-3


def test_time_varying_design_closed_loop_along_the_run(problems, tmp_path):
    """A problem without a period (the thrust ball's three impacts): the time-varying
    design, its closed loop along the run against the file's targets, and one pushed run
    open against closed loop."""
    p = hybridopt.Problem.from_file(problems / "thrust_feedback.toml")
    d = p.feedback(tmp_path / "tv", trials=4)
    assert d["design"] == "tvlqr" and d["clock"] == "extend"
    t = d["tracking"]
    assert t["trials"] == 4 and t["targets"] == ["y(t_end) = 0.5", "t(ground #2) = 1.6"]
    # the closed loop reaches the targets from every start (the CLI's 100 trials: 100)
    assert t["reached_closed"] == 4
    # ∂x(t_f)/∂x(t_0) through the saltations: measured 8.0 open, 6.4e-5 closed
    assert t["transition_norm_closed"] < 1e-3 < 1.0 < t["transition_norm_open"]
    g = d["gains"]
    assert g["k"].shape == (g["points"], 1, 2)
    theta = d["nominal"]["parameters"]
    push = [0.1, 0.0]
    closed = p.closed_loop(push, theta=theta)
    opened = p.closed_loop(push, theta=theta, gains=False)
    # three impacts either way; the closed loop ends on the targets (errors measured
    # −1.5e-3 in y, −4.9e-4 s: the optimum's own), the open loop misses them (measured
    # −0.105 in y, +0.047 s)
    assert len(closed["t"]) == 3 and closed["x_plus"].shape == (3, 2 + 2)
    assert closed["walked"] and closed["reached"] and not opened["reached"]
    assert abs(closed["errors"][0]) < 0.01 and abs(opened["errors"][0]) > 0.01
    assert closed["x_final"].shape == (2,) and closed["t_final"] == 2.5
