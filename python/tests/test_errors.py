"""Every exception class is raised by a bad input, with the command line's message."""

import re

import pytest

import hybridopt
from hybridopt import errors

BALL = """
[system]
kind = "bouncing_ball"
[simulation]
t_end = {t_end}
{simulation}
[parameters]
g  = {{ value = {g} }}
e  = {{ value = {e} }}
c  = {{ value = 0.0 }}
y0 = {{ value = 1.0 }}
v0 = {{ value = 0.0, optimize = true }}
[[cost]]
kind = "event_time"
guard = "ground"
occurrence = {occurrence}
"""


def ball(t_end=3.0, simulation="", g=9.81, e=0.8, occurrence=1):
    return BALL.format(t_end=t_end, simulation=simulation, g=g, e=e, occurrence=occurrence)


# (class, kind, problem text, the call that fails, the CLI command that fails the same way)
CASES = [
    (hybridopt.ZenoError, "zeno", ball(t_end=10.0, simulation="max_events = 3"), "simulate"),
    (hybridopt.ZenoError, "sticking", ball(e=0.0), "simulate"),
    (hybridopt.GrazingError, "grazing", ball(simulation="grazing_tol = 100.0"), "simulate"),
    (hybridopt.MissingEventError, "missing_event", ball(t_end=1.0, occurrence=5), "gradient"),
    (hybridopt.StepSizeError, "step_size_underflow",
     ball(simulation="rtol = 1e-300\natol = 1e-300"), "simulate"),
]


@pytest.mark.parametrize("cls,kind,text,call", CASES, ids=[c[1] for c in CASES])
def test_simulation_errors(cli, tmp_path, cls, kind, text, call):
    f = tmp_path / "bad.toml"
    f.write_text(text)
    p = hybridopt.Problem.from_file(f)
    with pytest.raises(cls) as info:
        getattr(p, call)()
    e = info.value
    assert e.kind == kind
    assert isinstance(e, hybridopt.SimulationError) and isinstance(e, hybridopt.HybridoptError)
    out = ["--out", tmp_path / "out"] if call == "simulate" else []
    assert str(e) == cli.error(call, f, *out)
    assert not (tmp_path / "out").exists()


def raised(cli, cls, kind, f, call, *cli_args):
    """The exception of class `cls` and `kind` that `call` on the problem file `f` raises,
    after checking that its message is the command line's."""
    with pytest.raises(cls) as info:
        getattr(hybridopt.Problem.from_file(f), call)()
    assert info.value.kind == kind
    assert str(info.value) == cli.error(call, f, *cli_args)
    return info.value


def test_model_error(cli, problems, tmp_path):
    """A locking pendulum without mass: the index-1 saddle-point matrix is singular."""
    text = (problems / "locking_pendulum.toml").read_text()
    text = text.replace("m1 = { value = 1.0 }", "m1 = { value = 0.0 }")
    text = text.replace("m2 = { value = 1.0 }", "m2 = { value = 0.0 }")
    f = tmp_path / "massless.toml"
    f.write_text(text)
    e = raised(cli, hybridopt.ModelError, "model", f, "simulate", "--out", tmp_path / "out")
    assert "singular linear system" in str(e)


def test_simultaneous_error(cli, problems, tmp_path):
    """An event-time cost on a foot of the biped's symmetric touchdown (both feet at one
    instant): the gradient's nonsmooth analysis does not take it, and says so by kind."""
    text = (problems / "biped_damping_symmetric.toml").read_text()
    text += '\n[[cost]]\nkind = "event_time"\nguard = "touch2"\noccurrence = 1\n'
    f = tmp_path / "touchdown_time.toml"
    f.write_text(text)
    e = raised(cli, hybridopt.InvalidInputError, "simultaneous_event_cost", f, "gradient")
    assert "part of a simultaneous event" in str(e)


def test_problem_file_error(cli, tmp_path):
    text = ball().replace("[simulation]", "[simulation]\nrtoll = 1e-6")
    f = tmp_path / "typo.toml"
    f.write_text(text)
    with pytest.raises(hybridopt.ProblemFileError) as info:
        hybridopt.Problem.from_file(f)
    assert "rtoll" in str(info.value) and isinstance(info.value, ValueError)
    assert str(info.value) == cli.error("simulate", f, "--out", tmp_path / "out")
    # from text: the name stands for the file
    with pytest.raises(hybridopt.ProblemFileError, match=r"(?s)^mine\.toml: .*unknown field `rtoll`"):
        hybridopt.Problem.from_toml(text, name="mine.toml")


def test_file_access_error(cli, tmp_path):
    f = tmp_path / "missing.toml"
    with pytest.raises(hybridopt.FileAccessError) as info:
        hybridopt.Problem.from_file(f)
    assert isinstance(info.value, OSError) and info.value.kind == "io"
    assert str(info.value) == cli.error("simulate", f)


def test_invalid_input_error(cli, problems):
    f = problems / "impact_timing.toml"
    p = hybridopt.Problem.from_file(f)
    with pytest.raises(hybridopt.InvalidInputError, match="outside the bounds") as info:
        p.set_value("v0", -1.0)
    assert str(info.value) == cli.error("simulate", f, "--param", "v0=-1")
    assert isinstance(info.value, ValueError)
    with pytest.raises(hybridopt.InvalidInputError, match="valid: g, e, c, y0, v0"):
        p["gg"] = 1.0
    with pytest.raises(hybridopt.InvalidInputError, match="valid methods are adjoint"):
        p.gradient(method="backprop")
    with pytest.raises(hybridopt.InvalidInputError, match="theta has 2 entries"):
        p.simulate([1.0, 2.0])
    with pytest.raises(hybridopt.InvalidInputError, match="x has 2 entries"):
        p.fun_and_grad([1.0, 2.0])
    with pytest.raises(hybridopt.InvalidInputError, match="values has 1 entries"):
        p.values = [1.0]
    assert p["v0"] == 0.5


def test_optimizer_error(cli, problems, tmp_path):
    """Target 20 s for the 3rd impact in a 10 s horizon: every line search ends at the
    domain's edge, and the optimizer gives up naming the last domain error."""
    text = (problems / "impact_timing.toml").read_text().replace("target = 2.0", "target = 20.0")
    f = tmp_path / "unreachable.toml"
    f.write_text(text)
    with pytest.raises(hybridopt.OptimizerError) as info:
        hybridopt.Problem.from_file(f).optimize(out=str(tmp_path / "py"))
    assert info.value.kind == "restarts_exhausted"
    assert "a cost term or constraint needs occurrence 3 of guard 'ground'" in str(info.value)
    assert str(info.value) == cli.error("optimize", f, "--out", tmp_path / "cli", "--quiet")
    assert not (tmp_path / "py").exists() and not (tmp_path / "cli").exists()


def test_every_class_is_tested():
    tested = {c[0] for c in CASES} | {
        hybridopt.ModelError, hybridopt.ProblemFileError, hybridopt.FileAccessError,
        hybridopt.InvalidInputError, hybridopt.OptimizerError,
    }
    leaves = {getattr(errors, n) for n in errors.__all__} - {
        hybridopt.HybridoptError, hybridopt.SimulationError}
    assert leaves == tested


def test_ilqr_unsupported(cli, problems, tmp_path):
    """`solver = "ddp"` on a `[shooting]` problem without a periodic closing (its nodes from
    a guess table): InvalidInputError, kind ilqr_unsupported, the command line's message."""
    text = (problems / "compass_gait_four_steps.toml").read_text()
    # the file's guess table, beside it as the file names it
    (tmp_path / "data").mkdir()
    guess = "compass_gait_four_steps_guess.csv"
    (tmp_path / "data" / guess).write_text((problems / "data" / guess).read_text())
    f = tmp_path / "ddp.toml"
    f.write_text(text.replace("[optimizer]\n", '[optimizer]\nsolver = "ddp"\n', 1))
    p = hybridopt.Problem.from_file(f)
    with pytest.raises(hybridopt.InvalidInputError) as info:
        p.optimize()
    assert info.value.kind == "ilqr_unsupported"
    assert "a [shooting] table" in str(info.value)
    assert str(info.value) == cli.error("optimize", f, "--out", tmp_path / "out")


ONE_STATE = """
[system]
kind = "custom"
states = ["x"]
parameters = ["a"]
initial = {{ x = "{initial}" }}
outputs = [ {{ name = "x", expr = "x" }} ]
[[system.modes]]
name = "climb"
flow = {{ x = "{flow}" }}
[simulation]
t_end = 2.0
{simulation}
[parameters]
a = {{ value = {a} }}
[[cost]]
kind = "terminal"
output = "x"
"""


def one_state(flow="1", initial="0", a=1.0, simulation=""):
    return ONE_STATE.format(flow=flow, initial=initial, a=a, simulation=simulation)


# the simulation's failures that have no class of their own: SimulationError by kind
SIMULATION_KINDS = [
    # x(0) = sqrt(−1)
    ("non_finite", one_state(initial="sqrt(a)", a=-1.0), "simulate"),
    # ẋ = 1/(1 − x) reaches x = 1 with infinite slope at t = 1/2: Newton fails at every step
    ("newton_failure", one_state(flow="1/(1 - x)", simulation='method = "radau5"'), "simulate"),
    # a ball without gravity over 10⁴ s in steps of at most 10⁻³: 10⁷ steps, the budget 10⁶
    ("too_many_steps", ball(t_end=1e4, simulation="h_max = 1e-3", g=0.0), "simulate"),
]


@pytest.mark.parametrize("kind,text,call", SIMULATION_KINDS, ids=[c[0] for c in SIMULATION_KINDS])
def test_simulation_kinds(cli, tmp_path, kind, text, call):
    f = tmp_path / "bad.toml"
    f.write_text(text)
    e = raised(cli, hybridopt.SimulationError, kind, f, call, "--out", tmp_path / "out")
    assert type(e) is hybridopt.SimulationError
    assert not (tmp_path / "out").exists()


def test_shooting_kinds(cli, problems, tmp_path):
    """Multiple shooting's errors by class and kind, with the command line's message: node
    times out of order, a guess table that does not reach a node, a run that ends at an
    event (`stop_after`). (A free final time's own errors, kind `free_time`, and a guess
    table without a state's column are met by the file's checks first: ProblemFileError
    naming the key.)"""
    def write(name, text):
        f = tmp_path / f"{name}.toml"
        f.write_text(text)
        return f

    out = ("--out", tmp_path / "out")
    ball = (problems / "bouncing_ball.toml").read_text()
    f = write("unsorted", ball + "\n[shooting]\nnodes = [1.0, 0.5]\n")
    e = raised(cli, hybridopt.InvalidInputError, "shooting_nodes", f, "optimize", *out)
    assert "node times must increase strictly inside (0, 3)" in str(e)
    (tmp_path / "short.csv").write_text("t,y,v\n0,1,0\n0.5,0,2\n")
    f = write("short", ball + '\n[shooting]\nnodes = [1.0]\nguess = "short.csv"\n')
    e = raised(cli, hybridopt.ProblemFileError, "shooting_guess", f, "optimize", *out)
    assert "outside the table's span [0, 0.5]" in str(e)
    # impact_timing ends its run at the third impact (`stop_after`)
    timing = (problems / "impact_timing.toml").read_text()
    f = write("stops", timing + "\n[shooting]\nsegments = 2\n")
    e = raised(cli, hybridopt.InvalidInputError, "shooting_unsupported", f, "optimize", *out)
    assert "`stop_after` is not available with multiple shooting" in str(e)
    assert not (tmp_path / "out").exists()


def test_optimizer_kind(cli, tmp_path):
    """A cost that overflows at the start (a prior (a − 0)² at a = 1e200): the optimizer
    refuses a non-finite cost, kind `optimizer`, and writes nothing."""
    text = one_state().replace("a = { value = 1.0 }", "a = { value = 1e200, optimize = true }")
    # the prior alone as the cost
    text = text.replace('kind = "terminal"\noutput = "x"\n', 'kind = "parameter_squared"\nparam = "a"\ntarget = 0.0\n')
    f = tmp_path / "overflow.toml"
    f.write_text(text)
    with pytest.raises(hybridopt.OptimizerError) as info:
        hybridopt.Problem.from_file(f).optimize(out=str(tmp_path / "py"))
    assert info.value.kind == "optimizer"
    assert "non-finite cost or gradient at θ = [1e200]" in str(info.value)
    assert str(info.value) == cli.error("optimize", f, "--out", tmp_path / "cli", "--quiet")
    assert not (tmp_path / "py").exists() and not (tmp_path / "cli").exists()


def test_plot_kind(cli, tmp_path):
    """An x–y loop of an output whose name is 300 characters: its figure's file name
    (`loop_<name>_<name>.png`) is longer than the file system allows, so the plot fails
    after the results folder was staged: FileAccessError, kind `plot`, naming the figure,
    and nothing left behind. The message names the staging folder, which carries the
    process id: it equals the command line's with that folder's name set aside."""
    long = "o" * 300
    text = one_state(a=0.5).replace('name = "x", expr = "x"', f'name = "{long}", expr = "x"')
    text = text.replace('output = "x"', f'output = "{long}"')
    text = text.replace("a = { value = 0.5 }", "a = { value = 0.5, optimize = true, lower = 0.0, upper = 1.0 }")
    text += f'[plot]\noutputs = ["{long}"]\nloops = [["{long}", "{long}"]]\n'
    f = tmp_path / "long.toml"
    f.write_text(text)
    with pytest.raises(hybridopt.FileAccessError) as info:
        hybridopt.Problem.from_file(f).optimize(out=str(tmp_path / "py"))
    e = info.value
    assert e.kind == "plot"
    assert str(e).startswith("plotting ") and f"loop_{long}_{long}.png" in str(e), str(e)
    cli_msg = cli.error("optimize", f, "--out", tmp_path / "cli", "--quiet")
    staging = re.compile(r"\.(py|cli)\.staging-\d+-\d+")
    assert staging.sub("STAGING", str(e)) == staging.sub("STAGING", cli_msg)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["long.toml"]


SWITCHED = """
[system]
kind = "switched_linear"
[simulation]
t_end = 2.0
rtol = 1e-10
atol = 1e-10
[parameters]
x2_0 = { value = 0.5, optimize = true, lower = -3.0, upper = 3.0 }
[[cost]]
kind = "terminal_squared"
output = "x1"
target = 0.3
"""


def test_shooting_mode_mismatch_kind(cli, tmp_path):
    """Multiple shooting from a guess table that claims the mode `left` on every row: the
    run switches to `right` at t = 0.66, before node 1 (t = 1), so the converged point's
    first segment ends in another mode than the node's: OptimizerError, kind
    `shooting_mode_mismatch`, naming the node and both modes."""
    single = tmp_path / "switched.toml"
    single.write_text(SWITCHED)
    run = hybridopt.Problem.from_file(single).simulate()
    events = [(e.guard, e.t) for e in run.events]
    assert events[0][0] == "to_right" and events[0][1] < 1.0, events
    cli.run("simulate", single, "--out", tmp_path / "sim")
    rows = (tmp_path / "sim" / "trajectory.csv").read_text().splitlines()
    assert rows[0].startswith("t,mode,x1,x2"), rows[0]
    table = ["t,x1,x2,mode"] + [
        ",".join(r.split(",")[:1] + r.split(",")[2:4] + ["left"]) for r in rows[1:]
    ]
    (tmp_path / "left.csv").write_text("\n".join(table) + "\n")
    f = tmp_path / "guessed.toml"
    f.write_text(SWITCHED + '\n[shooting]\nsegments = 2\nguess = "left.csv"\n')
    e = raised(cli, hybridopt.OptimizerError, "shooting_mode_mismatch", f, "optimize",
               "--out", tmp_path / "out")
    assert "node 1 at t = 1: the segment before it ends in mode 'right', but the node is " \
        "in mode 'left' (taken from the initial guess)" in str(e)
    assert not (tmp_path / "out").exists()


def test_simultaneous_diverged_kind(cli, tmp_path):
    """The gradient's nonsmooth analysis (a simultaneous group at t = 1) whose sensitivity
    pass, stepping finely for dz/da = ∫ sin(1000 t) dt, meets a guard bump 2·10⁻³ wide that
    the plain run's six steps step over (tests/variant_errors.rs has the three
    divergences): SimulationError, kind `simultaneous_diverged`."""
    text = """
[system]
kind = "custom"
states = ["x", "y", "z"]
parameters = ["a", "w"]
initial = { x = "-1", y = "-1", z = "0" }
outputs = [ { name = "z", expr = "z" } ]
[[system.modes]]
name = "m"
flow = { x = "1", y = "1", z = "(a - 1) * sin(w * t)" }
guards = [
  { name = "gx", expr = "x", direction = "rising" },
  { name = "gy", expr = "y", direction = "rising" },
  { name = "bump", expr = "1e-6 - (t - 1.537) * (t - 1.537)", direction = "rising" },
]
[simulation]
t_end = 2.0
[parameters]
a = { value = 1.0, optimize = true }
w = { value = 1000.0 }
[[cost]]
kind = "terminal"
output = "z"
"""
    f = tmp_path / "diverge.toml"
    f.write_text(text)
    e = raised(cli, hybridopt.SimulationError, "simultaneous_diverged", f, "gradient")
    assert "met an event of guard 'bump'" in str(e) and "beyond the 2 events" in str(e)
