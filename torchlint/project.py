"""Context across the files of one run: functions that hot code in another file calls.

A loss in ``model.py`` may call ``pairwise_distances`` from ``utils/ops.py``, a base
class's ``forward`` may call ``self.compute_loss`` that a subclass in another file
defines, and a subclass's ``forward`` may call ``self.sort_and_run`` that it inherits from
a base in another file (each file tells the run its classes, their bases and methods). Linted alone, those files cannot know that the function runs once per step. So
each file tells the run (``ProjectFacts``, computed from its one parse and cached with its
results) which functions of other modules its hot code calls, which ones its other
functions call, and which of its functions hold findings that would count if hot code
called them. Rules may also offer facts by key and ask for others (a DataLoader passed to
``train(loader)`` of another module, and how that function moves its batches). Once every
file is linted, ``resolve`` follows the calls from hot code across modules and matches
what is asked with what is offered; the few files it has news for are linted again with
it (their findings then come with positions and fixes like any other). Names match by their
end as well, for modules in folders without ``__init__.py`` (known by their file name only).
"""

from __future__ import annotations

import functools
import re
from dataclasses import dataclass, field
from typing import Dict, List, Optional, Sequence, Set, Tuple


@dataclass
class ProjectFacts:
    hot_calls: List[Tuple[str, str]] = field(default_factory=list)  # (callee qualname, kind of the caller)
    calls: Dict[str, List[str]] = field(default_factory=dict)  # a name of an own function -> the functions it calls
    # (a name hot code elsewhere reaches a function of this file by, the function's local name
    # (`func`, `Class.method`), the kinds of hot code that would make its findings count,
    # most telling first)
    waiting: List[Tuple[str, str, Tuple[str, ...]]] = field(default_factory=list)
    # Facts one rule tells another file, by key (TL503: `engine.train#2` -> how the batches of
    # the loader passed there are moved), and the keys this file's rules would use.
    offers: Dict[str, str] = field(default_factory=dict)
    needs: List[str] = field(default_factory=list)
    # A package's ``__init__.py`` re-exporting names of its modules: `pkg.Loss` -> `pkg.losses.Loss`.
    reexports: Dict[str, str] = field(default_factory=dict)
    # Module-level classes: qualname -> (their bases of the project, the methods they define).
    # `self.helper()` of a subclass's forward runs the base's helper where the subclass has none.
    classes: Dict[str, Tuple[List[str], List[str]]] = field(default_factory=dict)


@dataclass
class Elsewhere:
    """What the other files of a run tell one file: its functions that hot code calls (local
    name -> kind of that code), and the facts its rules asked for (key -> value)."""

    hot: Dict[str, str] = field(default_factory=dict)
    known: Dict[str, str] = field(default_factory=dict)

    def __bool__(self) -> bool:
        return bool(self.hot or self.known)

    def __or__(self, other: "Elsewhere") -> "Elsewhere":
        """Both: what a file learned stays learned (linted with it, it asks less)."""
        return Elsewhere({**other.hot, **self.hot}, {**other.known, **self.known})


_KEY_MARK = re.compile(r"[@#]")  # where a fact's key leaves the qualified name (`pkg.f#2`, `pkg.C@dataset`)


def resolve(facts: Sequence[ProjectFacts]) -> List[Elsewhere]:
    """For each file's facts, what the others tell it: its waiting functions (by local name)
    that hot code reaches, with the kind of hot code they then are (the first of their
    waiting kinds that does), and the values other files offer for the keys it needs."""
    reexports: Dict[str, str] = {}
    defined: Set[str] = set()  # the module-level classes and functions the files tell of
    for fact in facts:
        reexports.update(fact.reexports)
        defined.update(fact.classes, fact.calls, (name for name, _, _ in fact.waiting))
        defined.update(_KEY_MARK.split(key, 1)[0] for key in fact.offers)
    origin = functools.lru_cache(maxsize=None)(functools.partial(_origin, reexports, defined))  # names recur often
    reached: Dict[str, Set[str]] = {}  # function qualname -> kinds of hot code that reach it
    edges: Dict[str, List[str]] = {}
    for fact in facts:
        for caller, callees in fact.calls.items():
            edges.setdefault(caller, []).extend(map(origin, callees))
    classes: Dict[str, Tuple[List[str], List[str]]] = {}
    for fact in facts:
        classes.update(fact.classes)
    todo = [(origin(callee), kind) for fact in facts for callee, kind in fact.hot_calls]
    while todo:
        function, kind = todo.pop()
        if kind in reached.setdefault(function, set()):
            continue
        reached[function].add(kind)
        todo.extend((callee, kind) for callee in edges.get(function, ()))
        owner, _, method = function.rpartition(".")
        todo.extend((f"{cls}.{method}", kind) for cls in _inherited_from(classes, origin, owner, method))
    offers: Dict[str, str] = {}
    for fact in facts:
        offers.update(fact.offers)
    by_suffix: Dict[str, Set[str]] = {}  # what reaches `mod.func` also reaches it as `pkg.mod.func`
    for function, kinds in reached.items():
        for suffix in _suffixes(function):
            by_suffix.setdefault(suffix, set()).update(kinds)
    found = []
    for fact in facts:
        elsewhere = Elsewhere(known={})
        for key in fact.needs:
            offered = next((offers[short] for short in (origin(key), *_suffixes(origin(key))) if short in offers), None)
            if offered is not None:
                elsewhere.known[key] = offered
        for name, local, kinds in fact.waiting:
            kind = next((kind for kind in kinds if kind in reached.get(name, by_suffix.get(name, ()))), None)
            if kind is not None and local not in elsewhere.hot:
                elsewhere.hot[local] = kind
        found.append(elsewhere)
    return found


def _inherited_from(classes, origin, owner: str, method: str, depth: int = 0) -> List[str]:
    """The classes of the project whose ``method`` runs for an ``owner`` object that does not
    define it: the nearest bases up the hierarchy that do."""
    known = classes.get(owner)
    if known is None or method in known[1] or depth > 8:
        return []
    found = []
    for base in map(origin, known[0]):
        if base in classes:
            found.extend([base] if method in classes[base][1] else _inherited_from(classes, origin, base, method, depth + 1))
    return found


def _origin(reexports: Dict[str, str], defined: Set[str], name: str) -> str:
    """The name where ``name`` is defined, through the packages that re-export it
    (``pkg.Loss.forward`` -> ``pkg.losses.Loss.forward``; a key's ``@...``/``#...`` kept)."""
    mark = _KEY_MARK.search(name)
    dotted, tail = (name[:mark.start()], name[mark.start():]) if mark else (name, "")
    for _ in range(4):  # a re-export of a re-export
        parts = dotted.split(".")
        end = next((end for end in range(len(parts), 1, -1) if ".".join(parts[:end]) in reexports), None)
        if end is not None:
            dotted = ".".join([reexports[".".join(parts[:end])], *parts[end:]])
            continue
        starred = _star_origin(reexports, defined, parts)
        if starred is None:
            break
        dotted = starred
    return dotted + tail


def _star_origin(reexports: Dict[str, str], defined: Set[str], parts: List[str]) -> Optional[str]:
    """``pkg.AtomsLoader`` as ``pkg.loader.AtomsLoader``, where ``pkg`` imports everything from
    ``pkg.loader`` (``from .loader import *``) and that module defines ``AtomsLoader``."""
    for end in range(len(parts) - 1, 0, -1):
        for module in reexports.get(".".join(parts[:end]) + ".*", "").split():
            candidate = f"{module}.{parts[end]}"
            if candidate in defined:
                return ".".join([candidate, *parts[end + 1:]])
    return None


def _suffixes(name: str) -> List[str]:
    """``b.c.f`` and ``c.f`` for ``a.b.c.f``: the names a module outside any package (a folder
    without ``__init__.py``, named by its file alone) gives what others import by its full path."""
    parts = name.split(".")
    return [".".join(parts[index:]) for index in range(1, len(parts) - 1)]
