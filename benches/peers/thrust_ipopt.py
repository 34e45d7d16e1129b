#!/usr/bin/env python3
"""Reference peer: the thrust-ball optimal-control problem solved with CasADi + IPOPT.

Ball with drag and a vertical thrust acceleration u(t):
    y' = v,  v' = -g - c v + u(t),   g = 9.81, c = 0.1
    impact y = 0 with v < 0:  v+ = -e v-,  e = 0.8
    y(0) = 1, v(0) = 0, horizon [0, 2.5]
u is piecewise linear on 59 uniform intervals (60 node values in [-15, 15]).
    minimise  J = int_0^2.5 u^2 dt   (exact for piecewise-linear u)
    s.t.      2nd impact at t = 1.6,  y(2.5) = 0.5   (variant "path": also y(t) <= 1.2)

Transcription: multi-phase multiple shooting over a given impact sequence (1 impact before
the one at 1.6, --after N impacts after it; default 0 = the sequence of the reference optima).
Breakpoints are the 60 control nodes plus the event times (impacts, and for "path" the apexes
v = 0 of the flights between impacts, where y <= 1.2 is imposed exactly; y <= 1.2 also holds
at every breakpoint).  Each event time is a decision variable bounded to one control interval,
so u is exactly linear on every shooting segment and the segment map is the exact solution of
the linear flow (phi-function series, no integration error).  An event time that ends on its
interval bound is moved to the neighbouring interval and the NLP re-solved (warm start); then
each free impact is tried one interval either side and the lower local optimum kept
(--intervals locks impacts to given control intervals: no moving, no search for them).  The
answer is checked by an independent RK4 simulation of u with event location (check_*, max_y).

Usage: /tmp/peer-venv/bin/python thrust_ipopt.py [--variant base|path] [--repeat N] [--after N]
                                                  [--intervals K1,37,K3|*,...]
"""
import argparse, json, math, sys, time
import casadi as ca
import numpy as np

G, C, E = 9.81, 0.1, 0.8
T_END, N_INT = 2.5, 59
H = T_END / N_INT
NODES = [k * H for k in range(N_INT + 1)]
Y0, V0, T_HIT2, Y_END, U_MAX, Y_MAX = 1.0, 0.0, 1.6, 0.5, 15.0, 1.2
NPHI = 12  # series terms: |c L| <= c h = 4.2e-3, truncation far below 1e-16


def phis(z):
    """phi_j(z) = sum_i z^i/(i+j)!, j = 1, 2, 3 (works on floats and CasADi SX)."""
    out = []
    for j in (1, 2, 3):
        acc = 1.0 / math.factorial(NPHI + j)
        for i in range(NPHI - 1, -1, -1):
            acc = acc * z + 1.0 / math.factorial(i + j)
        out.append(acc)
    return out


def seg_map(y, v, u0, du, L, exp):
    """Exact flow over a segment of length L with u(tau) = u0 + du*tau."""
    p1, p2, p3 = phis(-C * L)
    a = u0 - G
    v1 = v * exp(-C * L) + a * L * p1 + du * L * L * p2
    y1 = y + v * L * p1 + a * L * L * p2 + du * L ** 3 * p3
    return y1, v1


_SEG = []


def seg_sx(y, v, u0, du, L):
    """seg_map as one CasADi Function (built once; calls on SX arguments are inlined)."""
    if not _SEG:
        a = ca.SX.sym("a", 5)
        _SEG.append(ca.Function("seg", [a], [ca.vertcat(*seg_map(*[a[i] for i in range(5)], ca.exp))]))
    r = _SEG[0](ca.vertcat(y, v, u0, du, L))
    return r[0], r[1]


def u_lin(u, k, t):
    """u at absolute time t inside control interval k, and its slope."""
    du = (u[k + 1] - u[k]) / H
    return u[k] + du * (t - NODES[k]), du


def effort(u):
    return sum(H / 3 * (u[k] ** 2 + u[k] * u[k + 1] + u[k + 1] ** 2) for k in range(N_INT))


def breakpoints(events):
    """events: list of (kind, interval, fixed_time_or_None), in time order.
    Returns the ordered breakpoints (kind, interval, event index or None)."""
    bps, ev = [("start", 0, None)], 0
    for k in range(N_INT):
        if k > 0:
            bps.append(("node", k, None))
        while ev < len(events) and events[ev][1] == k:
            bps.append((events[ev][0], k, ev))
            ev += 1
    bps.append(("end", N_INT - 1, None))
    return bps


def bp_time(bp, tev):
    kind, k, ev = bp
    return 0.0 if kind == "start" else T_END if kind == "end" else NODES[k] if kind == "node" else tev[ev]


def build_and_solve(variant, events, u_guess, t_guess, opts, opts_sub=1):
    """Build the NLP for a fixed event/interval assignment and solve it."""
    t0 = time.perf_counter()
    bps = breakpoints(events)
    nb = len(bps)
    u = ca.SX.sym("u", N_INT + 1)
    tv = ca.SX.sym("t", len(events))
    X = ca.SX.sym("x", 2, nb)  # state just after each breakpoint (post-reset)
    tev = [tv[i] if events[i][2] is None else events[i][2] for i in range(len(events))]
    g, lbg, ubg = [X[:, 0] - ca.DM([Y0, V0])], [0, 0], [0, 0]
    for i in range(1, nb):
        kind, k, ev = bps[i]
        ta, tb = bp_time(bps[i - 1], tev), bp_time(bps[i], tev)
        kseg = k - 1 if kind == "node" else k
        u0, du = u_lin(u, kseg, ta)
        y1, v1 = seg_sx(X[0, i - 1], X[1, i - 1], u0, du, tb - ta)
        for q in range(1, opts_sub if variant == "path" else 1):  # interior path points
            g.append(seg_sx(X[0, i - 1], X[1, i - 1], u0, du, (tb - ta) * q / opts_sub)[0])
            lbg.append(-ca.inf); ubg.append(Y_MAX)
        if not (isinstance(ta, float) and isinstance(tb, float)):
            g.append(tb - ta); lbg.append(0); ubg.append(ca.inf)
        if kind == "impact":
            g += [y1, v1, X[:, i] - ca.vertcat(y1, -E * v1)]
            lbg += [0, -ca.inf, 0, 0]; ubg += [0, 0, 0, 0]
        elif kind == "apex":
            g += [v1, X[:, i] - ca.vertcat(y1, v1)]
            lbg += [0, 0, 0]; ubg += [0, 0, 0]
        else:
            g.append(X[:, i] - ca.vertcat(y1, v1)); lbg += [0, 0]; ubg += [0, 0]
    g.append(X[0, nb - 1] - Y_END); lbg.append(0); ubg.append(0)
    w = ca.vertcat(u, tv, ca.vec(X))
    ua, ub = u[:N_INT], u[1:]
    f = H / 3 * (ca.sumsqr(ua) + ca.dot(ua, ub) + ca.sumsqr(ub))
    nlp = {"x": w, "f": f, "g": ca.vertcat(*g)}
    solver = ca.nlpsol("thrust", "ipopt", nlp, opts)
    ymax = Y_MAX if variant == "path" else ca.inf
    # y >= 0 at every breakpoint except just after an impact, where y = 0 already follows
    # from the equality constraints (a bound there too is redundant: LICQ fails and IPOPT's
    # bound multipliers grow to ~1e8, which spoils its termination test)
    lbx = [-U_MAX] * (N_INT + 1) + [e[2] or NODES[e[1]] for e in events] + \
        [c for bp in bps for c in ((-ca.inf if bp[0] == "impact" else 0), -ca.inf)]
    ubx = [U_MAX] * (N_INT + 1) + [e[2] or NODES[e[1] + 1] for e in events] + [ymax, ca.inf] * nb
    # initial guess: states from forward use of the segment map with guessed u and times
    tg = [min(max(t_guess[i], lbx[N_INT + 1 + i]), ubx[N_INT + 1 + i]) for i in range(len(events))]
    tg = [e[2] if e[2] is not None else tg[i] for i, e in enumerate(events)]
    xs, (y, v) = [[Y0, V0]], (Y0, V0)
    for i in range(1, nb):
        kind, k, _ = bps[i]
        ta, tb = bp_time(bps[i - 1], tg), bp_time(bps[i], tg)
        kseg = k - 1 if kind == "node" else k
        u0, du = u_lin(u_guess, kseg, ta)
        y, v = seg_map(y, v, u0, du, max(tb - ta, 0.0), math.exp)
        if kind == "impact":
            y, v = 0.0, E * abs(v)
        xs.append([min(max(y, 0.0), 1.0), v])
    x0 = list(u_guess) + tg + [c for xy in xs for c in xy]
    t1 = time.perf_counter()
    sol = solver(x0=x0, lbx=lbx, ubx=ubx, lbg=lbg, ubg=ubg)
    t2 = time.perf_counter()
    st = solver.stats()
    wopt = np.array(sol["x"]).ravel()
    X = wopt[N_INT + 1 + len(events):].reshape(nb, 2)
    return dict(u=wopt[:N_INT + 1], t=wopt[N_INT + 1:N_INT + 1 + len(events)], J=float(sol["f"]),
                X=X, ev_y=[float(X[i, 0]) for i, bp in enumerate(bps) if bp[2] is not None],
                status=st["return_status"],
                iters=st["iter_count"], iter_count=st["iter_count"], construct=t1 - t0,
                solve=t2 - t1)


def first_free_fall_impact():
    lo, hi = 0.0, 1.0  # with u = 0 the ball falls from y0 = 1
    for _ in range(200):
        mid = 0.5 * (lo + hi)
        lo, hi = (mid, hi) if seg_map(Y0, V0, 0.0, 0.0, mid, math.exp)[0] > 0 else (lo, mid)
    return 0.5 * (lo + hi)


def settle(variant, kinds, fixed, ivl, u_guess, times, opts, sub, tot, locked=(), max_rounds=30):
    """Solve for one event/interval assignment; an event time that ends on its interval
    bound is moved to the neighbouring interval and the NLP re-solved (warm start).
    Events in `locked` (indices, from --intervals) keep their interval."""
    ivl, res = list(ivl), None
    for _ in range(max_rounds):
        events = [(kinds[i], ivl[i], fixed[i]) for i in range(len(kinds))]
        res = build_and_solve(variant, events, u_guess, times, opts, sub)
        for key in ("construct", "solve", "iters"):
            tot[key] += res[key]
        tot["nlp_solves"] += 1
        u_guess, times, moved = res["u"], list(res["t"]), False
        for i in range(len(kinds)):
            if fixed[i] is not None or i in locked:
                continue
            if times[i] - NODES[ivl[i]] < 1e-9 and ivl[i] > 0:
                ivl[i] -= 1; moved = True
            elif NODES[ivl[i] + 1] - times[i] < 1e-9 and ivl[i] < N_INT - 1:
                ivl[i] += 1; moved = True
        if not moved:
            break
    res["ivl"], res["moved"] = tuple(ivl), moved
    return res


def solve(variant, n_after, opts, sub=1, search=True, u0=None, times0=None, intervals=None):
    """Event sequence: impact, [apex], impact@1.6, ([apex], impact) * n_after.  After the
    first solution, each free impact is tried in the neighbouring control interval (warm
    start); a lower local optimum is kept (the NLP is non-convex: e.g. "path" has KKT
    points with the 1st impact in interval 10 and in interval 11).
    intervals: None, or one entry per impact: a control interval index (that impact is
    locked to it: never moved, never searched) or None (free).  Apexes are always free."""
    kinds, times = ["impact"], [first_free_fall_impact()]
    bounds = [times[0], T_HIT2] + [T_HIT2 + (T_END - T_HIT2) * (i + 1) / (n_after + 0.5)
                                   for i in range(n_after)]
    for i in range(1, len(bounds)):
        if variant == "path":
            kinds.append("apex"); times.append(0.5 * (bounds[i - 1] + bounds[i]))
        kinds.append("impact"); times.append(bounds[i])
    fixed = [T_HIT2 if (kd == "impact" and kinds[:i + 1].count("impact") == 2) else None
             for i, kd in enumerate(kinds)]
    imp = [i for i, kd in enumerate(kinds) if kd == "impact"]
    locked = set()
    if intervals is not None:
        assert len(intervals) == len(imp)
        for j, i in enumerate(imp):
            if intervals[j] is not None and fixed[i] is None:
                locked.add(i); times[i] = NODES[intervals[j]] + 0.5 * H
        for i in range(len(kinds)):  # apex guesses: midway between the impact guesses
            if kinds[i] == "apex":
                times[i] = 0.5 * (times[i - 1] + times[i + 1])
    times = list(times0) if times0 is not None else times
    ivl = [min(int(t / H), N_INT - 1) for t in times]
    u_guess = np.zeros(N_INT + 1) if u0 is None else np.array(u0)
    tot = dict(construct=0.0, solve=0.0, iters=0, nlp_solves=0)
    ok = ("Solve_Succeeded", "Solved_To_Acceptable_Level")
    best = settle(variant, kinds, fixed, ivl, u_guess, times, opts, sub, tot, locked)
    seen, improved = {best["ivl"]}, search
    while improved:
        improved = False
        for i in (i for i in imp if fixed[i] is None and i not in locked):
            for d in (-1, 1):
                trial = list(best["ivl"]); trial[i] += d
                if tuple(trial) in seen or not 0 <= trial[i] < N_INT:
                    continue
                seen.add(tuple(trial))
                tg = list(best["t"]); tg[i] = NODES[trial[i]] + 0.5 * H
                r = settle(variant, kinds, fixed, trial, best["u"], tg, opts, sub, tot, locked)
                seen.add(r["ivl"])
                if r["status"] in ok and not r["moved"] and r["J"] < best["J"] - 1e-9:
                    best, improved = r, True
    best.update(tot, solve_final=best["solve"], construct_final=best["construct"], kinds=kinds, times=[float(fixed[i] if fixed[i] is not None else best["t"][i])
                                         for i in range(len(kinds))])
    return best


def rk4_check(u, sub=400):
    """Independent forward simulation (RK4, `sub` steps per control interval, impacts located
    by bisection on the step length).  Returns impact times, y(T) and max y."""
    def f(t, x, k):
        uk = u[k] + (u[k + 1] - u[k]) * (t - NODES[k]) / H
        return np.array([x[1], -G - C * x[1] + uk])

    def step(t, x, dt, k):
        k1 = f(t, x, k); k2 = f(t + dt / 2, x + dt / 2 * k1, k)
        k3 = f(t + dt / 2, x + dt / 2 * k2, k); k4 = f(t + dt, x + dt * k3, k)
        return x + dt / 6 * (k1 + 2 * k2 + 2 * k3 + k4)

    x, impacts, ymax = np.array([Y0, V0]), [], Y0
    for k in range(N_INT):
        dt = H / sub
        for j in range(sub):
            t = NODES[k] + j * dt
            xn = step(t, x, dt, k)
            if xn[0] < 0 and xn[1] < 0:  # crossed (or touched) the ground
                lo, hi = 0.0, dt  # locate y = 0
                for _ in range(80):
                    mid = 0.5 * (lo + hi)
                    lo, hi = (mid, hi) if step(t, x, mid, k)[0] > 0 else (lo, mid)
                th = 0.5 * (lo + hi); xi = step(t, x, th, k)
                impacts.append(t + th)
                x = np.array([0.0, -E * xi[1]])
                xn = step(t + th, x, dt - th, k)
            elif x[1] > 0 >= xn[1]:  # apex inside the step: refine v = 0
                lo, hi = 0.0, dt
                for _ in range(80):
                    mid = 0.5 * (lo + hi)
                    lo, hi = (mid, hi) if step(t, x, mid, k)[1] > 0 else (lo, mid)
                ymax = max(ymax, step(t, x, 0.5 * (lo + hi), k)[0])
            x = xn
            ymax = max(ymax, x[0])
    return impacts, float(x[0]), float(ymax)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--variant", choices=["base", "path"], default="base")
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--after", type=int, default=None,
                    help="impacts in (1.6, 2.5] (default 0, or as many as --intervals lists)")
    ap.add_argument("--tol", type=float, default=1e-12, help="IPOPT tol")
    ap.add_argument("--ceiling", type=float, default=1.2, help="path: the bound on y")
    ap.add_argument("--sub", type=int, default=1, help="path: extra y<=1.2 points per segment")
    ap.add_argument("--no-search", action="store_true", help="skip the interval search")
    ap.add_argument("--intervals", default=None,
                    help="control interval of each impact, comma-separated, e.g. 11,37,53 "
                         "(interval k = [k*2.5/59, (k+1)*2.5/59]); '*' leaves an impact free. "
                         "Locked impacts are neither moved nor searched. The number of entries "
                         "sets --after if that is not given.")
    a = ap.parse_args()
    global Y_MAX
    Y_MAX = a.ceiling
    intervals = None
    if a.intervals is not None:
        intervals = [None if x.strip() in ("*", "") else int(x) for x in a.intervals.split(",")]
        if a.after is None:
            a.after = len(intervals) - 2
        k16 = int(T_HIT2 / H)
        if len(intervals) != a.after + 2:
            ap.error(f"--intervals needs {a.after + 2} entries (one per impact) for --after {a.after}")
        if intervals[1] not in (None, k16):
            ap.error(f"the impact at t = 1.6 lies in interval {k16}")
        if not all(x is None or 0 <= x < N_INT for x in intervals):
            ap.error(f"intervals are 0..{N_INT - 1}")
        if not all(x <= y for x, y in zip(intervals, intervals[1:]) if x is not None and y is not None) \
                or (intervals[0] is not None and intervals[0] > k16) \
                or any(x is not None and x < k16 for x in intervals[2:]):
            ap.error("impact intervals must be in time order around interval %d" % k16)
    if a.after is None:
        a.after = 0
    opts = {"print_time": False, "ipopt.print_level": 0, "ipopt.sb": "yes",
            "ipopt.tol": a.tol, "ipopt.max_iter": 500, "ipopt.bound_relax_factor": 0.0}
    best = None
    for _ in range(max(a.repeat, 1)):
        t0 = time.perf_counter()
        r = solve(a.variant, a.after, opts, a.sub, not a.no_search, intervals=intervals)
        r["total"] = time.perf_counter() - t0
        if best is None or r["total"] < best["total"]:
            best = r
    u = [float(x) for x in best["u"]]
    imp, y_end, max_y = rk4_check(u)
    out = {
        "variant": a.variant, "after": a.after, "events": best["kinds"], "J": effort(u), "u": u,
        "impact_times": [t for t, kd in zip(best["times"], best["kinds"]) if kd == "impact"],
        "apex_times": [t for t, kd in zip(best["times"], best["kinds"]) if kd == "apex"],
        "apex_y": [y for y, kd in zip(best["ev_y"], best["kinds"]) if kd == "apex"],
        "y_end": y_end, "max_y": max_y,
        "ipopt_iterations": best["iters"], "nlp_solves": best["nlp_solves"],
        "ipopt_iterations_final": best["iter_count"],
        "construct_s": best["construct"], "solve_s": best["solve"], "total_s": best["total"],
        "solve_s_final": best["solve_final"],
        "last_solve_s": best["solve_final"], "last_construct_s": best["construct_final"],
        "intervals_arg": a.intervals,
        "event_intervals": [int(k) for k in best["ivl"]],
        "events_at_interval_bound": [i for i, (t, k) in enumerate(zip(best["times"], best["ivl"]))
                                     if t != T_HIT2 and min(t - NODES[k], NODES[k + 1] - t) < 1e-9],
        "status": best["status"], "check_impact_times": imp,
        "transcription": "multi-phase multiple shooting, exact segment maps",
    }
    print(json.dumps(out))
    return 0 if best["status"] in ("Solve_Succeeded", "Solved_To_Acceptable_Level") else 1


if __name__ == "__main__":
    sys.exit(main())
