"""Notebook-style example: the five-bar's spring stiffnesses by scipy's L-BFGS-B.

    python python/examples/five_bar_stiffness.py [problems/five_bar_stiffness.toml] [out.png]

Choose k1, k2 so that point 2's third impact on the ground comes at t = 1.42 s while it
strikes softly (problems/five_bar_stiffness.toml). hybridopt gives the cost and its exact
adjoint gradient through the impacts; scipy does the rest. The library's own optimizer
(`Problem.optimize`, the `hybridopt optimize` command) runs for comparison. With matplotlib
installed, the trajectory of point 2 before and after is plotted with the impacts marked.
"""

import sys
import time
from pathlib import Path

import numpy as np
from scipy.optimize import minimize

import hybridopt

# %% Load the problem
here = Path(__file__).resolve().parents[2]
path = Path(sys.argv[1]) if len(sys.argv) > 1 else here / "problems" / "five_bar_stiffness.toml"
problem = hybridopt.Problem.from_file(path)
print(problem)
print("optimized:", problem.optimized, "from", problem.x0, "bounds", problem.bounds)

# %% The cost and its gradient over the optimized entries, at the start
cost, grad = problem.fun_and_grad(problem.x0)
print(f"start: cost {cost:.6e}, gradient {grad}")

# %% scipy's L-BFGS-B with the exact gradient (jac=True: fun_and_grad returns both)
history = [cost]  # the cost at the start, then after each iteration
start = time.perf_counter()
result = minimize(
    problem.fun_and_grad,
    problem.x0,
    jac=True,
    method="L-BFGS-B",
    bounds=problem.bounds,
    callback=lambda xk: history.append(problem.fun_and_grad(xk)[0]),
    options={"ftol": 1e-15, "gtol": 1e-10},
)
elapsed = time.perf_counter() - start
print(f"scipy L-BFGS-B: {result.message}; {result.nit} iterations, {result.nfev} evaluations, "
      f"{elapsed:.2f} s")
print(f"  cost {cost:.6e} -> {result.fun:.6e} at {dict(zip(problem.optimized, result.x.tolist()))}")

# %% The library's optimizer from the same start, for comparison (the CLI's summary.json)
summary = problem.optimize()
print(f"hybridopt optimize: {summary['outcome']}, {summary['iterations']} iterations, "
      f"cost {summary['final_cost']:.6e} at "
      f"{ {n: summary['parameters_final'][n] for n in summary['optimized']} }")

# %% The events at the optimum, with τ = dt_e/dθ
best = {n: float(v) for n, v in zip(problem.optimized, result.x)}
g = problem.gradient(theta=best, tau=True)
names = problem.parameter_names
for e in g.events:
    tau = ", ".join(f"{n}: {e.tau[names.index(n)]:+.3e}" for n in problem.optimized)
    print(f"  impact t = {e.t:.6f} ({e.guard})  dt/dk = {{{tau}}}")

# %% Plot point 2's height before and after, if matplotlib is there
try:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
except ImportError:
    print("matplotlib is not installed: no plot")
    sys.exit(0)

before, after = problem.simulate(), problem.simulate(best)
fig, (ax1, ax2) = plt.subplots(2, 1, figsize=(8, 7))
for sim, label, style in [(before, "initial", "--"), (after, "scipy L-BFGS-B", "-")]:
    ax1.plot(sim.t, sim.outputs["y2"], style, label=label)
for e in after.events:
    ax1.axvline(e.t, color="grey", lw=0.5)
ax1.axvline(1.42, color="red", lw=0.8, label="target of the 3rd impact")
ax1.set_xlabel("t [s]")
ax1.set_ylabel("y2 [m]")
ax1.legend()
ax2.semilogy(np.arange(len(history)), history, "o-")
ax2.set_xlabel("iteration")
ax2.set_ylabel("cost")
fig.tight_layout()
out = Path(sys.argv[2]) if len(sys.argv) > 2 else Path("five_bar_stiffness_scipy.png")
fig.savefig(out, dpi=100)
print(f"wrote {out}")
