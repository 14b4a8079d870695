"""The rule catalogue: every rule class, in code order."""

from __future__ import annotations

from typing import Dict, Tuple, Type

from torchlint.rules.base import Rule
from torchlint.rules.dataloading import DataLoaderWithoutWorkers
from torchlint.rules.device import ConstantTensorInHotPath, FactoryMeetsDeviceTensor, FactoryThenMoved
from torchlint.rules.sync import HostSyncInHotPath, PythonLoopOverTensor

ALL_RULES: Tuple[Type[Rule], ...] = tuple(
    sorted(
        (
            FactoryThenMoved, FactoryMeetsDeviceTensor, ConstantTensorInHotPath,
            HostSyncInHotPath, PythonLoopOverTensor, DataLoaderWithoutWorkers,
        ),
        key=lambda rule: rule.code,
    )
)
RULES_BY_CODE: Dict[str, Type[Rule]] = {rule.code: rule for rule in ALL_RULES}
