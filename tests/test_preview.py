"""Preview rules (ruff's preview mode): off unless ``--preview`` or ``preview = true``."""

import json

import pytest

from torchlint.docs import rule_page
from torchlint.rules import RULES_BY_CODE

PREVIEW_CODE = "TL302"
SOURCE = RULES_BY_CODE[PREVIEW_CODE].example.source


@pytest.fixture
def project(tmp_path):
    (tmp_path / "load.py").write_text(SOURCE)
    return tmp_path


def codes(proc):
    return {finding["code"] for finding in json.loads(proc.stdout)}


def test_the_preview_rule_is_marked():
    assert RULES_BY_CODE[PREVIEW_CODE].preview
    assert "**Preview**: off unless preview mode is on" in rule_page(PREVIEW_CODE)
    assert "**Preview**" not in rule_page("TL101")


def test_off_by_default_even_when_selected(project, run_cli):
    assert codes(run_cli("--output-format", "json", ".")) == set()
    assert codes(run_cli("--output-format", "json", "--select", PREVIEW_CODE, ".")) == set()


def test_on_with_the_flag_or_the_setting(project, run_cli):
    assert codes(run_cli("--output-format", "json", "--preview", ".")) == {PREVIEW_CODE}
    (project / "pyproject.toml").write_text("[tool.torchlint]\npreview = true\n")
    assert codes(run_cli("--output-format", "json", ".")) == {PREVIEW_CODE}
    assert codes(run_cli("--output-format", "json", "--no-preview", ".")) == set()
    assert "preview = true" in run_cli("--show-settings", ".").stdout


def test_a_bad_setting_is_one_line(project, run_cli):
    (project / "pyproject.toml").write_text('[tool.torchlint]\npreview = "yes"\n')
    proc = run_cli(".")
    assert proc.returncode == 2
    assert proc.stderr.strip().endswith("[tool.torchlint] preview: expected true or false, got 'yes'")


def test_rules_lists_preview(run_cli):
    listed = {rule["code"]: rule["preview"] for rule in json.loads(run_cli("rules", "--format", "json").stdout)}
    assert listed[PREVIEW_CODE] is True and listed["TL101"] is False


def test_flake8_follows_the_setting(project, run_flake8):
    assert PREVIEW_CODE not in run_flake8("--select", "TL", ".").stdout
    (project / "pyproject.toml").write_text("[tool.torchlint]\npreview = true\n")
    assert PREVIEW_CODE in run_flake8("--select", "TL", ".").stdout
