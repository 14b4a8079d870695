"""Realistic user programs (tests/realistic/): every finding must be marked on its line
with ``# expect: TLnnn`` and every marker must be found; a false positive or a miss fails."""

import os

import pytest

from torchlint.linter import lint_text
from torchlint.rules import ALL_RULES
from torchlint.rules.base import expected_findings

REALISTIC = os.path.join(os.path.dirname(os.path.abspath(__file__)), "realistic")
PROGRAMS = sorted(name for name in os.listdir(REALISTIC) if name.endswith(".py"))


def test_marker_syntax_is_recognised():
    assert expected_findings("x = 1\ny = f()  # expect: TL101 TL103\nz = g()  # expect: TL201, TL202\n") == {
        (2, "TL101"), (2, "TL103"), (3, "TL201"), (3, "TL202"),
    }


@pytest.mark.parametrize("name", PROGRAMS)
def test_findings_are_exactly_the_marked_ones(name):
    with open(os.path.join(REALISTIC, name), encoding="utf-8") as handle:
        text = handle.read()
    # Linted under its bare name: under tests/ the data-loading rules would treat it as test code.
    result = lint_text(text, name, ALL_RULES)
    assert result.parsed and not result.errors
    found = {(d.line, d.code) for d in result.diagnostics}
    expected = expected_findings(text)
    assert sorted(found - expected) == [], "false positives"
    assert sorted(expected - found) == [], "missed"
