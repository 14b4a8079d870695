"""Every rule's examples run as tests: valid ones are silent, invalid ones are reported on
exactly their ``# expect:`` lines and fixed to exactly their ``fixed`` text, and the docs
page's *Example* is reported while its *Use instead* is not."""

import os
import re

import pytest

from tests.conftest import ROOT
from torchlint.codes import ENGINE_CODES
from torchlint.docs import page_path, render
from torchlint.fixes import fix_text
from torchlint.linter import lint_text
from torchlint.rules import ALL_RULES
from torchlint.rules.base import Invalid, Valid

VALID = [(rule, i, example) for rule in ALL_RULES for i, example in enumerate(rule.valid)]
INVALID = [(rule, i, example) for rule in ALL_RULES for i, example in enumerate(rule.invalid)]


def _lint(rule, text):
    result = lint_text(text, "example.py", [rule])
    assert result.errors == [] and result.parsed
    return result


def _found(rule, text):
    return {(d.line, d.code) for d in _lint(rule, text).diagnostics}


@pytest.mark.parametrize("rule,index,example", VALID, ids=[f"{r.code}-valid-{i}" for r, i, _ in VALID])
def test_valid_example_is_silent(rule, index, example):
    assert _found(rule, example.source) == set()


@pytest.mark.parametrize("rule,index,example", INVALID, ids=[f"{r.code}-invalid-{i}" for r, i, _ in INVALID])
def test_invalid_example_is_reported_on_its_marked_lines_and_fixed(rule, index, example):
    assert example.expected, "an invalid example marks at least one line with # expect:"
    assert _found(rule, example.source) == example.expected
    outcome = fix_text(example.source, lambda text: _lint(rule, text), unsafe=True)
    if example.fixed is None:
        assert outcome.text == example.source, "an example without `fixed` must have no fix"
    else:
        assert outcome.text == example.fixed_source
        assert rule.code not in [d.code for d in outcome.result.diagnostics]


@pytest.mark.parametrize("rule", ALL_RULES, ids=[r.code for r in ALL_RULES])
def test_docs_example_is_reported_and_use_instead_is_not(rule):
    assert isinstance(rule.example, Invalid) and isinstance(rule.use_instead, Valid)
    assert _found(rule, rule.example.source) == rule.example.expected != set()
    assert _found(rule, rule.use_instead.source) == set()


@pytest.mark.parametrize("rule", ALL_RULES, ids=[r.code for r in ALL_RULES])
def test_rule_is_complete(rule):
    assert re.fullmatch(r"TL\d{3}", rule.code)
    assert rule.valid and rule.invalid, "every rule needs valid and invalid examples"
    assert rule.fix in ("safe", "unsafe", None)
    has_fixed = any(example.fixed is not None for example in rule.invalid)
    assert has_fixed == (rule.fix is not None), "a fixable rule shows its fix; others show none"
    for section in ("what", "why", "fix_safety"):
        assert getattr(rule, section).strip(), section


@pytest.mark.parametrize("rule", ALL_RULES, ids=[r.code for r in ALL_RULES])
def test_file_class_and_name_say_the_same_thing(rule):
    assert re.fullmatch(r"[a-z]+(-[a-z0-9]+)*", rule.name)
    assert rule.__name__ == "".join(part.capitalize() for part in rule.name.split("-"))
    slug = rule.name.replace("-", "_")
    assert rule.source_file() == f"torchlint/rules/{rule.code.lower()}_{slug}.py"
    assert os.path.isdir(os.path.join(ROOT, "torchlint", "bench", "fixtures", rule.code)), "every rule has a fixture pair"


PAGES = {rule.code: lambda rule=rule: render(rule) for rule in ALL_RULES}
PAGES.update({code: info.page for code, info in ENGINE_CODES.items()})


@pytest.mark.parametrize("code", sorted(PAGES))
def test_docs_page_in_sync(code):
    path = page_path(os.path.join(ROOT, "docs"), code)
    with open(path, encoding="utf-8") as handle:
        assert handle.read() == PAGES[code](), f"regenerate with: python tools/gen_docs.py ({path})"


def test_codes_and_names_are_unique():
    assert len({rule.code for rule in ALL_RULES}) == len({rule.name for rule in ALL_RULES}) == len(ALL_RULES)


def test_markers_are_stripped_from_the_linted_source():
    example = Invalid("""
        x = f()  # expect: TL101
        y = g()  # a comment  # expect: TL201, TL202
    """)
    assert example.source == "x = f()\ny = g()  # a comment\n"
    assert example.expected == {(1, "TL101"), (2, "TL201"), (2, "TL202")}
