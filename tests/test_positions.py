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


@pytest.mark.parametrize("with_source", [False, True], ids=["by-module", "by-statement"])
@pytest.mark.parametrize("newline", ["\n", "\r\n", "\r"])
def test_every_node_matches_libcst(newline, with_source):
    source = SOURCE.replace("\n", newline)
    module = cst.parse_module(source)
    wrapper = MetadataWrapper(module, unsafe_skip_copy=True)
    syntactic = wrapper.resolve(PositionProvider)
    inclusive = wrapper.resolve(WhitespaceInclusivePositionProvider)
    for node in syntactic:
        positions = Positions(module, [node], source if with_source else None)  # alone: the hardest case
        assert positions.span(node) == _span(syntactic[node]), node
        assert positions.code_span(node) == _span(inclusive[node]), node


@pytest.mark.parametrize("with_source", [False, True], ids=["by-module", "by-statement"])
def test_many_nodes_at_once(with_source):
    module = cst.parse_module(SOURCE)
    syntactic = MetadataWrapper(module, unsafe_skip_copy=True).resolve(PositionProvider)
    positions = Positions(module, list(syntactic), SOURCE if with_source else None)
    assert all(positions.span(node) == _span(syntactic[node]) for node in syntactic)


def test_a_statement_whose_text_repeats_is_placed_by_the_module():
    source = "x = 1\ny = torch.zeros(2)\nx = 1\ny = torch.zeros(2)\n"
    module = cst.parse_module(source)
    second = module.body[3].body[0].value
    assert Positions(module, [second], source).span(second) == ((4, 4), (4, 18))


def test_a_nested_statement_whose_text_repeats_is_placed_by_what_holds_it():
    source = "def f(x):\n    return x.sum()\n\n\ndef g(x):\n    if x:\n        pass\n    return x.sum()\n"
    module = cst.parse_module(source)
    second = module.body[1].body.body[1].body[0].value
    assert Positions(module, [second], source).span(second) == ((8, 11), (8, 18))
