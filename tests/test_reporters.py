"""``--format sarif`` (checked against the official schema), ``--format github``, ``--output-file``."""

import json
import os

import pytest

from tests.conftest import ROOT
from torchlint.diagnostics import Diagnostic
from torchlint.reporters.github import annotation
from torchlint.rules import ALL_RULES

# A typed model generated from the OASIS SARIF 2.1.0 schema (pinned in the test extra);
# every object forbids properties the schema does not define.
sarif_model = pytest.importorskip("pydantic_sarif.model", reason="pydantic-sarif needs Python 3.10")
BAD = ("import torch\nx = torch.zeros(3).cuda()\n"
       "from torch.utils.data import DataLoader\nloader = DataLoader(ds)\n")


def sarif_of(tmp_path, run_cli, *paths):
    proc = run_cli("--format", "sarif", "--output-file", "out.sarif", *paths)
    assert proc.returncode == 1, proc.stderr
    assert proc.stdout == ""  # the report went to the file
    log = json.loads((tmp_path / "out.sarif").read_text())
    validate_sarif(log)
    return log


def validate_sarif(log):
    sarif_model.StaticAnalysisResultsFormatSarifVersion210JsonSchema.model_validate(log)


def test_the_sarif_model_rejects_what_the_schema_rejects(tmp_path, run_cli):
    (tmp_path / "bad.py").write_text(BAD)
    log = sarif_of(tmp_path, run_cli, "bad.py")
    from pydantic import ValidationError

    for break_it in (
        lambda broken: broken["runs"][0]["results"][0].update(severity="high"),  # not a SARIF property
        lambda broken: broken["runs"][0]["results"][0]["locations"][0]["physicalLocation"]["region"]
        .update(startLine=0),  # lines are 1-based
        lambda broken: broken.update(version="2.0.0"),
    ):
        broken = json.loads(json.dumps(log))
        break_it(broken)
        with pytest.raises(ValidationError):
            validate_sarif(broken)


def test_sarif_is_valid_and_complete(tmp_path, run_cli):
    (tmp_path / "pkg").mkdir()
    (tmp_path / "pkg" / "bad file.py").write_text(BAD)
    (tmp_path / "broken.py").write_text("def f(:\n")
    [run] = sarif_of(tmp_path, run_cli, "pkg", "broken.py")["runs"]
    driver = run["tool"]["driver"]
    assert driver["name"] == "torchlint" and driver["version"] and driver["informationUri"]
    rules = {rule["id"]: rule for rule in driver["rules"]}
    for rule in ALL_RULES:
        descriptor = rules[rule.code]
        assert descriptor["name"] == rule.name
        assert descriptor["shortDescription"]["text"] == rule.message
        assert descriptor["fullDescription"]["text"] == rule.what
        assert descriptor["helpUri"].endswith(f"/docs/rules/{rule.code}.md")
        assert os.path.isfile(os.path.join(ROOT, "docs", "rules", f"{rule.code}.md"))
    results = {r["ruleId"]: r for r in run["results"]}
    assert set(results) == {"TL001", "TL101", "TL501"}
    for result in run["results"]:
        assert driver["rules"][result["ruleIndex"]]["id"] == result["ruleId"]
    assert results["TL001"]["level"] == "error" and results["TL101"]["level"] == "warning"
    location = results["TL101"]["locations"][0]["physicalLocation"]
    assert location["artifactLocation"] == {"uri": "pkg/bad%20file.py", "uriBaseId": "%SRCROOT%"}
    assert location["region"] == {"startLine": 2, "startColumn": 5, "endLine": 2, "endColumn": 19}
    [fix] = results["TL101"]["fixes"]
    [change] = fix["artifactChanges"]
    assert change["replacements"] == [{
        "deletedRegion": {"startLine": 2, "startColumn": 5, "endLine": 2, "endColumn": 26},
        "insertedContent": {"text": 'torch.zeros(3, device="cuda")'},
    }]
    assert "fixes" not in results["TL501"]


def test_sarif_with_no_findings_is_valid(tmp_path, run_cli):
    (tmp_path / "ok.py").write_text("import torch\n")
    proc = run_cli("--format", "sarif", "ok.py")
    assert proc.returncode == 0
    assert json.loads(proc.stdout)["runs"][0]["results"] == []


def test_github_annotations(tmp_path, run_cli):
    (tmp_path / "bad.py").write_text(BAD)
    proc = run_cli("--format", "github", "bad.py")
    assert proc.returncode == 1
    assert proc.stdout.splitlines()[0] == (
        "::warning file=bad.py,line=2,col=5,endLine=2,endColumn=19,title=TL101::"
        "tensor created on the CPU and then moved to a device; pass `device=` to the factory")


def test_github_escaping():
    d = Diagnostic("a,b:c%.py", 3, 1, "TL101", "100% of it\nagain: yes, really", 3, 4)
    assert annotation(d) == (
        "::warning file=a%2Cb%3Ac%25.py,line=3,col=1,endLine=3,endColumn=4,title=TL101::"
        "100%25 of it%0Aagain: yes, really")


def test_output_file_for_every_format(tmp_path, run_cli):
    (tmp_path / "bad.py").write_text(BAD)
    for output_format in ("text", "concise", "json", "github", "sarif"):
        target = tmp_path / f"report.{output_format}"
        proc = run_cli("--format", output_format, "--output-file", target, "bad.py")
        assert proc.returncode == 1
        assert "TL101" in target.read_text() and "TL101" not in proc.stdout
        assert "\x1b[" not in target.read_text()


def test_unwritable_output_file_is_an_error(tmp_path, run_cli):
    (tmp_path / "bad.py").write_text(BAD)
    proc = run_cli("--output-file", tmp_path / "missing" / "out.txt", "bad.py")
    assert proc.returncode == 2
    assert "cannot write the report" in proc.stderr and "Traceback" not in proc.stderr


def test_exit_non_zero_on_fix(tmp_path, run_cli):
    path = tmp_path / "bad.py"
    path.write_text("import torch\nx = torch.zeros(3).cuda()\n")
    assert run_cli("--fix", "--exit-non-zero-on-fix", "bad.py").returncode == 1
    assert "device=" in path.read_text()
    assert run_cli("--fix", "--exit-non-zero-on-fix", "bad.py").returncode == 0  # nothing left to fix


def _finding(tmp_path, line, code, applicability):
    from torchlint.diagnostics import Fix

    path = tmp_path / "m.py"
    path.write_text("x = ':100:'\n" * 120)
    return Diagnostic(str(path), line, 1, code, "msg", line, 4, fix=Fix(applicability, ()))


def test_terminal_text_renders_no_emoji_and_marks_only_safe_fixes(tmp_path):
    import io
    import re

    from torchlint.reporters.text import report_text

    stream = io.StringIO()
    report_text([_finding(tmp_path, 100, "TL101", "safe"), _finding(tmp_path, 101, "TL102", "unsafe")], stream, True)
    plain = re.sub(r"\x1b\[[0-9;]*m", "", stream.getvalue())
    assert "💯" not in plain
    assert "m.py:100:1: TL101 [*] msg" in plain and "m.py:101:1: TL102 msg" in plain
    assert "x = ':100:'" in plain


def test_statistics_mark_only_safe_fixes(tmp_path):
    import io

    from torchlint.reporters.summary import report_statistics

    stream = io.StringIO()
    report_statistics([_finding(tmp_path, 1, "TL101", "safe"), _finding(tmp_path, 2, "TL102", "unsafe")], stream, False)
    assert [line.split() for line in stream.getvalue().splitlines()] == [
        ["1", "TL101", "[*]", "factory-without-device"], ["1", "TL102", "factory-meets-device-tensor"],
    ]
