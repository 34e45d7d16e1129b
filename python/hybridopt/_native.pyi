"""Type stubs of the compiled extension (python/src/*.rs); see each class's docstring."""

from os import PathLike
from pathlib import Path
from typing import Any, Dict, List, Mapping, Optional, Sequence, Tuple, Union

import numpy as np
import numpy.typing as npt

__version__: str

Theta = Union[None, Sequence[float], npt.NDArray[np.float64], Mapping[str, float]]

class Event:
    t: float
    guard: str
    mode_before: str
    mode_after: str
    tau: Optional[npt.NDArray[np.float64]]

class Simulation:
    t: npt.NDArray[np.float64]
    modes: npt.NDArray[np.int64]
    states: npt.NDArray[np.float64]
    state_names: List[str]
    outputs: Dict[str, npt.NDArray[np.float64]]
    controls: Dict[str, npt.NDArray[np.float64]]
    events: List[Event]
    t_final: float
    stats: Dict[str, int]
    costs: Dict[str, float]
    cost_error: Optional[str]
    columns: List[str]
    table: npt.NDArray[np.float64]
    report: Dict[str, Any]
    def __getitem__(self, name: str) -> npt.NDArray[np.float64]: ...

class Gradient:
    cost: float
    gradient: npt.NDArray[np.float64]
    parameter_names: List[str]
    method: str
    objective_names: List[str]
    values: npt.NDArray[np.float64]
    gradients: npt.NDArray[np.float64]
    events: List[Event]
    tau_from: Optional[str]
    stats: Dict[str, int]
    report: Dict[str, Any]
    def as_dict(self) -> Dict[str, float]: ...

class Problem:
    @staticmethod
    def from_file(path: Union[str, PathLike[str]]) -> Problem: ...
    @staticmethod
    def from_toml(text: str, name: str = "<string>") -> Problem: ...
    @property
    def name(self) -> str: ...
    @property
    def file(self) -> Path: ...
    @property
    def parameter_names(self) -> List[str]: ...
    @property
    def values(self) -> npt.NDArray[np.float64]: ...
    @values.setter
    def values(self, values: Sequence[float]) -> None: ...
    def set_value(self, name: str, value: float) -> None: ...
    def __getitem__(self, name: str) -> float: ...
    def __setitem__(self, name: str, value: float) -> None: ...
    @property
    def optimized(self) -> List[str]: ...
    @property
    def x0(self) -> npt.NDArray[np.float64]: ...
    @property
    def bounds(self) -> List[Tuple[Optional[float], Optional[float]]]: ...
    @property
    def objective_names(self) -> List[str]: ...
    @property
    def state_names(self) -> List[str]: ...
    @property
    def output_names(self) -> List[str]: ...
    @property
    def guard_names(self) -> List[str]: ...
    @property
    def horizon(self) -> Tuple[float, float]: ...
    @property
    def tolerances(self) -> Tuple[float, float]: ...
    @tolerances.setter
    def tolerances(self, tolerances: Tuple[float, float]) -> None: ...
    def simulate(self, theta: Theta = None) -> Simulation: ...
    def gradient(self, theta: Theta = None, method: str = "adjoint", tau: bool = False) -> Gradient: ...
    def fun_and_grad(
        self, x: Union[Sequence[float], npt.NDArray[np.float64]], method: Optional[str] = None
    ) -> Tuple[float, npt.NDArray[np.float64]]: ...
    def residuals(
        self, x: Union[Sequence[float], npt.NDArray[np.float64]], jacobian: bool = True
    ) -> Tuple[npt.NDArray[np.float64], Optional[npt.NDArray[np.float64]]]: ...
    def constraint_names(self) -> List[str]: ...
    def constraint_rows(
        self, x: Union[Sequence[float], npt.NDArray[np.float64]]
    ) -> Dict[str, Any]: ...
    def shooting_point(
        self, x: Optional[Union[Sequence[float], npt.NDArray[np.float64]]] = None
    ) -> Dict[str, Any]: ...
    def constraints(
        self, x: Union[Sequence[float], npt.NDArray[np.float64]]
    ) -> npt.NDArray[np.float64]: ...
    def constraints_jacobian(
        self, x: Union[Sequence[float], npt.NDArray[np.float64]]
    ) -> List[List[float]]: ...
    def feedback(
        self,
        out: Union[str, PathLike[str]],
        trials: Optional[int] = None,
        optimize: bool = True,
        animation: bool = False,
        summary: Optional[Union[str, PathLike[str]]] = None,
    ) -> Dict[str, Any]: ...
    def closed_loop(
        self,
        push: Union[Sequence[float], npt.NDArray[np.float64]],
        steps: int = 10,
        theta: Optional[
            Union[Sequence[float], npt.NDArray[np.float64], Mapping[str, float]]
        ] = None,
        gains: bool = True,
    ) -> Dict[str, Any]: ...
    def optimize(
        self,
        solver: Optional[str] = None,
        max_iters: Optional[int] = None,
        gradient: Optional[str] = None,
        out: Optional[Union[str, PathLike[str]]] = None,
    ) -> Dict[str, Any]: ...
