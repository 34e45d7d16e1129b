"""Constrained problems from Python: the constraint rows and their Jacobian (against
central differences), scipy's SLSQP on them reaching the library's optimum, and
`Problem.optimize` running the constrained solver with the CLI's summary."""

import numpy as np
from scipy.optimize import NonlinearConstraint, minimize

import hybridopt


def test_constraint_jacobian_equals_central_differences(problems):
    p = hybridopt.Problem.from_file(problems / "thrust_constrained.toml")
    assert p.constraint_names() == ["second_impact", "final_height"]
    x = np.array([3.0 * np.sin(0.37 * (k + 5)) for k in range(len(p.optimized))])
    rows = p.constraint_rows(x)
    assert rows["names"] == ["second_impact", "final_height"]
    jac = np.array(p.constraints_jacobian(x))
    assert jac.shape == (2, len(x))
    assert np.allclose(np.array(rows["jacobian"]), jac, rtol=0, atol=0)
    h = 1e-5
    for j in range(0, len(x), 9):
        e = np.zeros_like(x)
        e[j] = h
        fd = (p.constraints(x + e) - p.constraints(x - e)) / (2 * h)
        scale = np.abs(jac).max(axis=1)
        assert np.all(np.abs(jac[:, j] - fd) <= 1e-7 * scale), (j, jac[:, j], fd)


def test_slsqp_on_the_rows_reaches_the_library_optimum(problems):
    p = hybridopt.Problem.from_file(problems / "thrust_constrained.toml")
    ours = p.optimize()
    assert ours["solver"] == "sqp" and ours["converged"], ours["termination"]
    assert ours["kkt_residual"] <= 1e-8 and ours["max_violation"] <= 1e-8
    names = [c["name"] for c in ours["constraints"]]
    assert names == ["second_impact", "final_height"]
    eq = NonlinearConstraint(p.constraints, [1.6, 0.5], [1.6, 0.5], jac=p.constraints_jacobian)
    # from a perturbation of our optimum (the problem has one local optimum per control
    # interval an impact falls in; this stays in ours)
    x_opt = np.array([ours["parameters_final"][n] for n in p.optimized])
    start = x_opt + 0.05 * np.sin(np.arange(len(x_opt)))
    r = minimize(p.fun_and_grad, start, jac=True, method="SLSQP", bounds=p.bounds,
                 constraints=[eq], options={"ftol": 1e-12, "maxiter": 500})
    print(f"SLSQP {r.fun!r} in {r.nit} iterations; ours {ours['final_cost']!r} "
          f"in {ours['iterations']}")
    assert r.success, r.message
    assert abs(r.fun - ours["final_cost"]) <= 1e-6 * ours["final_cost"]
