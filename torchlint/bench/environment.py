"""The facts a benchmark table is labelled with: device, its name, versions, threads, date."""

from __future__ import annotations

import datetime
import platform
import subprocess
from typing import Any, Dict, Optional

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


def commit(directory: str) -> Optional[str]:
    """The short hash of the git commit ``directory`` is checked out at, if it is in a checkout,
    with ``-dirty`` when the checkout has uncommitted changes."""
    try:
        proc = subprocess.run(["git", "describe", "--always", "--dirty", "--abbrev=7", "--exclude=*"],
                              cwd=directory, capture_output=True, text=True)
    except OSError:
        return None
    return (proc.stdout.strip() or None) if proc.returncode == 0 else None


def describe(device: torch.device, size: str, repeats: int, command: str, fixtures: str) -> Dict[str, Any]:
    cuda = device.type == "cuda"
    return {
        "device": device.type,
        "device_name": device_name(device),
        "torch": torch.__version__,
        "cuda": torch.version.cuda if cuda else None,
        "cudnn": torch.backends.cudnn.version() if cuda else None,
        "python": platform.python_version(),
        "size": size,
        "date": datetime.date.today().isoformat(),
        "commit": commit(fixtures),
        "command": command,
        "cpus": available_cpus(),
        "threads": torch.get_num_threads(),
        "repeats": repeats,
    }
