"""Positions computed for a few nodes agree with libcst's position providers for every node."""

import libcst as cst
import pytest
from libcst.metadata import MetadataWrapper, PositionProvider, WhitespaceInclusivePositionProvider

from torchlint.positions import Positions

SOURCE = '''\
# header comment
import torch


@torch.no_grad()  # decorated
class Net(torch.nn.Module):
    """Doc."""

    def forward(self, x, *, scale: float = 2.0):
        y = (x.float() * scale +
             torch.ones(3)).sum(dim=-1)  # trailing
        if y.item() > 1: return [a for a in x if a]
        return {"k": x[0, 1:], **kw}, lambda t: t @ x


z = Net()(torch.randn(2, 3)); w = f"{z!r:>10}"
'''


def _span(node_range):
    return (node_range.start.line, node_range.start.column), (node_range.end.line, node_range.end.column)


@pytest.mark.parametrize("newline", ["\n", "\r\n"])
def test_every_node_matches_libcst(newline):
    module = cst.parse_module(SOURCE.replace("\n", newline))
    wrapper = MetadataWrapper(module, unsafe_skip_copy=True)
    syntactic = wrapper.resolve(PositionProvider)
    inclusive = wrapper.resolve(WhitespaceInclusivePositionProvider)
    for node in syntactic:
        positions = Positions(module, [node])  # alone, as the last node generation needs
        assert positions.span(node) == _span(syntactic[node]), node
        assert positions.code_span(node) == _span(inclusive[node]), node


def test_many_nodes_at_once():
    module = cst.parse_module(SOURCE)
    syntactic = MetadataWrapper(module, unsafe_skip_copy=True).resolve(PositionProvider)
    positions = Positions(module, list(syntactic))
    assert all(positions.span(node) == _span(syntactic[node]) for node in syntactic)
