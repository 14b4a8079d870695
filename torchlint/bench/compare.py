"""Do the before and after outputs agree? By value, or by the fixture's ``check``."""

from __future__ import annotations

import math
from typing import Any, Callable, Optional, Tuple

import torch

RTOL, ATOL = 1e-4, 1e-5


def values_agree(before: Any, after: Any) -> bool:
    """Tensors (on the CPU) and numbers within tolerance; containers element by element."""
    if isinstance(before, torch.Tensor) or isinstance(after, torch.Tensor):
        return _tensors_agree(torch.as_tensor(before), torch.as_tensor(after))
    if _is_array(before) or _is_array(after):
        return _tensors_agree(torch.as_tensor(before), torch.as_tensor(after))
    if isinstance(before, (bool, int, float)) and isinstance(after, (bool, int, float)):
        return math.isclose(before, after, rel_tol=RTOL, abs_tol=ATOL) or (math.isnan(before) and math.isnan(after))
    if isinstance(before, (tuple, list)) and isinstance(after, (tuple, list)):
        return len(before) == len(after) and all(map(values_agree, before, after))
    if isinstance(before, dict) and isinstance(after, dict):
        return before.keys() == after.keys() and all(values_agree(before[k], after[k]) for k in before)
    return type(before) is type(after) and before == after


def _is_array(value: Any) -> bool:
    return type(value).__module__ == "numpy" and hasattr(value, "shape")


def _tensors_agree(before: torch.Tensor, after: torch.Tensor) -> bool:
    before, after = before.detach().cpu(), after.detach().cpu()
    if before.shape != after.shape:
        return False
    if before.is_floating_point() or before.is_complex() or after.is_floating_point() or after.is_complex():
        common = torch.promote_types(torch.promote_types(before.dtype, after.dtype), torch.float64)
        return torch.allclose(before.to(common), after.to(common), rtol=RTOL, atol=ATOL, equal_nan=True)
    return torch.equal(before, after.to(before.dtype))


def outputs_agree(before: Any, after: Any, check: Optional[Callable[[Any, Any], Any]]) -> Tuple[bool, Optional[str]]:
    """(agree, why not) for two step outputs."""
    if check is None:
        return (True, None) if values_agree(before, after) else (False, "outputs differ beyond tolerance")
    try:
        verdict = check(before, after)
    except Exception as error:  # an assert-style check, or a broken one
        return False, f"check() raised {type(error).__name__}" + (f": {error}" if str(error) else "")
    if verdict is None:
        return False, "check() returned None, not a bool"
    return (True, None) if bool(verdict) else (False, "check() returned False")
