"""What a ruff user reaches for, through the real command line."""

import json
import os
import subprocess
import sys
import time
from xml.etree import ElementTree

import pytest

from tests.conftest import checkout_env

BAD = "import torch\nx = torch.zeros(3).cuda()\nfrom torch.utils.data import DataLoader\nloader = DataLoader(ds)\n"
FIXED = BAD.replace("torch.zeros(3).cuda()", 'torch.zeros(3, device="cuda")')
UNSAFE = "import torch\nclass Net(torch.nn.Module):\n    def forward(self, x):\n        return x * torch.ones(x.shape[0])\n"


@pytest.fixture
def bad(tmp_path):
    path = tmp_path / "bad.py"
    path.write_text(BAD)
    return path


def test_check_subcommand_is_the_bare_command(bad, run_cli):
    explicit, bare = run_cli("check", "bad.py"), run_cli("bad.py")
    assert explicit.returncode == bare.returncode == 1
    assert explicit.stdout == bare.stdout and "bad.py:2:5: TL101" in explicit.stdout
    assert run_cli("check", "--output-format", "concise", "bad.py").stdout == run_cli("--format", "concise", "bad.py").stdout


def test_rule_is_explain(run_cli):
    assert run_cli("rule", "TL101").stdout == run_cli("explain", "TL101").stdout
    for code in ("TL001", "TL002", "TL003"):
        proc = run_cli("rule", code)
        assert proc.returncode == 0 and proc.stdout.startswith(f"# {code} ")
    assert "Off by default" in run_cli("rule", "tl003").stdout


def test_quiet_prints_only_findings_and_silent_nothing(bad, run_cli):
    quiet = run_cli("-q", "bad.py")
    assert quiet.returncode == 1 and [line.split(":")[0] for line in quiet.stdout.splitlines()] == ["bad.py"] * 2
    silent = run_cli("--silent", "bad.py")
    assert (silent.returncode, silent.stdout, silent.stderr) == (1, "", "")
    clean = run_cli("-q", "--select", "TL4", "bad.py")
    assert (clean.returncode, clean.stdout) == (0, "")


def test_show_fixes(bad, run_cli):
    (bad.parent / "unsafe.py").write_text(UNSAFE)
    offered = run_cli("--show-fixes", "bad.py", "unsafe.py").stdout
    assert "Fixable with `--fix` (1 finding):\n    1 × TL101 (factory-without-device)" in offered
    assert "Fixable with `--fix --unsafe-fixes` (1 finding):\n    1 × TL102 (factory-meets-device-tensor)" in offered
    fixed = run_cli("--fix", "--show-fixes", "bad.py", "unsafe.py").stdout
    assert fixed.endswith("Fixed 1 finding:\n- bad.py:\n    1 × TL101 (factory-without-device)\n")


def test_fix_only_fixes_and_neither_reports_nor_fails_for_the_rest(bad, run_cli):
    proc = run_cli("--fix-only", "bad.py")
    assert bad.read_text() == FIXED
    assert proc.returncode == 0 and proc.stdout == "Fixed 1 finding.\n"  # TL501 is left, unreported
    assert run_cli("--fix-only", "--exit-non-zero-on-fix", "bad.py").returncode == 0  # nothing changed now
    bad.write_text(BAD)
    assert run_cli("--fix-only", "--exit-non-zero-on-fix", "bad.py").returncode == 1


def test_show_files_and_show_settings(tmp_path, run_cli):
    (tmp_path / "pkg").mkdir()
    for name in ("pkg/a.py", "pkg/b.ipynb", "pkg/skip_me.py", "notes.txt"):
        (tmp_path / name).write_text("")
    (tmp_path / "pyproject.toml").write_text(
        '[tool.torchlint]\nexclude = ["skip_me.py"]\nignore = ["TL5"]\nextend-select = ["TL003"]\n'
        'hot-functions = ["step"]\n[tool.torchlint.per-file-ignores]\n"pkg/a.py" = ["TL101"]\n')
    proc = run_cli("--show-files", ".")
    assert (proc.returncode, proc.stdout) == (0, "pkg/a.py\npkg/b.ipynb\n")
    proc = run_cli("--show-settings", "pkg/a.py")
    settings = dict(line.split(" = ", 1) for line in proc.stdout.splitlines())
    assert proc.returncode == 0
    assert json.loads(settings["configuration"]) == str(tmp_path / "pyproject.toml")
    assert json.loads(settings["ignore"]) == ["TL5"] and json.loads(settings["hot-functions"]) == ["step"]
    enabled = json.loads(settings["enabled for pkg/a.py"])
    assert "TL003" in enabled and "TL101" not in enabled and "TL501" not in enabled and "TL201" in enabled


def test_stdin_check_and_fix(tmp_path, run_cli):
    (tmp_path / "pyproject.toml").write_text('[tool.torchlint.per-file-ignores]\n"legacy/*" = ["TL501"]\n')
    proc = run_cli("-", "--stdin-filename", "src/train.py", input=BAD)
    assert proc.returncode == 1
    assert [line.split(": ")[0] for line in proc.stdout.splitlines()[:2]] == ["src/train.py:2:5", "src/train.py:4:10"]
    ignored = run_cli("--stdin-filename", "legacy/train.py", "--format", "json", input=BAD)  # no path: stdin
    assert [item["code"] for item in json.loads(ignored.stdout)] == ["TL101"]
    assert json.loads(ignored.stdout)[0]["path"] == "legacy/train.py"
    fixed = run_cli("-", "--fix", "--stdin-filename", "train.py", input=BAD)
    assert fixed.stdout == FIXED  # the fixed source, and nothing else, on stdout
    assert "train.py:4:10: TL501" in fixed.stderr and fixed.returncode == 1
    untouched = run_cli("-", "--fix", input="x = 1\n")
    assert (untouched.stdout, untouched.returncode) == ("x = 1\n", 0)
    assert run_cli("-", "bad.py").returncode == 2


def test_stdin_notebook(run_cli):
    cell = {"cell_type": "code", "metadata": {}, "outputs": [], "execution_count": None, "source": BAD}
    document = json.dumps({"cells": [cell], "metadata": {}, "nbformat": 4, "nbformat_minor": 5})
    proc = run_cli("-", "--stdin-filename", "nb.ipynb", input=document)
    assert proc.stdout.splitlines()[0].startswith("nb.ipynb:cell 1:2:5: TL101 ")


def test_add_noqa_suppresses_every_finding_in_one_pass(tmp_path, bad, run_cli):
    (tmp_path / "other.py").write_text(
        "import torch\nx = torch.zeros(3).cuda()  # noqa: E501\ns = f(torch.zeros(3).cuda(), '''\n'''  )\n")
    proc = run_cli("--add-noqa", ".")
    assert proc.returncode == 0 and proc.stderr == "Added 3 noqa directives.\n"
    assert bad.read_text().splitlines()[1] == "x = torch.zeros(3).cuda()  # noqa: TL101"
    assert bad.read_text().splitlines()[3] == "loader = DataLoader(ds)  # noqa: TL501"
    other = (tmp_path / "other.py").read_text().splitlines()
    assert other[1] == "x = torch.zeros(3).cuda()  # noqa: E501, TL101"
    assert other[2] == "s = f(torch.zeros(3).cuda(), '''"  # a comment there would land in the string
    after = run_cli("--format", "json", ".")
    assert [(item["path"], item["line"]) for item in json.loads(after.stdout)] == [("other.py", 3)]
    assert run_cli("--add-noqa", ".").stderr == "Added 0 noqa directives.\n"


def test_output_formats_json_lines_junit_gitlab(bad, run_cli):
    lines = run_cli("--output-format", "json-lines", "bad.py").stdout.splitlines()
    assert [json.loads(line)["code"] for line in lines] == ["TL101", "TL501"]
    junit = ElementTree.fromstring(run_cli("--output-format", "junit", "bad.py").stdout)
    assert junit.tag == "testsuites" and junit.get("failures") == "2"
    [suite] = junit
    assert suite.get("name") == "bad.py"
    assert [(case.get("name"), case.get("line")) for case in suite] == [("torchlint.TL101", "2"), ("torchlint.TL501", "4")]
    assert suite[0][0].tag == "failure" and "factory" in suite[0][0].get("message")
    clean = ElementTree.fromstring(run_cli("--output-format", "junit", "--select", "TL4", "bad.py").stdout)
    assert clean.get("failures") == "0" and clean[0][0].get("name") == "No findings"
    issues = json.loads(run_cli("--output-format", "gitlab", "bad.py").stdout)
    assert [(i["check_name"], i["location"]["path"], i["location"]["lines"]["begin"]) for i in issues] == [
        ("TL101", "bad.py", 2), ("TL501", "bad.py", 4)]
    assert len({i["fingerprint"] for i in issues}) == 2 and all(i["severity"] == "major" for i in issues)
    bad.write_text("\n\n" + BAD)  # the findings move down: their fingerprints stay
    again = json.loads(run_cli("--output-format", "gitlab", "bad.py").stdout)
    assert [i["fingerprint"] for i in again] == [i["fingerprint"] for i in issues]


def test_watch_checks_again_on_change(tmp_path):
    pytest.importorskip("watchfiles")
    (tmp_path / "train.py").write_text("import torch\n")
    proc = subprocess.Popen(
        [sys.executable, "-m", "torchlint", "--watch", "--no-cache", "."], cwd=tmp_path, env=checkout_env(),
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
    )
    try:
        assert _read_until(proc, "Watching for file changes.").count("All checks passed!") == 1
        time.sleep(0.5)  # let the watcher start before the change it must see
        (tmp_path / "train.py").write_text(BAD)
        output = _read_until(proc, "Watching for file changes.")
        assert "File change detected" in output and "train.py:2:5: TL101" in output
    finally:
        proc.terminate()
        proc.wait(timeout=10)


def _read_until(proc, marker, timeout=30):
    deadline, seen = time.monotonic() + timeout, []
    while time.monotonic() < deadline:
        line = proc.stdout.readline()
        seen.append(line)
        if marker in line:
            return "".join(seen)
    raise AssertionError(f"no {marker!r} within {timeout} s: {''.join(seen)!r}")


def test_conflicting_flags_are_usage_errors(bad, run_cli):
    for flags in (["--add-noqa", "--fix"], ["--diff", "--add-noqa"], ["--watch", "--fix"], ["--watch", "-"]):
        proc = run_cli(*flags, "bad.py") if "-" not in flags else run_cli(*flags)
        assert proc.returncode == 2 and proc.stderr.startswith("torchlint: error: "), flags
    assert bad.read_text() == BAD


def test_readme_lists_every_output_format():
    from torchlint.reporters import REPORTERS

    readme = open(os.path.join(os.path.dirname(os.path.dirname(__file__)), "README.md"), encoding="utf-8").read()
    assert all(f"`{name}`" in readme or f"|{name}" in readme or f"{name}|" in readme for name in REPORTERS)
