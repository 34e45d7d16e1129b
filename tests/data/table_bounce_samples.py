"""Writes table_bounce_samples.csv: the truth run of table_bounce.toml (e = 0.85,
A = 0.015) sampled at 100 Hz, exactly: between impacts the flight is a parabola, so each
sample is the closed-form flight from the last row of the run's trajectory.csv at or
before its time (a time written twice there is an impact: the second row is after it).

    hybridopt simulate truth.toml   # table_bounce.toml with e, A at the truth and a cost
    python3 table_bounce_samples.py results/simulate/table_bounce/trajectory.csv table_bounce_samples.csv
"""
import csv
import sys

G = 9.81
rows = [list(map(float, r[:4])) for r in list(csv.reader(open(sys.argv[1])))[1:]]
with open(sys.argv[2], "w") as out:
    out.write("t,y,v\n")
    j = 0
    for k in range(1401):
        t = k / 100.0
        while j + 1 < len(rows) and rows[j + 1][0] <= t:
            j += 1
        tr, _, y, v = rows[j]
        h = t - tr
        out.write(f"{t!r},{y + v * h - 0.5 * G * h * h!r},{v - G * h!r}\n")
