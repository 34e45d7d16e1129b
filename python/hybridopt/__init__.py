"""hybridopt: simulate, differentiate and optimize hybrid dynamical systems — trajectories
that jump or switch at events — with exact adjoint and direct sensitivities through events.

>>> import hybridopt
>>> p = hybridopt.Problem.from_file("problems/impact_timing.toml")
>>> g = p.gradient()              # cost, numpy gradient over p.parameter_names
>>> f, df = p.fun_and_grad(p.x0)  # over the optimized entries, for scipy (jac=True)
"""

try:
    from ._native import Event, Gradient, Problem, Simulation
except ImportError as e:  # pragma: no cover - a setup problem, not a library error
    raise ImportError(
        "hybridopt's compiled extension (hybridopt._native) was not found: install the "
        "package with `pip install ./python` from the repository, and run Python outside "
        "the python/ folder (its hybridopt/ source folder has no extension in it)"
    ) from e
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
