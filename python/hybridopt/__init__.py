"""hybridopt: simulate, differentiate and optimize hybrid dynamical systems — trajectories
that jump or switch at events — with exact adjoint and direct sensitivities through events.

>>> import hybridopt
>>> p = hybridopt.Problem.from_file("problems/impact_timing.toml")
>>> g = p.gradient()              # cost, numpy gradient over p.parameter_names
>>> f, df = p.fun_and_grad(p.x0)  # over the optimized entries, for scipy (jac=True)
"""

from ._native import Event, Gradient, Problem, Simulation
from .errors import (
    FileAccessError,
    GrazingError,
    HybridoptError,
    InvalidInputError,
    MissingEventError,
    ModelError,
    OptimizerError,
    ProblemFileError,
    SimulationError,
    StepSizeError,
    ZenoError,
)

__all__ = [
    "Problem",
    "Simulation",
    "Gradient",
    "Event",
    "HybridoptError",
    "ProblemFileError",
    "InvalidInputError",
    "FileAccessError",
    "SimulationError",
    "ZenoError",
    "GrazingError",
    "MissingEventError",
    "StepSizeError",
    "ModelError",
    "OptimizerError",
]
