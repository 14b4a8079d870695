"""Every rule's documented examples run as tests: valid ones are silent, invalid ones are
flagged, and invalid ones with a ``fixed`` text are fixed to exactly that."""

import os

import pytest

from tests.conftest import ROOT
from torchlint.docs import page_path, render
from torchlint.fixes import fix_text
from torchlint.linter import lint_text
from torchlint.rules import ALL_RULES

VALID = [(rule, i, code) for rule in ALL_RULES for i, code in enumerate(rule.valid)]
INVALID = [(rule, i, example) for rule in ALL_RULES for i, example in enumerate(rule.invalid)]


def _lint(rule, text):
    return lint_text(text, "example.py", [rule])


@pytest.mark.parametrize("rule,index,code", VALID, ids=[f"{r.code}-valid-{i}" for r, i, _ in VALID])
def test_valid_example_is_silent(rule, index, code):
    result = _lint(rule, code)
    assert result.errors == []
    assert [d.code for d in result.diagnostics] == []


@pytest.mark.parametrize("rule,index,example", INVALID, ids=[f"{r.code}-invalid-{i}" for r, i, _ in INVALID])
def test_invalid_example_is_flagged_and_fixed(rule, index, example):
    result = _lint(rule, example.code)
    assert result.errors == []
    assert rule.code in [d.code for d in result.diagnostics]
    outcome = fix_text(example.code, lambda text: _lint(rule, text), unsafe=True)
    if example.fixed is None:
        assert outcome.text == example.code, "an example without `fixed` must have no fix"
    else:
        assert outcome.text == example.fixed
        assert rule.code not in [d.code for d in outcome.result.diagnostics]


@pytest.mark.parametrize("rule", ALL_RULES, ids=[r.code for r in ALL_RULES])
def test_rule_is_complete(rule):
    assert rule.code.startswith("TL") and len(rule.code) == 5
    assert rule.valid and rule.invalid, "every rule needs valid and invalid examples"
    assert rule.fix in ("safe", "unsafe", None)
    has_fixed = any(example.fixed is not None for example in rule.invalid)
    assert has_fixed == (rule.fix is not None), "a fixable rule shows its fix; others show none"
    for section in ("what", "why", "example", "use_instead", "fix_safety", "measured"):
        assert getattr(rule, section).strip(), section


@pytest.mark.parametrize("rule", ALL_RULES, ids=[r.code for r in ALL_RULES])
def test_docs_page_in_sync(rule):
    path = page_path(os.path.join(ROOT, "docs"), rule)
    with open(path, encoding="utf-8") as handle:
        assert handle.read() == render(rule), f"regenerate with: python tools/gen_docs.py ({path})"


def test_codes_are_unique_and_sorted():
    codes = [rule.code for rule in ALL_RULES]
    assert codes == sorted(set(codes))
