"""The facts a benchmark table is labelled with: device, its name, versions, threads, date."""

from __future__ import annotations

import datetime
import platform
from typing import Any, Dict

import torch

from torchlint.runner import available_cpus


def device_name(device: torch.device) -> str:
    if device.type == "cuda":
        return torch.cuda.get_device_name(device)
    try:
        with open("/proc/cpuinfo", encoding="utf-8") as handle:
            for line in handle:
                if line.startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or platform.machine() or "unknown CPU"


def describe(device: torch.device, size: str, repeats: int) -> Dict[str, Any]:
    return {
        "device": device.type,
        "device_name": device_name(device),
        "torch": torch.__version__,
        "python": platform.python_version(),
        "size": size,
        "date": datetime.date.today().isoformat(),
        "cpus": available_cpus(),
        "threads": torch.get_num_threads(),
        "repeats": repeats,
    }
