"""The oscillator chain of `benches/scaling.rs` with the peers of the engine-at-scale
benchmark: scipy's Radau (dense or sparse Jacobian), the impacts handled by restarting at a
terminal event with the reset applied; and SUNDIALS CVODES (BDF, a sparse direct solver)
through CasADi on the smooth run (no stop, so no impacts).

The chain (N masses, N ≥ 2): x_i' = v_i,
v_i' = −k0 x_i − k (2 x_i − x_{i−1} − x_{i+1}) − c v_i (x_{−1} = 0, the last mass has one
neighbour), the last mass starts with v = u0 and strikes a stop at x_{N−1} = d (rising),
v⁺ = −e v⁻. k = 50, c = 0.5, k0 = 10, d = 0.05, e = 0.8, u0 = 1, t in [0, 5],
rtol = atol = 1e-8 — the values the Rust generator writes.

usage: chain_stiff.py N {radau-dense,radau-sparse,cvodes} [ROUNDS] [D]
(D: the stop's position, 0.05 by default; 0.001 gives the 1,024-state chain 7 impacts)
prints one JSON object: {"seconds": median solve time, "x_last": x_{N−1}(5), ...}
"""

import json
import sys
import time

import numpy as np

K, C, K0, D, E, U0, T_END, TOL = 50.0, 0.5, 10.0, 0.05, 0.8, 1.0, 5.0, 1e-8


def matrices(n):
    """The chain's linear flow y' = A y (y = [x; v]) as a dense and a sparse matrix."""
    import scipy.sparse as sp

    lap = np.zeros((n, n))
    for i in range(n):
        lap[i, i] = -K0 - (2 * K if i < n - 1 else K)
        if i > 0:
            lap[i, i - 1] = K
        if i < n - 1:
            lap[i, i + 1] = K
    a = np.zeros((2 * n, 2 * n))
    a[:n, n:] = np.eye(n)
    a[n:, :n] = lap
    a[n:, n:] = -C * np.eye(n)
    return a, sp.csr_matrix(a)


def scipy_radau(n, sparse, d=D):
    from scipy.integrate import solve_ivp

    a, a_sp = matrices(n)
    jac = a_sp if sparse else a
    op = a_sp if sparse else a

    def f(_t, y):
        return op @ y

    def stop(_t, y):
        return y[n - 1] - d

    stop.terminal = True
    stop.direction = 1.0
    y = np.zeros(2 * n)
    y[2 * n - 1] = U0
    t, events, nlu, steps = 0.0, 0, 0, 0
    while t < T_END:
        sol = solve_ivp(f, (t, T_END), y, method="Radau", jac=jac, events=stop,
                        rtol=TOL, atol=TOL)
        nlu += sol.nlu
        steps += len(sol.t) - 1
        y = sol.y[:, -1].copy()
        t = sol.t[-1]
        if sol.status == 1:
            events += 1
            y[2 * n - 1] = -E * y[2 * n - 1]
            # step off the surface so the restart does not find the same root
            if t >= T_END:
                break
    return {"x_last": float(y[n - 1]), "events": events, "nlu": int(nlu), "steps": steps}


def cvodes(n):
    import casadi as ca

    a, _ = matrices(n)
    x = ca.SX.sym("x", 2 * n)
    ode = ca.mtimes(ca.sparsify(ca.DM(a)), x)
    opts = {"abstol": TOL, "reltol": TOL, "linear_solver": "csparse",
            "newton_scheme": "direct", "max_num_steps": 100000}
    integ = ca.integrator("F", "cvodes", {"x": x, "ode": ode}, 0.0, T_END, opts)
    y0 = np.zeros(2 * n)
    y0[2 * n - 1] = U0
    out = integ(x0=y0)
    y = np.array(out["xf"]).ravel()
    return {"x_last": float(y[n - 1]), "events": 0}, lambda: integ(x0=y0)


def main():
    n = int(sys.argv[1])
    which = sys.argv[2]
    rounds = int(sys.argv[3]) if len(sys.argv) > 3 else 3
    d = float(sys.argv[4]) if len(sys.argv) > 4 else D
    times = []
    if which == "cvodes":
        info, run = cvodes(n)
        for _ in range(rounds):
            t0 = time.perf_counter()
            run()
            times.append(time.perf_counter() - t0)
    else:
        sparse = which == "radau-sparse"
        for _ in range(rounds):
            t0 = time.perf_counter()
            info = scipy_radau(n, sparse, d)
            times.append(time.perf_counter() - t0)
    times.sort()
    info["seconds"] = times[len(times) // 2]
    info["n_states"] = 2 * n
    print(json.dumps(info))


if __name__ == "__main__":
    main()
