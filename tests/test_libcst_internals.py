"""torchlint/libcst_internals.py leans on private parts of libcst (pyproject.toml bounds
libcst below 2). These tests fail, naming the missing piece, when a release moves one."""

import inspect

import libcst as cst

from torchlint import libcst_internals
from torchlint.positions import Positions
from torchlint.rewrite import code_in_block

SOURCE = "def f():\n    return g(a,\n             b)\n"


def test_codegen_state_takes_what_we_pass():
    parameters = inspect.signature(libcst_internals.CodegenState).parameters
    assert {"default_indent", "default_newline", "indent_tokens"} <= set(parameters), parameters
    assert callable(getattr(cst.CSTNode, "_codegen", None)), "CSTNode._codegen is gone"


def test_position_state_has_the_members_positions_use():
    state = libcst_internals.PositionProvidingCodegenState(default_indent="    ", default_newline="\n", provider=None)
    for member in ("_stack", "line", "column", "provider", "after_codegen"):
        assert hasattr(state, member), f"PositionProvidingCodegenState.{member} is gone"


def _call(module):
    return module.body[0].body.body[0].body[0].value


def test_a_node_renders_in_its_block():
    module = cst.parse_module(SOURCE)
    assert code_in_block(module, _call(module), ["    "]) == "g(a,\n             b)"


def test_positions_of_a_node():
    module = cst.parse_module(SOURCE)
    call = _call(module)
    positions = Positions(module, [call])
    assert positions.span(call) == ((2, 11), (3, 15))
    assert positions.code_span(call) == ((2, 11), (3, 15))
