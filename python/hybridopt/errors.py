"""The exceptions of hybridopt.

Every failure of the library raises a subclass of :class:`HybridoptError` whose message is
the one the command line prints after ``error:``. The attribute ``kind`` names the exact
cause (for example ``"sticking"`` for a :class:`ZenoError` raised by a state that sticks to
a guard surface, ``"zeno"`` for one raised by too many events)::

    HybridoptError
    ├── ProblemFileError   (also ValueError)  a problem file or text that does not validate
    ├── InvalidInputError  (also ValueError)  a bad argument: name, method, length, bound
    ├── FileAccessError    (also OSError)     a file that cannot be read or written
    ├── SimulationError                       the simulation failed (non-finite values, ...)
    │   ├── ZenoError                         too many events, or a state sticking to a guard
    │   ├── GrazingError                      an event with |dg/dt| below the threshold
    │   ├── MissingEventError                 a cost term or constraint needs an event that did not happen
    │   ├── StepSizeError                     the step size fell below its minimum
    │   └── ModelError                        the model's own code failed (singular system)
    └── OptimizerError                        the optimizer could not continue
"""


class HybridoptError(Exception):
    """Base class of every hybridopt error; ``kind`` names the cause."""

    kind = "hybridopt"


class ProblemFileError(HybridoptError, ValueError):
    """A problem file or text does not validate; the message names file, key and line."""


class InvalidInputError(HybridoptError, ValueError):
    """A bad argument: an unknown name, method or solver, a wrong length, a value out of bounds."""


class FileAccessError(HybridoptError, OSError):
    """A file could not be read or written (the message names the path)."""


class SimulationError(HybridoptError):
    """The simulation failed; the subclasses name the common causes."""


class ZenoError(SimulationError):
    """More than ``max_events`` events (``kind == "zeno"``), or a state that sticks to a
    guard surface after its reset (``kind == "sticking"``)."""


class GrazingError(SimulationError):
    """An event whose guard rate |dg/dt| is below the grazing threshold: the event time is
    not differentiable there."""


class MissingEventError(SimulationError):
    """A cost term needs an event occurrence that did not happen in the horizon."""


class StepSizeError(SimulationError):
    """The integrator's step size fell below its minimum."""


class ModelError(SimulationError):
    """The model's own code failed, e.g. a singular linear system in a multibody model."""


class OptimizerError(HybridoptError):
    """The optimizer could not continue (e.g. every line-search restart left the cost's domain)."""


__all__ = [
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
