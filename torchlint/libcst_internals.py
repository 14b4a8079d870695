"""The private parts of libcst that torchlint relies on, imported in this one place.

libcst has no public way to render a node inside an indented block, nor to compute the
positions of a few nodes without resolving position metadata for the whole module (which
costs several times the parse). Both need its code generation internals. pyproject.toml
therefore bounds libcst below 2, and tests/test_libcst_internals.py fails, naming the
missing piece, as soon as a release moves one of them.
"""

from __future__ import annotations

import libcst as cst
from libcst._nodes.internal import CodegenState
from libcst.metadata import CodePosition, CodeRange

__all__ = ["CodegenState", "CodePosition", "CodeRange", "generate"]


def generate(node: cst.CSTNode, state: CodegenState) -> None:
    """Append ``node``'s code to ``state`` (libcst's private ``_codegen``)."""
    node._codegen(state)
