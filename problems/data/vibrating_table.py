"""The exact motion of a ball bouncing on a sinusoidally vibrating table, sampled as a
"measured" record for problems/vibrating_table_identify.toml and
problems/vibrating_table_two_experiments.toml. Independent of hybridopt: pure Python 3
and mpmath, no numerical integration.

The model (the same as the problem files' custom system):
    table        z(t) = A sin(ω t),  ż(t) = A ω cos(ω t)
    flight       ÿ = −g: a parabola in closed form, y(t) = y_k + v_k (t − t_k) − g (t − t_k)²/2
    impact       where the gap y − z(t) crosses zero downward
    reset        Newton restitution relative to the table: v⁺ = ż(t_e) − e (v⁻ − ż(t_e))

Each impact time is the FIRST root of gap(s) = y(s) − A sin(ω (t_k + s)) after the
previous impact. Found with a certificate, not a plain scan: |gap''| ≤ M = g + A ω², so on
[a, b] the gap is at least both Taylor lower bounds gap(a) + gap'(a) u − M u²/2 and
gap(b) − gap'(b) w − M w²/2 (u, w the distances to a and b); where both are positive on
their halves, [a, b] holds no root. Intervals that cannot be certified are halved, left
half first, until a sign change on an interval where gap' < 0 throughout (one root) is
bracketed; mpmath.findroot (Anderson's bracketing method) refines it at the working
precision, and the root is checked to lie in the bracket. An interval that stays
uncertified without a sign change down to 1e-25 s (a grazing near-root) stops the script.
Right after an impact gap(0) = 0 and gap'(0) > 0, so (0, gap'(0)/M] is root-free by the
first bound and the search starts there.

Parameters (IEEE doubles, as the problem files write them; the record is exact for those
values — mpf(float) converts them without rounding):
    both experiments   g = 9.81, e = 0.85, ω = 12.5 rad/s (2.0 Hz), v0 = 0, t ∈ [0, 14]
    experiment "a"     A = 0.13 m  (A ω²/g = 2.07), y0 = 0.2 m
                       → vibrating_table.csv, vibrating_table_events.csv
    experiment "b"     A = 0.11 m  (A ω²/g = 1.75), y0 = 0.15 m
                       → vibrating_table_b.csv, vibrating_table_b_events.csv

Measured (`python3 problems/data/vibrating_table.py`, 50 digits, checked against 60):
    "a": 25 impacts in [0, 14]; shortest flight 0.1009 s; smallest relative impact speed
         |v⁻ − ż| = 1.29 m/s. Chaotic: y0 moved by 1e-12 moves the last impacts by 0.12 s
         (float model), a growth of ~1e11 over 14 s; the same model in doubles is 2e-4 s
         off at the 25th impact.
    "b": 22 impacts; shortest flight 0.0976 s; smallest relative impact speed 0.64 m/s;
         y0 moved by 1e-12 moves the impacts by up to 7.5e-3 s.
    50 against 60 digits: the largest difference of a sample y(t_i) is 3.0e-39 ("a") and
    2.4e-41 ("b"), of an impact time 3.8e-40 and 1.3e-42: every printed digit (17
    significant) is exact.
    Away from the truth the motion changes completely: at the identification's start
    (e = 0.80, A = 0.14) "a" bounces 14 times; on a 2 % grid of e and A within ±10 %, 3 of
    121 points of "a" and 4 of 121 of "b" end chattering on the table within 14 s (float
    scan, the same model). Single shooting from there has no chance; see the problem files.

Files (CSV with a header; numbers with 17 significant digits):
    vibrating_table[_b].csv          t, y: the ball's height at t = 0, 0.01, …, 14 (100 Hz,
                                     1401 rows), noise-free. A sample time is the double
                                     nearest i/100, where y is evaluated exactly.
    vibrating_table[_b]_events.csv   k, t, y, v_before, v_after: each impact (1-based k), the
                                     height there (= z(t)) and the ball's velocity before
                                     and after the reset.

Usage:
    python3 problems/data/vibrating_table.py                  # write all four files (~10 s)
    python3 problems/data/vibrating_table.py --digits 60      # the same at 60 digits
    python3 problems/data/vibrating_table.py --noise 1e-3 --seed 7 --out /tmp/noisy_7.csv
        # a noisy replicate of experiment a (`--experiment b` for b): the exact record (read
        # from its CSV, written first if missing) plus independent Gaussian noise of standard
        # deviation SIGMA on every y, from Python's random.Random(SEED).gauss (the same
        # numbers for the same seed and Python version; ~0.4 s, so a bench can make 100
        # replicates on the fly)
"""

import argparse
import pathlib
import random
import sys

import mpmath
from mpmath import mp, mpf

HERE = pathlib.Path(__file__).resolve().parent

G = 9.81
E = 0.85
OMEGA = 12.5
V0 = 0.0
T_END = 14.0
RATE = 100  # samples per second
EXPERIMENTS = {
    "a": {"A": 0.13, "y0": 0.2, "stem": "vibrating_table"},
    "b": {"A": 0.11, "y0": 0.15, "stem": "vibrating_table_b"},
}
SCAN = mpf("0.01")  # the first grid of intervals to certify or halve (s)
GRAZE = mpf("1e-25")  # an uncertified interval this short without a sign change: grazing
SIG = 17  # significant digits printed


class Model:
    """The ball and table at the working precision; all values exact for the doubles given."""

    def __init__(self, a_amp, y0):
        self.g = mpf(G)
        self.e = mpf(E)
        self.w = mpf(OMEGA)
        self.a = mpf(a_amp)
        self.y0 = mpf(y0)
        self.v0 = mpf(V0)
        self.m = self.g + self.a * self.w**2  # bound on |gap''|

    def gap(self, tk, yk, vk, s):
        """gap(s) = y_k + v_k s − g s²/2 − A sin(ω (t_k + s)) and its derivative."""
        f = yk + vk * s - self.g * s * s / 2 - self.a * mpmath.sin(self.w * (tk + s))
        df = vk - self.g * s - self.a * self.w * mpmath.cos(self.w * (tk + s))
        return f, df


def certified(m, a, b, fa, da, fb, db):
    """True when [a, b] holds no root: both Taylor lower bounds positive on their halves
    (each bound is concave, so checking the ends of its half suffices)."""
    h = (b - a) / 2
    return (
        fa > 0
        and fb > 0
        and fa + da * h - m * h * h / 2 > 0
        and fb - db * h - m * h * h / 2 > 0
    )


def decreasing(m, a, b, da, db):
    """True when gap' < 0 on all of [a, b]: gap' ≤ min(da + M u, db + M w), whose largest
    value is (da + db + M (b − a))/2."""
    return (da + db + m * (b - a)) / 2 < 0


def first_root(model, tk, yk, vk, s_lo, s_hi):
    """The first root of the gap in [s_lo, s_hi] (None if there is none), certified."""
    point = {}

    def at(s):
        if s not in point:
            point[s] = model.gap(tk, yk, vk, s)
        return point[s]

    grid = [s_lo]
    while grid[-1] < s_hi:
        grid.append(min(grid[-1] + SCAN, s_hi))
    stack = [(grid[i], grid[i + 1]) for i in range(len(grid) - 2, -1, -1)]
    while stack:
        a, b = stack.pop()
        (fa, da), (fb, db) = at(a), at(b)
        if certified(model.m, a, b, fa, da, fb, db):
            continue
        if fa > 0 and fb <= 0 and decreasing(model.m, a, b, da, db):
            root = mpmath.findroot(
                lambda s: model.gap(tk, yk, vk, s)[0], (a, b), solver="anderson"
            )
            if not a <= root <= b:
                sys.exit(f"root {root} left its bracket [{a}, {b}]")
            return root
        if b - a < GRAZE:
            sys.exit(f"grazing near-root at t = {mpmath.nstr(tk + a, 20)}: uncertified")
        mid = (a + b) / 2
        stack.append((mid, b))
        stack.append((a, mid))
    return None


def impacts(model, t_end):
    """Every impact in [0, t_end]: (t, y, v_before, v_after), and the post-impact states."""
    tk, yk, vk = mpf(0), model.y0, model.v0
    f0, d0 = model.gap(tk, yk, vk, mpf(0))
    if f0 <= 0:
        sys.exit("the ball must start above the table")
    s_lo = mpf(0)
    out = []
    while True:
        root = first_root(model, tk, yk, vk, s_lo, t_end - tk)
        if root is None:
            return out
        te = tk + root
        ye = yk + vk * root - model.g * root * root / 2
        vm = vk - model.g * root
        zd = model.a * model.w * mpmath.cos(model.w * te)
        vp = zd - model.e * (vm - zd)
        out.append((te, ye, vm, vp))
        tk, yk, vk = te, ye, vp
        # gap(0) = 0, gap'(0) = v⁺ − ż > 0: (0, gap'(0)/M] is root-free
        s_lo = (vp - zd) / model.m


def samples(model, events, times):
    """y at each time: the parabola of the flight holding it (y is continuous at impacts)."""
    starts = [(mpf(0), model.y0, model.v0)] + [(t, y, vp) for t, y, _, vp in events]
    out, k = [], 0
    for t in times:
        while k + 1 < len(starts) and starts[k + 1][0] <= t:
            k += 1
        tk, yk, vk = starts[k]
        s = t - tk
        out.append(yk + vk * s - model.g * s * s / 2)
    return out


def sample_times():
    """The doubles nearest i/100, i = 0 … 1400, exactly (mpf of a float is exact)."""
    return [i / RATE for i in range(int(T_END * RATE) + 1)]


def num(x):
    return mpmath.nstr(x, SIG, strip_zeros=False) if x != 0 else "0"


def run(name, digits):
    """The record of one experiment at `digits` digits: (times, y samples, events)."""
    mp.dps = digits
    ex = EXPERIMENTS[name]
    model = Model(ex["A"], ex["y0"])
    events = impacts(model, mpf(T_END))
    times = sample_times()
    ys = samples(model, events, [mpf(t) for t in times])
    return times, ys, events, model


def write_record(name, times, ys, events):
    stem = EXPERIMENTS[name]["stem"]
    with open(HERE / f"{stem}.csv", "w") as f:
        f.write("t,y\n")
        for t, y in zip(times, ys):
            f.write(f"{t!r},{num(y)}\n")
    with open(HERE / f"{stem}_events.csv", "w") as f:
        f.write("k,t,y,v_before,v_after\n")
        for k, (t, y, vm, vp) in enumerate(events, 1):
            f.write(f"{k},{num(t)},{num(y)},{num(vm)},{num(vp)}\n")


def describe(name, events, model):
    flights = [events[0][0]] + [b[0] - a[0] for a, b in zip(events, events[1:])]
    rel = [
        abs(vm - model.a * model.w * mpmath.cos(model.w * t)) for t, _, vm, _ in events
    ]
    print(
        f"{name}: {len(events)} impacts, shortest flight {mpmath.nstr(min(flights), 6)} s "
        f"(first flight included), smallest |v⁻ − ż| {mpmath.nstr(min(rel), 4)} m/s"
    )


def check(name, digits, ref):
    """The largest differences against a run at `digits` + 10 digits."""
    _, ys, events, _ = ref
    _, ys2, events2, _ = run(name, digits + 10)
    if len(events2) != len(events):
        sys.exit(f"{name}: {len(events)} impacts at {digits} digits, {len(events2)} at more")
    dy = max(abs(a - b) for a, b in zip(ys, ys2))
    dt = max(abs(a[0] - b[0]) for a, b in zip(events, events2))
    print(
        f"{name}: {digits} against {digits + 10} digits: samples differ by ≤ "
        f"{mpmath.nstr(dy, 3)}, impact times by ≤ {mpmath.nstr(dt, 3)}"
    )


def noisy(name, sigma, seed, out, digits):
    """The exact record plus Gaussian noise N(0, sigma²) on every y."""
    path = HERE / f"{EXPERIMENTS[name]['stem']}.csv"
    if not path.exists():
        times, ys, events, _ = run(name, digits)
        write_record(name, times, ys, events)
    rng = random.Random(seed)
    lines = path.read_text().splitlines()
    rows = [line.split(",") for line in lines[1:]]
    with open(out, "w") as f:
        f.write("t,y\n")
        for t, y in rows:
            f.write(f"{t},{float(y) + rng.gauss(0.0, sigma)!r}\n")


def nodes(events, spacing, margin):
    """Shooting node times on the sample grid: near k·spacing, each at least `margin` s
    from every impact (a node just before an impact starts its segment with a state the
    data pin badly; see problems/vibrating_table_identify.toml)."""
    grid = sample_times()
    hits = [float(t) for t, _, _, _ in events]
    out = []
    k = 1
    while k * spacing < T_END - margin:
        ok = [t for t in grid if min(abs(t - h) for h in hits) >= margin and 0 < t < T_END]
        best = min(ok, key=lambda t: abs(t - k * spacing))
        if not out or best > out[-1]:
            out.append(best)
        k += 1
    return out


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--digits", type=int, default=50)
    ap.add_argument("--experiment", choices=sorted(EXPERIMENTS), default=None)
    ap.add_argument("--noise", type=float, help="write a noisy replicate with this σ")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--out", help="the noisy replicate's path")
    ap.add_argument("--no-check", action="store_true", help="skip the +10 digits run")
    ap.add_argument(
        "--nodes",
        type=float,
        metavar="SPACING",
        help="print shooting node times ≈ SPACING apart, away from impacts, and stop",
    )
    ap.add_argument("--margin", type=float, default=0.03, help="with --nodes (s)")
    args = ap.parse_args()
    if args.noise is not None:
        if not args.out:
            sys.exit("--noise needs --out")
        noisy(args.experiment or "a", args.noise, args.seed, args.out, args.digits)
        return
    if args.nodes is not None:
        _, _, events, _ = run(args.experiment or "a", args.digits)
        print(", ".join(f"{t!r}" for t in nodes(events, args.nodes, args.margin)))
        return
    for name in [args.experiment] if args.experiment else sorted(EXPERIMENTS):
        ref = run(name, args.digits)
        times, ys, events, model = ref
        write_record(name, times, ys, events)
        describe(name, events, model)
        if not args.no_check:
            check(name, args.digits, ref)


if __name__ == "__main__":
    main()
