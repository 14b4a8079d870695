"""The rule catalogue: every rule class, in code order."""

from __future__ import annotations

from typing import Dict, Tuple, Type

from torchlint.rules.base import Rule
from torchlint.rules.dataloading import BatchesNotPinned, DataLoaderWithoutWorkers, WorkersNotPersistent
from torchlint.rules.device import ConstantTensorInHotPath, FactoryMeetsDeviceTensor, FactoryThenMoved
from torchlint.rules.layout import NegativeStrideFromNumpy
from torchlint.rules.parallel import DataParallelUsed
from torchlint.rules.sync import HostSyncInHotPath, PythonLoopOverTensor
from torchlint.rules.timing import TimingWithoutSync

ALL_RULES: Tuple[Type[Rule], ...] = tuple(
    sorted(
        (
            FactoryThenMoved, FactoryMeetsDeviceTensor, ConstantTensorInHotPath,
            HostSyncInHotPath, PythonLoopOverTensor, NegativeStrideFromNumpy, DataParallelUsed,
            DataLoaderWithoutWorkers, WorkersNotPersistent, BatchesNotPinned, TimingWithoutSync,
        ),
        key=lambda rule: rule.code,
    )
)
RULES_BY_CODE: Dict[str, Type[Rule]] = {rule.code: rule for rule in ALL_RULES}
