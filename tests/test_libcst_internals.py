"""torchlint/libcst_internals.py leans on private parts of libcst (pyproject.toml bounds
libcst below 2). These tests fail, naming the missing piece, when a release moves one."""

import inspect
from contextlib import contextmanager

import libcst as cst
import pytest

from torchlint import libcst_internals
from torchlint.positions import Positions
from torchlint.rewrite import code_in_block

SOURCE = "def f():\n    return g(a,\n             b)\n"


def test_codegen_state_takes_what_we_pass():
    parameters = inspect.signature(libcst_internals.CodegenState).parameters
    assert {"default_indent", "default_newline", "indent_tokens"} <= set(parameters), parameters
    assert callable(getattr(cst.CSTNode, "_codegen", None)), "CSTNode._codegen is gone"


def test_codegen_calls_the_hooks_positions_use():
    calls = []

    class Recording(libcst_internals.CodegenState):
        def before_codegen(self, node):
            calls.append(("before", type(node).__name__))

        def after_codegen(self, node):
            calls.append(("after", type(node).__name__))

        @contextmanager
        def record_syntactic_position(self, node, *, start_node=None, end_node=None):
            calls.append(("syntactic", type(node).__name__))
            yield

    libcst_internals.generate(cst.parse_expression("f(a)"), Recording("    ", "\n"))
    for hook in ("before", "after", "syntactic"):
        assert (hook, "Call") in calls, f"code generation no longer calls CodegenState.{hook}_..."


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


def test_parsing_skips_validation_only_while_parsing():
    validate = cst.CSTNode.__post_init__
    module = libcst_internals.parse_module(SOURCE)
    assert module.code == SOURCE and module.deep_equals(cst.parse_module(SOURCE))
    assert cst.CSTNode.__post_init__ is validate, "CSTNode.__post_init__ (node validation) is gone or not restored"
    with pytest.raises(cst.CSTValidationError):
        cst.Name("not a name")  # nodes built after parsing are validated again
