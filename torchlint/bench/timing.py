"""The timing protocol: calibrated blocks, before and after interleaved, medians and paired ratios."""

from __future__ import annotations

import gc
import statistics
import time
from dataclasses import dataclass
from typing import Any, Callable, List, Tuple

BLOCK_SECONDS = 0.2  # each timed block is this long, made of back-to-back calls
CALIBRATION_SECONDS = 0.05  # warm-up doubles the calls until a block takes this long


@dataclass(frozen=True)
class Side:
    """One side of a fixture, ready to call: ``step(state)``."""

    step: Callable[[Any], Any]
    state: Any


@dataclass(frozen=True)
class Timing:
    before_s: float  # median seconds per call
    after_s: float
    before_spread: float  # (max - min) / median over the repeats
    after_spread: float
    paired_min: float  # range of the per-repeat before/after ratios
    paired_max: float
    repeats: int

    @property
    def ratio(self) -> float:
        """Before / after: above 1 the after side is faster."""
        return self.before_s / self.after_s


def time_block(side: Side, calls: int, synchronize: Callable[[], None]) -> float:
    """Seconds per call over ``calls`` back-to-back calls, with the collector paused."""
    gc_was_enabled = gc.isenabled()
    gc.disable()
    try:
        synchronize()
        start = time.perf_counter()
        for _ in range(calls):
            side.step(side.state)
        synchronize()
        return (time.perf_counter() - start) / calls
    finally:
        if gc_was_enabled:
            gc.enable()


def calibrate(side: Side, synchronize: Callable[[], None]) -> int:
    """Warm up, doubling the calls until a block takes CALIBRATION_SECONDS; calls per BLOCK_SECONDS."""
    calls = 1
    while True:
        per_call = time_block(side, calls, synchronize)
        if per_call * calls >= CALIBRATION_SECONDS:
            return max(1, round(BLOCK_SECONDS / per_call))
        calls *= 2


def measure(before: Side, after: Side, repeats: int, synchronize: Callable[[], None]) -> Timing:
    """Interleave before and after blocks, alternating which goes first each repeat."""
    sides = (before, after)
    calls = [calibrate(side, synchronize) for side in sides]
    times: Tuple[List[float], List[float]] = ([], [])
    for repeat in range(repeats):
        for index in (0, 1) if repeat % 2 == 0 else (1, 0):
            times[index].append(time_block(sides[index], calls[index], synchronize))
    before_times, after_times = times
    ratios = [b / a for b, a in zip(before_times, after_times)]
    return Timing(
        statistics.median(before_times), statistics.median(after_times),
        _spread(before_times), _spread(after_times), min(ratios), max(ratios), repeats,
    )


def _spread(times: List[float]) -> float:
    return (max(times) - min(times)) / statistics.median(times)
