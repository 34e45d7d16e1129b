"""A data fit from Python: the residuals and their exact Jacobian (against central
differences), scipy's least_squares on them, and the optimizer's statistics in the
summary dict."""

import pathlib

import numpy as np
import pytest
from scipy.optimize import least_squares

import hybridopt

ROOT = pathlib.Path(__file__).resolve().parents[2]
SHORT = ROOT / "problems" / "vibrating_table_short.toml"


def test_residual_jacobian_against_central_differences():
    p = hybridopt.Problem.from_file(str(SHORT))
    x = np.array(p.x0, dtype=float)
    r, j = p.residuals(x)
    assert j.shape == (r.size, x.size)
    for k in range(x.size):
        h = 1e-6 * abs(x[k])
        xp, xm = x.copy(), x.copy()
        xp[k] += h
        xm[k] -= h
        fd = (p.residuals(xp, jacobian=False)[0] - p.residuals(xm, jacobian=False)[0]) / (2 * h)
        # measured 2.9e-10 (e), 8.0e-10 (A) of the column's largest entry
        assert np.max(np.abs(fd - j[:, k])) <= 2e-8 * np.max(np.abs(j[:, k]))


def test_scipy_least_squares_and_the_optimizer_agree_on_the_truth():
    p = hybridopt.Problem.from_file(str(SHORT))
    fit = least_squares(lambda x: p.residuals(x, jacobian=False)[0], p.x0,
                        jac=lambda x: p.residuals(x)[1], method="trf", xtol=1e-14)
    # the record was made at e = 0.85, A = 0.13 (problems/data/vibrating_table.py)
    assert np.allclose(fit.x, [0.85, 0.13], rtol=1e-9)
    s = p.optimize()
    assert s["solver"] == "gauss_newton" and s["converged"]
    st = s["least_squares"]["statistics"]
    names = [q["name"] for q in st["parameters"]]
    assert names == ["e", "A"]
    for q, truth in zip(st["parameters"], [0.85, 0.13]):
        assert abs(q["estimate"] - truth) <= 1e-12 * truth
    assert st["degrees_of_freedom"] == st["samples"] - 2
