"""Fixture pairs on disk (``<root>/<CODE>/before.py``, ``after.py``, optional ``workload.py``) and what they require."""

from __future__ import annotations

import ast
import importlib.util
import os
import re
import sys
from contextlib import contextmanager
from dataclasses import dataclass
from types import ModuleType
from typing import Any, Dict, Iterator, List, Optional, Tuple

DEFAULT_ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "fixtures")  # shipped as package data
SIDES = ("before", "after")
WORKLOAD = "workload"  # the module name fixtures import their shared part under


@dataclass(frozen=True)
class Fixture:
    code: str
    directory: str

    def path(self, side: str) -> str:
        return os.path.join(self.directory, f"{side}.py")

    def text(self, side: str) -> str:
        with open(self.path(side), encoding="utf-8") as handle:
            return handle.read()

    def description(self) -> Optional[str]:
        """The workload's docstring (before.py's when there is no workload.py) on one line,
        without its ``TL101 workload:`` label; None when there is none."""
        try:
            docstring = ast.get_docstring(ast.parse(self.text(WORKLOAD if self.has_workload() else "before")))
        except (OSError, SyntaxError, ValueError):
            return None
        if not docstring:
            return None
        return re.sub(r"^TL\d{3} (workload|fixture): ", "", " ".join(docstring.split()))

    def has_workload(self) -> bool:
        return os.path.isfile(self.path(WORKLOAD))

    def load(self, side: str) -> ModuleType:
        """Import ``side``.py afresh, with ``import workload`` bound to a fresh import of this
        fixture's own workload.py (to nothing when it has none) while it runs.

        Both are registered under names unique to the fixture and side, so two fixtures'
        workloads never meet in ``sys.modules`` and DataLoader workers can unpickle them.
        """
        name = f"torchlint_fixture_{self.code}_{side}"
        workload = _import(f"{name}_{WORKLOAD}", self.path(WORKLOAD)) if self.has_workload() else None
        with _bound_as(WORKLOAD, workload):
            return _import(name, self.path(side))


def _import(name: str, path: str) -> ModuleType:
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    return module


@contextmanager
def _bound_as(name: str, module: Optional[ModuleType]) -> Iterator[None]:
    """``import name`` gives ``module`` inside the block (None: raises ImportError); restored after."""
    missing = object()
    saved = sys.modules.get(name, missing)
    sys.modules[name] = module
    try:
        yield
    finally:
        if saved is missing:
            del sys.modules[name]
        else:
            sys.modules[name] = saved


def find(root: str, code: str) -> Optional[Fixture]:
    fixture = Fixture(code, os.path.join(root, code))
    return fixture if all(os.path.isfile(fixture.path(side)) for side in SIDES) else None


@dataclass(frozen=True)
class Requirements:
    cuda: bool = False
    gpus: int = 0
    cpus: int = 1
    reason: str = "(the fixture gives no REASON)"

    @classmethod
    def of(cls, module: ModuleType) -> "Requirements":
        default = cls()
        return cls(
            bool(getattr(module, "REQUIRES_CUDA", default.cuda)),
            int(getattr(module, "REQUIRES_GPUS", default.gpus)),
            int(getattr(module, "REQUIRES_CPUS", default.cpus)),
            str(getattr(module, "REASON", default.reason)),
        )

    def unmet(self, device_type: str, gpus: int, cpus: int) -> Optional[str]:
        """Why this machine cannot show the effect, or None when it can."""
        if self.cuda and device_type != "cuda":
            return f"needs CUDA ({device_type} here): {self.reason}"
        if self.gpus > gpus:
            return f"needs {self.gpus} CUDA devices ({gpus} here): {self.reason}"
        if self.cpus > cpus:
            return f"needs {self.cpus} CPU cores ({cpus} here): {self.reason}"
        return None


SPEEDUP, COST, CORRECTNESS = "speedup", "cost", "correctness"
KINDS = {
    SPEEDUP: "the fix makes the step faster: before / after",
    COST: "what the fix costs where it was not needed: after / before",
    CORRECTNESS: "what before.py gets wrong, observed once (no timing)",
}


@dataclass(frozen=True)
class Protocol:
    """How before.py says to measure it: what it needs (``REQUIRES_*``), what kind of result
    it gives (``KIND``), the parameter it sweeps, and whether the peak memory of a step is
    measured too (``MEMORY = True``). A sweep names its parameter, its values at each size
    and the value the headline row reports (one for every size, or ``{size: value}``):
    ``SWEEP = {"name": "epochs", "small": (1, 2, 4), "full": (1, 2, 4, 8), "headline": 4}``;
    ``setup`` then takes the value as a third argument."""

    requirements: Requirements
    kind: str = SPEEDUP
    sweep_name: Optional[str] = None
    sweep_values: Tuple[Any, ...] = ()
    headline: Any = None
    memory: bool = False

    @property
    def values(self) -> Tuple[Any, ...]:
        return self.sweep_values or (None,)

    @classmethod
    def of(cls, module: ModuleType, size: str) -> "Protocol":
        kind = getattr(module, "KIND", SPEEDUP)
        if kind not in KINDS:
            raise ValueError(f"KIND must be one of {', '.join(KINDS)}, not {kind!r}")
        memory = bool(getattr(module, "MEMORY", False))
        sweep = getattr(module, "SWEEP", None)
        if sweep is None:
            return cls(Requirements.of(module), kind, memory=memory)
        values = tuple(sweep.get(size, ()))
        headline = sweep.get("headline")
        headline = headline.get(size) if isinstance(headline, dict) else headline
        if kind == CORRECTNESS or headline not in values or "name" not in sweep:
            raise ValueError("SWEEP needs a name, values for each size that include its headline, and a timed KIND")
        return cls(Requirements.of(module), kind, sweep["name"], values, headline, memory)

    def sweep_json(self, points: List[Dict[str, Any]]) -> Optional[Dict[str, Any]]:
        if self.sweep_name is None:
            return None
        return {"name": self.sweep_name, "headline": self.headline, "points": points}
