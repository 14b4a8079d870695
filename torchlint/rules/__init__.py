"""The rule catalogue: one module per rule, ``tl<code>_<name>.py``, found by its file name.

Each module defines exactly one ``Rule`` subclass; the file name, the class name and the
rule's kebab-case ``name`` say the same thing (``tl101_factory_without_device.py``,
``FactoryWithoutDevice``, ``factory-without-device``).
"""

from __future__ import annotations

import importlib
import pkgutil
import re
from typing import Dict, Tuple, Type

from torchlint.rules.base import Rule

RULE_MODULE = re.compile(r"^tl\d{3}_\w+$")


def _discover() -> Tuple[Type[Rule], ...]:
    rules = []
    for module_info in pkgutil.iter_modules(__path__):
        if not RULE_MODULE.match(module_info.name):
            continue
        module = importlib.import_module(f"{__name__}.{module_info.name}")
        defined = [
            value for value in vars(module).values()
            if isinstance(value, type) and issubclass(value, Rule) and value.__module__ == module.__name__
        ]
        if len(defined) != 1:
            raise ImportError(f"{module.__name__} must define exactly one rule, found {len(defined)}")
        rules.append(defined[0])
    return tuple(sorted(rules, key=lambda rule: rule.code))


ALL_RULES: Tuple[Type[Rule], ...] = _discover()
RULES_BY_CODE: Dict[str, Type[Rule]] = {rule.code: rule for rule in ALL_RULES}
