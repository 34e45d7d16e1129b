"""Writes <name>_samples.csv beside this script for the shipped identification problems
(problems/<name>.toml): the tracked outputs of each problem's reference run, sampled on a
fixed grid, so that the problems can be refitted to data files (issue 45) instead of to a
reference run made during the fit.

    python3 problems/data/refit_samples.py [--bin PATH] [--check N] [NAME ...]

Each problem is simulated by the hybridopt command line at its `[reference]` parameters
(`hybridopt simulate FILE --param k=v …`, the file's own tolerances); its trajectory.csv
holds, for every accepted step, the step's start and 4 equally spaced points of its dense
output up to its end (POINTS_PER_STEP = 3 interior points, src/output/artifacts.rs), and
at each event two rows with the same t (before and after). Every method's dense output is a
polynomial of degree ≤ 4 in the step's normalized time (src/integrate/dense.rs), so the
quartic through a step's 5 rows reproduces it exactly for the states; a sample time is
evaluated on the step that holds it (a time exactly at an event: after the event). An
output that is a nonlinear function of the states (hysteretic f, steel σ) is interpolated
the same way, which is not exact: `--check N` measures it, simulating again to N grid times
as the end time (`final.outputs` of `simulate --json`) and reporting the largest difference.

So these data are hybridopt's own run, sampled — not independent data (for that see
vibrating_table.py). What a fixed grid would need from the command line: `simulate
--samples t0:dt:t1` (or `[simulation] output_times`) writing the outputs at given times
from the dense output, which the data cost needs internally anyway.

Measured (`--check 20`, 2026-12-06), the largest |interpolated − simulated to t| over
20 grid times (the runs that end there take other steps, so this also holds their
differences at the tolerance):
    ball_identify             100 Hz, y          251 rows   1.3e-12  (y is a state)
    five_bar_identify         100 Hz, x2, y2     201 rows   3.6e-12  (states)
    hysteretic_identify        50 Hz, f         1501 rows   2.0e-13
    steel_identify            100 Hz, sigma      401 rows   3.0e-09  (σ ≈ 400 MPa; run with
                                                                      h_max = 0.002, below)
    impact_pendulum_identify   50 Hz, q         1501 rows   1.3e-11  (a state)

impact_pendulum_measured.csv (t, mode, q, v every 10 ms, 9 decimals) is only the
[shooting] guess of impact_pendulum_identify: its cost tracks q against a reference run
made during the fit. It is not today's reference run rounded: it differs from these
samples by up to 7.2e-6 in q all over [0, 30] (2.8e-10 at t = 30), far above its rounding
(5e-10); no script for it is in the repository.
"""

import argparse
import csv
import json
import pathlib
import re
import subprocess
import sys
import tempfile
import tomllib

HERE = pathlib.Path(__file__).resolve().parent
PROBLEMS = HERE.parent
ROOT = PROBLEMS.parent
# name: (samples per second, the outputs its tracking cost compares, h_max for the run)
TARGETS = {
    "ball_identify": (100, ["y"], None),
    "five_bar_identify": (100, ["x2", "y2"], None),
    "hysteretic_identify": (50, ["f"], None),
    # σ is the law's closed form of ε(t) between reversals, with corners as sharp as
    # R0 = 18 makes them: the file's h_max = 0.02 leaves 8.7e-5 MPa between the quartic
    # through a step's rows and σ(t); 0.002 leaves 1e-8 (--check)
    "steel_identify": (100, ["sigma"], 0.002),
    "impact_pendulum_identify": (50, ["q"], None),
}
PER_STEP = 4  # rows per step after its start (POINTS_PER_STEP + 1)


def simulate(binary, problem, params, out):
    args = [binary, "simulate", str(problem), "--out", str(out), "--json"]
    for k, v in params.items():
        args += ["--param", f"{k}={v!r}"]
    run = subprocess.run(args, capture_output=True, text=True)
    if run.returncode:
        sys.exit(f"{problem}: {run.stderr.strip()}")
    return json.loads(run.stdout)


def read_steps(path, names):
    """The steps of the run, each the 5 rows (t, output values) of its interpolant.

    A step is a row followed by 4 equally spaced rows; a row that does not start such a
    group after the previous step's end starts a new segment (the rows at an event: before
    and after the reset share t, or differ by ~1e-15 where the run steps off the guard)."""
    with open(path) as f:
        rows = list(csv.reader(f))
    header = rows[0]
    # an output named as a state comes after it: take the last column of that name
    cols = [len(header) - 1 - header[::-1].index(n) for n in names]
    data = [(float(r[0]), [float(r[c]) for c in cols]) for r in rows[1:]]
    steps, i = [], 0
    while i + PER_STEP < len(data):
        group = data[i : i + PER_STEP + 1]
        h = group[-1][0] - group[0][0]
        tol = 1e-9 * h + 1e-13 * max(1.0, abs(group[0][0]))
        even = h > 0 and all(
            abs(group[j + 1][0] - group[j][0] - h / PER_STEP) <= tol for j in range(PER_STEP)
        )
        if even:
            steps.append(group)
            i += PER_STEP
        else:
            i += 1  # the next row starts a segment
    if i != len(data) - 1:
        sys.exit(f"{path}: {len(data) - 1 - i} rows left over after the last step")
    return steps


def quartic(nodes, t):
    """Lagrange interpolation through the 5 (t, values) nodes of one step."""
    out = [0.0] * len(nodes[0][1])
    for i, (ti, vi) in enumerate(nodes):
        w = 1.0
        for j, (tj, _) in enumerate(nodes):
            if j != i:
                w *= (t - tj) / (ti - tj)
        for c, v in enumerate(vi):
            out[c] += w * v
    return out


def sample(steps, times):
    """The outputs at each time (ascending) from the last step that holds it (so a time
    exactly at an event is evaluated after the event)."""
    out, k = [], 0
    for t in times:
        while k + 1 < len(steps) and steps[k + 1][0][0] <= t:
            k += 1
        step = steps[k]
        if not step[0][0] <= t <= step[-1][0]:
            sys.exit(f"t = {t} is in no step of the run")
        out.append(quartic(step, t))
    return out


def horizon(conf):
    sim = conf["simulation"]
    t_end = sim["t_end"]
    return float(sim.get("t0", 0.0)), float(t_end["value"] if isinstance(t_end, dict) else t_end)


def check(binary, name, text, params, names, grid, steps, n, events, tmp):
    """Largest difference at n grid times between the samples and runs that end there."""
    worst = 0.0
    picks = [grid[(i + 1) * len(grid) // (n + 1)] for i in range(n)]
    for t in picks:
        if any(abs(t - e) < 1e-6 for e in events):
            continue
        copy = re.sub(r"(?m)^t_end\s*=.*$", f"t_end = {t!r}", text, count=1)
        path = tmp / f"{name}_to_{t}.toml"
        path.write_text(copy)
        rep = simulate(binary, path, params, tmp / "check")
        got = sample(steps, [t])[0]
        worst = max(worst, *(abs(g - rep["final"]["outputs"][k]) for g, k in zip(got, names)))
    return worst


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("names", nargs="*", default=list(TARGETS))
    ap.add_argument("--bin", default=str(ROOT / "target" / "release" / "hybridopt"))
    ap.add_argument("--check", type=int, default=0, metavar="N")
    args = ap.parse_args()
    for name in args.names:
        rate, names, h_max = TARGETS[name]
        text = (PROBLEMS / f"{name}.toml").read_text()
        conf = tomllib.loads(text)
        # simulate needs no [shooting] (whose guess path is relative to the problem)
        text = re.sub(r"(?ms)^\[shooting\].*?(?=^\[|\Z)", "", text)
        if h_max is not None:
            text = re.sub(r"(?m)^h_max\s*=.*$", f"h_max = {h_max!r}", text, count=1)
        params = conf["reference"]["params"]
        t0, t1 = horizon(conf)
        grid = [t0 + i / rate for i in range(int(round((t1 - t0) * rate)) + 1)]
        with tempfile.TemporaryDirectory() as tmp:
            tmp = pathlib.Path(tmp)
            problem = tmp / f"{name}.toml"
            problem.write_text(text)
            rep = simulate(args.bin, problem, params, tmp / "ref")
            steps = read_steps(tmp / "ref" / "trajectory.csv", names)
            events = [e["t"] for e in rep["events"]]
            with open(HERE / f"{name}_samples.csv", "w") as f:
                f.write(",".join(["t"] + names) + "\n")
                for t, values in zip(grid, sample(steps, grid)):
                    f.write(",".join([repr(t)] + [repr(v) for v in values]) + "\n")
            line = f"{name}: {len(grid)} samples at {rate} Hz of {', '.join(names)}"
            line += f"; {len(events)} events in the reference run"
            if args.check:
                d = check(args.bin, name, text, params, names, grid, steps, args.check,
                          events, tmp)
                line += f"; largest difference against runs ending at {args.check} "
                line += f"grid times: {d:.1e}"
            print(line)


if __name__ == "__main__":
    main()
