"""Qualified names through imports, from the module's own import statements.

This replaces libcst's ``QualifiedNameProvider``: one dictionary of local name to
dotted name, filled as import statements are met.
"""

from __future__ import annotations

import functools
import os
from typing import Dict, List, Optional, Tuple

import libcst as cst

from torchlint.syntax import dotted_name

# Public spellings for objects that are often imported from their defining module.
_CANONICAL = {
    "torch.utils.data.dataloader.DataLoader": "torch.utils.data.DataLoader",
    # Subclasses that take torch's arguments and iterate the same way.
    "monai.data.DataLoader": "torch.utils.data.DataLoader",
    "monai.data.dataloader.DataLoader": "torch.utils.data.DataLoader",
    "torch_geometric.loader.DataLoader": "torch.utils.data.DataLoader",
    "torch_geometric.loader.dataloader.DataLoader": "torch.utils.data.DataLoader",
    "torchdata.stateful_dataloader.StatefulDataLoader": "torch.utils.data.DataLoader",
    "torchdata.stateful_dataloader.stateful_dataloader.StatefulDataLoader": "torch.utils.data.DataLoader",
    "torch.nn.parallel.DataParallel": "torch.nn.DataParallel",
    "torch.nn.parallel.data_parallel.DataParallel": "torch.nn.DataParallel",
    "torch.nn.modules.module.Module": "torch.nn.Module",
    "torch.nn.modules.Module": "torch.nn.Module",
}

_BUILTINS = frozenset(
    "print float int bool len range list tuple dict set enumerate zip iter next isinstance "
    "str repr abs min max sum sorted reversed map filter any all".split()
)


# What a star import (`from fastai.basics import *`) conventionally brings, for names no
# import binds explicitly.
_STAR_CONVENTIONS = {"torch": "torch", "nn": "torch.nn", "F": "torch.nn.functional", "np": "numpy"}


class ImportTable:
    def __init__(self, package: str = "") -> None:
        """``package``: the dotted package the file belongs to, for relative imports."""
        self.package = package
        self.names: Dict[str, str] = {}
        self.module_level: Dict[str, str] = {}  # the names imported at module level: usable anywhere
        self.star = False  # the module has a `from ... import *`
        self.star_modules: List[str] = []  # the modules it imports everything from

    def add(self, node: cst.CSTNode, module_level: bool = True) -> None:
        before = dict(self.names)
        self._add(node)
        if module_level:
            self.module_level.update((local, target) for local, target in self.names.items() if before.get(local) != target)

    def _add(self, node: cst.CSTNode) -> None:
        if isinstance(node, cst.Import):
            for alias in node.names:
                full = dotted_name(alias.name)
                if full is None:
                    continue
                if alias.asname is not None and isinstance(alias.asname.name, cst.Name):
                    self.names[alias.asname.name.value] = full
                else:
                    head = full.split(".", 1)[0]
                    self.names[head] = head
        elif isinstance(node, cst.ImportFrom):
            if isinstance(node.names, cst.ImportStar):
                self.star = True
                module = self._absolute(node)
                if module is not None:
                    self.star_modules.append(module)
                return
            module = self._absolute(node)
            for alias in node.names:
                name = dotted_name(alias.name)
                if module is None or name is None:
                    continue
                local = name
                if alias.asname is not None and isinstance(alias.asname.name, cst.Name):
                    local = alias.asname.name.value
                self.names[local] = f"{module}.{name}"

    def _absolute(self, node: cst.ImportFrom) -> Optional[str]:
        """The module ``from <module> import ...`` names, relative ones (``from ..ops``) resolved."""
        module = dotted_name(node.module) if node.module is not None else None
        if not node.relative:
            return module
        parts = self.package.split(".") if self.package else []
        up = len(node.relative) - 1
        if up > len(parts):
            return None
        base = ".".join(parts[: len(parts) - up])
        return ".".join(part for part in (base, module) if part) or None

    def qualname(self, node: cst.BaseExpression) -> Optional[str]:
        """The dotted name ``node`` refers to, or None when it is not an imported name."""
        dotted = dotted_name(node)
        return self.resolve(dotted) if dotted is not None else None

    def resolve(self, dotted: str) -> Optional[str]:
        """What the dotted name ``dotted`` (``nn.Module``) refers to, or None when it is not imported."""
        head, _, rest = dotted.partition(".")
        target = self.names.get(head)
        if target is None and self.star:
            target = _STAR_CONVENTIONS.get(head)
        if target is None:
            return f"builtins.{head}" if head in _BUILTINS and not rest else None
        full = f"{target}.{rest}" if rest else target
        return _CANONICAL.get(full, full)

    def alias_of(self, module: str) -> Optional[str]:
        """The module-level name bound to ``module`` itself (``np`` for ``import numpy as np``):
        one a fix may use anywhere in the file (an import inside a function is not)."""
        for local, target in self.module_level.items():
            if target == module:
                return local
        return None

    def imports(self, prefix: str) -> bool:
        return any(t == prefix or t.startswith(prefix + ".") for t in self.names.values())


def reexports(module: cst.Module, name: str) -> Dict[str, str]:
    """What a package's ``__init__.py`` (module ``name``) re-exports from its own modules:
    ``pkg.Loss`` -> ``pkg.losses.Loss`` for ``from .losses import Loss``; ``pkg.*`` -> the
    modules it imports everything from (``from .losses import *``), separated by spaces."""
    table = ImportTable(name)
    for line in module.body:
        if isinstance(line, cst.SimpleStatementLine):
            for statement in line.body:
                if isinstance(statement, cst.ImportFrom):
                    table.add(statement)
    top = name.split(".")[0]
    found = {f"{name}.{local}": target for local, target in table.names.items()
             if target.startswith(f"{top}.") and target != f"{name}.{local}"}
    own_stars = [module for module in table.star_modules if module.startswith(f"{top}.")]
    if own_stars:  # `from .loader import *`: the names are those modules', which one is settled later
        found[f"{name}.*"] = " ".join(own_stars)
    return found


def module_name(path: str) -> str:
    """``pkg.sub.mod`` for ``.../pkg/sub/mod.py`` (packages are folders with ``__init__.py``);
    ``train`` for a script ``train.py`` outside any package; "" for what is not a ``.py`` file."""
    if not path.endswith(".py"):
        return ""
    directory, name = os.path.split(os.path.abspath(path))
    package = _package(directory)
    own = [] if name == "__init__.py" else [name[:-3]]
    return ".".join([*package, *own])


@functools.lru_cache(maxsize=1024)
def _package(directory: str) -> Tuple[str, ...]:
    """The dotted package a folder is (empty outside packages)."""
    if not os.path.isfile(os.path.join(directory, "__init__.py")):
        return ()
    parent, name = os.path.split(directory)
    return (*_package(parent), name) if parent != directory else (name,)
