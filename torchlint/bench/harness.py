"""One fixture through the three checks: lint consistency, output agreement, timing."""

from __future__ import annotations

import traceback
from dataclasses import asdict, dataclass
from typing import Any, Callable, Dict, Optional, Type

import torch

from torchlint.bench.compare import outputs_agree
from torchlint.bench.consistency import lint_problem
from torchlint.bench.fixtures import SIDES, WORKLOAD, Fixture, Requirements, find
from torchlint.bench.timing import Side, Timing, measure
from torchlint.rules.base import Rule
from torchlint.runner import available_cpus

MEASURED, SKIPPED, FAILED = "measured", "skipped", "failed"


@dataclass
class Result:
    code: str
    status: str = FAILED
    reason: Optional[str] = None
    lint_consistent: Optional[bool] = None
    outputs_match: Optional[bool] = None
    timing: Optional[Timing] = None
    requirements: Optional[Requirements] = None
    fixture: Optional[str] = None  # what the fixture's workload is, from its docstring

    def as_json(self) -> Dict[str, Any]:
        timing = self.timing
        return {
            "code": self.code,
            "status": self.status,
            "reason": self.reason,
            "before_s": timing.before_s if timing else None,
            "after_s": timing.after_s if timing else None,
            "speedup": timing.speedup if timing else None,
            "outputs_match": self.outputs_match,
            "lint_consistent": self.lint_consistent,
            "before_spread": timing.before_spread if timing else None,
            "after_spread": timing.after_spread if timing else None,
            "paired_min": timing.paired_min if timing else None,
            "paired_max": timing.paired_max if timing else None,
            "repeats": timing.repeats if timing else None,
            "requires": asdict(self.requirements) if self.requirements else None,
            "fixture": self.fixture,
        }


@dataclass(frozen=True)
class Machine:
    """Where fixtures run: the device, how many CUDA devices and CPU cores there are."""

    device: torch.device
    gpus: int
    cpus: int

    @classmethod
    def for_device(cls, device: torch.device) -> "Machine":
        gpus = torch.cuda.device_count() if device.type == "cuda" else 0
        return cls(device, gpus, available_cpus())

    def synchronize(self) -> None:
        if self.device.type == "cuda":
            torch.cuda.synchronize(self.device)


class FixtureError(Exception):
    """A fixture module that raised: where, and the exception's last line."""


def bench(
    rule: Type[Rule], root: str, machine: Machine, size: str, repeats: int,
    on_phase: Callable[[str], None] = lambda phase: None,
) -> Result:
    result = Result(rule.code)
    fixture = find(root, rule.code)
    if fixture is None:
        result.reason = "no fixture"
        return result
    result.fixture = fixture.description()
    try:
        on_phase("lint")
        texts = [_call(f"{side}.py", "reading", lambda s=side: fixture.text(s)) for side in SIDES]
        if fixture.has_workload():
            texts.append(_call(f"{WORKLOAD}.py", "reading", lambda: fixture.text(WORKLOAD)))
        problem = lint_problem(rule, *texts)
        result.lint_consistent = problem is None
        if problem:
            result.reason = problem
            return result
        _run(fixture, machine, size, repeats, result, on_phase)
    except FixtureError as error:
        result.status, result.reason = FAILED, str(error)
    return result


def _run(fixture: Fixture, machine: Machine, size: str, repeats: int, result: Result, on_phase) -> None:
    on_phase("import")
    before_module = _call("before.py", "import", lambda: fixture.load("before"))
    after_module = _call("after.py", "import", lambda: fixture.load("after"))
    result.requirements = _call("before.py", "REQUIRES_*", lambda: Requirements.of(before_module))
    unmet = result.requirements.unmet(machine.device.type, machine.gpus, machine.cpus)
    if unmet:
        result.status, result.reason = SKIPPED, unmet
        return
    on_phase("outputs")
    before = _first_step(before_module, "before.py", machine, size)
    after = _first_step(after_module, "after.py", machine, size)
    agree, why = outputs_agree(before[1], after[1], getattr(after_module, "check", None))
    result.outputs_match = agree
    if not agree:
        result.reason = why
        return
    on_phase("timing")
    sides = Side(before_module.step, before[0]), Side(after_module.step, after[0])
    result.timing = _call("timing", "a step", lambda: measure(*sides, repeats, machine.synchronize))
    result.status = MEASURED


def _first_step(module, name: str, machine: Machine, size: str):
    """A fresh seeded state and the output of the first step from it."""
    torch.manual_seed(0)
    state = _call(name, "setup", lambda: module.setup(machine.device, size))
    output = _call(name, "step", lambda: module.step(state))
    machine.synchronize()
    return state, output


def _call(name: str, what: str, function: Callable[[], Any]):
    try:
        return function()
    except Exception as error:
        last = traceback.format_exception_only(type(error), error)[-1].strip()
        raise FixtureError(f"{name} {what} raised {last}") from error
