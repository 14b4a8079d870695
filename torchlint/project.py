"""Context across the files of one run: functions that hot code in another file calls.

A loss in ``model.py`` may call ``pairwise_distances`` from ``utils/ops.py``, and a base
class's ``forward`` may call ``self.compute_loss`` that a subclass in another file
defines. Linted alone, those files cannot know that the function runs once per step. So
each file tells the run (``ProjectFacts``, computed from its one parse and cached with its
results) which functions of other modules its hot code calls, which ones its other
functions call, and which of its functions hold findings that would count if hot code
called them. Once every file is linted, ``resolve`` follows the calls from hot code across
modules; the few files whose waiting functions are reached are linted again with those
functions marked hot (their findings then come with positions and fixes like any other).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Dict, List, Sequence, Set, Tuple


@dataclass
class ProjectFacts:
    hot_calls: List[Tuple[str, str]] = field(default_factory=list)  # (callee qualname, kind of the caller)
    calls: Dict[str, List[str]] = field(default_factory=dict)  # a name of an own function -> the functions it calls
    # (a name hot code elsewhere reaches a function of this file by, the function's local name
    # (`func`, `Class.method`), the kinds of hot code that would make its findings count,
    # most telling first)
    waiting: List[Tuple[str, str, Tuple[str, ...]]] = field(default_factory=list)


def resolve(facts: Sequence[ProjectFacts]) -> List[Dict[str, str]]:
    """For each file's facts, its waiting functions (by local name) that hot code reaches,
    with the kind of hot code they then are (the first of their waiting kinds that does)."""
    reached: Dict[str, Set[str]] = {}  # function qualname -> kinds of hot code that reach it
    edges: Dict[str, List[str]] = {}
    for fact in facts:
        for caller, callees in fact.calls.items():
            edges.setdefault(caller, []).extend(callees)
    todo = [call for fact in facts for call in fact.hot_calls]
    while todo:
        function, kind = todo.pop()
        if kind in reached.setdefault(function, set()):
            continue
        reached[function].add(kind)
        todo.extend((callee, kind) for callee in edges.get(function, ()))
    found = []
    for fact in facts:
        hot: Dict[str, str] = {}
        for name, local, kinds in fact.waiting:
            kind = next((kind for kind in kinds if kind in reached.get(name, ())), None)
            if kind is not None and local not in hot:
                hot[local] = kind
        found.append(hot)
    return found
