"""The private parts of libcst that torchlint relies on, imported in this one place.

libcst has no public way to render a node inside an indented block, nor to compute the
positions of a few nodes without resolving position metadata for the whole module (which
costs several times the parse). Both need its code generation internals. Nor can its
parser skip re-validating every node it builds, about a third of the parse. pyproject.toml
therefore bounds libcst below 2, and tests/test_libcst_internals.py fails, naming the
missing piece, as soon as a release moves one of them.
"""

from __future__ import annotations

from contextlib import contextmanager
from typing import Iterator

import libcst as cst
from libcst._nodes.internal import CodegenState
from libcst.metadata import CodePosition, CodeRange

__all__ = ["CodegenState", "CodePosition", "CodeRange", "generate", "parse_module"]


def generate(node: cst.CSTNode, state: CodegenState) -> None:
    """Append ``node``'s code to ``state`` (libcst's private ``_codegen``)."""
    node._codegen(state)


def parse_module(text: str) -> cst.Module:
    """``libcst.parse_module`` without validating each node as it is built: the parser only
    builds valid trees (libcst's own PERF note on ``CSTNode.__post_init__`` says as much),
    and nodes built later (fixes) are validated as usual."""
    with _unvalidated():
        return cst.parse_module(text)


@contextmanager
def _unvalidated() -> Iterator[None]:
    validate = cst.CSTNode.__post_init__
    cst.CSTNode.__post_init__ = _skip  # type: ignore[method-assign]
    try:
        yield
    finally:
        cst.CSTNode.__post_init__ = validate  # type: ignore[method-assign]


def _skip(node: cst.CSTNode) -> None:
    """What ``CSTNode.__post_init__`` does while parsing: nothing."""

