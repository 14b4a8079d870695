"""One fixture through the checks: lint consistency (isolation), then by its kind: output
agreement and timing (a speedup, or a fix's cost), or a correctness verdict. A fixture with
a ``SWEEP`` is measured at every value of its parameter."""

from __future__ import annotations

import traceback
from dataclasses import asdict, dataclass, field
from typing import Any, Callable, Dict, List, Optional, Type

import torch

from torchlint.bench.compare import outputs_agree
from torchlint.bench.consistency import lint_problem
from torchlint.bench.fixture import CORRECTNESS, SIDES, WORKLOAD, Fixture, Protocol, find
from torchlint.bench.memory import peak_memory
from torchlint.bench.timing import Side, Timing, measure
from torchlint.rules.base import Rule
from torchlint.runner import available_cpus

MEASURED, SKIPPED, FAILED = "measured", "skipped", "failed"
WARM_STEPS = 3  # a correctness verdict reads the last of these steps


@dataclass
class Point:
    """The measurement at one value of a sweep (the only one when there is no sweep)."""

    value: Any = None
    timing: Optional[Timing] = None
    before_bytes: Optional[int] = None  # peak memory one step adds, when the fixture asks
    after_bytes: Optional[int] = None

    def as_json(self) -> Dict[str, Any]:
        timing = self.timing
        return {
            "value": self.value,
            "before_s": timing.before_s if timing else None,
            "after_s": timing.after_s if timing else None,
            "ratio": timing.ratio if timing else None,
            "paired_min": timing.paired_min if timing else None,
            "paired_max": timing.paired_max if timing else None,
            "before_bytes": self.before_bytes,
            "after_bytes": self.after_bytes,
        }


@dataclass
class Result:
    code: str
    status: str = FAILED
    reason: Optional[str] = None
    lint_consistent: Optional[bool] = None
    outputs_match: Optional[bool] = None
    protocol: Optional[Protocol] = None
    points: List[Point] = field(default_factory=list)
    verdict: Optional[str] = None  # a correctness fixture's finding, in words
    fixture: Optional[str] = None  # what the fixture's workload is, from its docstring

    @property
    def headline(self) -> Optional[Point]:
        """The point the row reports: the sweep's headline value, or the only point."""
        wanted = self.protocol.headline if self.protocol else None
        return next((p for p in self.points if p.value == wanted), self.points[0] if self.points else None)

    @property
    def timing(self) -> Optional[Timing]:
        point = self.headline
        return point.timing if point else None

    def as_json(self) -> Dict[str, Any]:
        """The headline point's figures at the top level, and the whole sweep under ``sweep``."""
        timing, kind = self.timing, self.protocol.kind if self.protocol else None
        figures = (self.headline or Point()).as_json()
        del figures["value"]
        return {
            "code": self.code,
            "kind": kind,
            "status": self.status,
            "reason": self.reason,
            **figures,  # before_s, after_s, ratio (before / after), paired range, peak memory
            "speedup": timing.ratio if timing and kind == "speedup" else None,
            "verdict": self.verdict,
            "outputs_match": self.outputs_match,
            "lint_consistent": self.lint_consistent,
            "before_spread": timing.before_spread if timing else None,
            "after_spread": timing.after_spread if timing else None,
            "repeats": timing.repeats if timing else None,
            "sweep": self.protocol.sweep_json([p.as_json() for p in self.points]) if self.protocol else None,
            "requires": asdict(self.protocol.requirements) if self.protocol else None,
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
    protocol = result.protocol = _call("before.py", "its protocol constants", lambda: Protocol.of(before_module, size))
    unmet = protocol.requirements.unmet(machine.device.type, machine.gpus, machine.cpus)
    if unmet:
        result.status, result.reason = SKIPPED, unmet
        return
    if protocol.kind == CORRECTNESS:
        on_phase("verdict")
        _judge(before_module, after_module, machine, size, result)
        return
    for value in protocol.values:
        on_phase("outputs" if value is None else f"outputs, {protocol.sweep_name}={value}")
        before = _fresh_steps(before_module, "before.py", machine, size, value)
        after = _fresh_steps(after_module, "after.py", machine, size, value)
        agree, why = outputs_agree(before[1], after[1], getattr(after_module, "check", None))
        result.outputs_match = agree
        if not agree:
            result.reason = why if value is None else f"{why} ({protocol.sweep_name}={value})"
            return
        on_phase("timing" if value is None else f"timing, {protocol.sweep_name}={value}")
        point = Point(value)
        sides = Side(before_module.step, before[0]), Side(after_module.step, after[0])
        point.timing = _call("timing", "a step", lambda: measure(*sides, repeats, machine.synchronize))
        if protocol.memory:
            before_side, after_side = sides
            point.before_bytes = _call("before.py", "step (memory)",
                                       lambda: peak_memory(before_side.step, before_side.state, machine.device))
            point.after_bytes = _call("after.py", "step (memory)",
                                      lambda: peak_memory(after_side.step, after_side.state, machine.device))
        result.points.append(point)
    result.status = MEASURED


def _judge(before_module, after_module, machine: Machine, size: str, result: Result) -> None:
    """A correctness fixture: the last of ``WARM_STEPS`` steps of each side, so that one-time
    costs (CUDA context, kernel loading, library handles) are behind it (before's may raise: the
    exception is its output), and ``verdict(before, after)`` from after.py, which says what was
    observed."""
    try:
        before = _fresh_steps(before_module, "before.py", machine, size, None, WARM_STEPS)[1]
    except FixtureError as error:
        before = error.__cause__
    after = _fresh_steps(after_module, "after.py", machine, size, None, WARM_STEPS)[1]
    holds, verdict = _call("after.py", "verdict", lambda: after_module.verdict(before, after))
    result.verdict = verdict
    if holds:
        result.status = MEASURED
    else:
        result.reason = f"the fix does not hold: {verdict}"


def _fresh_steps(module, name: str, machine: Machine, size: str, value: Any, steps: int = 1):
    """A fresh seeded state and the output of the ``steps``-th step from it."""
    torch.manual_seed(0)
    arguments = (machine.device, size) if value is None else (machine.device, size, value)
    state = _call(name, "setup", lambda: module.setup(*arguments))
    for _ in range(steps):
        output = _call(name, "step", lambda: module.step(state))
        machine.synchronize()
    return state, output


def _call(name: str, what: str, function: Callable[[], Any]):
    try:
        return function()
    except Exception as error:
        last = traceback.format_exception_only(type(error), error)[-1].strip()
        raise FixtureError(f"{name} {what} raised {last}") from error
