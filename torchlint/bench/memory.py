"""Peak memory one step adds: on CUDA from the caching allocator's statistics, on the CPU
from the allocations torch's profiler records (each op's own allocations and frees, in
order: the running total's maximum)."""

from __future__ import annotations

from typing import Any, Callable

import torch


def peak_memory(step: Callable[[Any], Any], state: Any, device: torch.device) -> int:
    """Bytes: the most memory held at once during one ``step(state)``, above what was held before."""
    if device.type == "cuda":
        torch.cuda.synchronize(device)
        torch.cuda.reset_peak_memory_stats(device)
        held = torch.cuda.memory_allocated(device)
        step(state)
        torch.cuda.synchronize(device)
        return torch.cuda.max_memory_allocated(device) - held
    from torch.profiler import ProfilerActivity, profile

    with profile(activities=[ProfilerActivity.CPU], profile_memory=True) as profiler:
        step(state)
    held = peak = 0
    for event in sorted(profiler.events(), key=lambda event: event.time_range.start):
        held += event.self_cpu_memory_usage
        peak = max(peak, held)
    return peak
