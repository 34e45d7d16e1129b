"""Writes compass_gait_four_steps_guess.csv, the guess of problems/compass_gait_four_steps.toml:
the periodic gait of problems/compass_gait_periodic_walk.toml (its results/…/trajectory.csv),
repeated step after step over [0, 3.2] s, states and hip torque.

    python3 problems/data/compass_gait_four_steps_guess.py

Each repetition shifts t by the period and foot_x by the step length (both read from the
gait's last row, which is just before its closing heel strike). Rows are kept at every
control-grid node (every 0.05 s, where the torque's corners are) and every tenth row
between, so that the file stays small and the torque is reproduced exactly.
"""

import csv
import pathlib

HERE = pathlib.Path(__file__).resolve().parent
GAIT = HERE.parent.parent / "results" / "compass_gait_periodic_walk" / "trajectory.csv"
OUT = HERE / "compass_gait_four_steps_guess.csv"
STATES = ["theta_ns", "theta_s", "dtheta_ns", "dtheta_s", "foot_x"]
T_END = 3.2
GRID = 0.05


def main():
    with open(GAIT) as f:
        rows = list(csv.reader(f))
    header = rows[0]
    cols = [header.index(s) for s in STATES] + [header.index("hip")]
    step = header.index("step_length")
    data = [[float(r[0])] + [float(r[c]) for c in cols] for r in rows[1:]]
    period = data[-1][0]
    length = float(rows[-1][step])
    kept = [
        row
        for i, row in enumerate(data)
        if i % 10 == 0 or abs(row[0] / GRID - round(row[0] / GRID)) < 1e-9
    ]
    out = []
    k = 0
    while k * period < T_END:
        # the step's rows, its last one (just before the heel strike) included
        for row in kept[:-1] + [data[-1]]:
            shifted = list(row)
            shifted[0] += k * period
            shifted[5] += k * length
            out.append(shifted)
            if shifted[0] >= T_END:
                break
        k += 1
    with open(OUT, "w") as f:
        f.write(",".join(["t"] + STATES + ["hip"]) + "\n")
        for row in out:
            f.write(",".join(repr(round(v, 12)) for v in row) + "\n")
    print(f"{OUT}: {len(out)} rows over [0, {out[-1][0]:.3f}] s; period {period:.6f} s, step {length:.6f} m")


if __name__ == "__main__":
    main()
