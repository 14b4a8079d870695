"""The command line, through a real subprocess."""

import json

BAD = "import torch\nx = torch.zeros(3).cuda()\n"
FIXED = 'import torch\nx = torch.zeros(3, device="cuda")\n'


def write(tmp_path, name, text):
    path = tmp_path / name
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    return path


def test_clean_file_exits_zero(tmp_path, run_cli):
    write(tmp_path, "ok.py", "import torch\nx = torch.zeros(3, device='cuda')\n")
    proc = run_cli(".")
    assert proc.returncode == 0, proc.stderr
    assert "All checks passed" in proc.stdout


def test_findings_text_output_and_exit_one(tmp_path, run_cli):
    write(tmp_path, "bad.py", BAD)
    proc = run_cli("bad.py")
    assert proc.returncode == 1
    assert proc.stdout.splitlines()[0].startswith("bad.py:2:5: TL101 ")
    assert "\x1b[" not in proc.stdout  # piped: no colour


def test_exit_zero(tmp_path, run_cli):
    write(tmp_path, "bad.py", BAD)
    assert run_cli("--exit-zero", "bad.py").returncode == 0


def test_json_output(tmp_path, run_cli):
    write(tmp_path, "bad.py", BAD)
    proc = run_cli("--format", "json", "bad.py")
    [item] = json.loads(proc.stdout)
    assert item["code"] == "TL101"
    assert (item["path"], item["line"], item["column"]) == ("bad.py", 2, 5)
    assert (item["end_line"], item["end_column"]) == (2, 19)
    assert item["fix"]["applicability"] == "safe"
    assert item["fix"]["edits"][0]["content"] == 'torch.zeros(3, device="cuda")'


def test_concise_and_statistics(tmp_path, run_cli):
    write(tmp_path, "bad.py", BAD + "y = torch.zeros(2).to(device)\n")
    lines = run_cli("--format", "concise", "bad.py").stdout.splitlines()
    assert lines[:2] == [
        "bad.py:2:5: TL101 tensor created on the CPU and then moved to a device; pass `device=` to the factory",
        "bad.py:3:5: TL101 tensor created on the CPU and then moved to a device; pass `device=` to the factory",
    ]
    proc = run_cli("--statistics", "bad.py")  # only the table, as ruff prints it
    assert [line.split() for line in proc.stdout.splitlines()] == [["2", "TL101", "[*]", "factory-without-device"]]
    assert proc.returncode == 1
    rows = json.loads(run_cli("--statistics", "--output-format", "json", "bad.py").stdout)
    assert rows == [{"code": "TL101", "name": "factory-without-device", "count": 2, "fixable": True}]


def test_fix_rewrites_and_reports_rest(tmp_path, run_cli):
    path = write(tmp_path, "bad.py", BAD + "from torch.utils.data import DataLoader\nDataLoader(ds)\n")
    proc = run_cli("--fix", "bad.py")
    assert path.read_text() == FIXED + "from torch.utils.data import DataLoader\nDataLoader(ds)\n"
    assert proc.returncode == 1  # TL501 has no fix and remains
    assert "TL501" in proc.stdout and "TL101" not in proc.stdout
    assert "Fixed 1 finding" in proc.stdout
    again = run_cli("--fix", "bad.py")
    assert "Fixed" not in again.stdout


def test_fix_everything_exits_zero(tmp_path, run_cli):
    path = write(tmp_path, "bad.py", BAD)
    assert run_cli("--fix", "bad.py").returncode == 0
    assert path.read_text() == FIXED


def test_diff_writes_nothing(tmp_path, run_cli):
    path = write(tmp_path, "bad.py", BAD)
    proc = run_cli("--diff", "bad.py")
    assert proc.returncode == 1  # there is a diff
    assert proc.stdout.splitlines()[-1] == '+x = torch.zeros(3, device="cuda")'
    assert proc.stderr == "Would fix 1 finding.\n"
    assert path.read_text() == BAD


def test_diff_without_fixes_exits_zero_and_prints_no_findings(tmp_path, run_cli):
    write(tmp_path, "loader.py", "from torch.utils.data import DataLoader\nDataLoader(ds)\n")  # TL501: no fix
    proc = run_cli("--diff", "loader.py")
    assert (proc.returncode, proc.stdout, proc.stderr) == (0, "", "")


def test_select_and_ignore(tmp_path, run_cli):
    write(tmp_path, "bad.py", BAD + "from torch.utils.data import DataLoader\nDataLoader(ds)\n")
    codes = lambda proc: {item["code"] for item in json.loads(proc.stdout)}
    assert codes(run_cli("--format", "json", "--select", "TL5", "bad.py")) == {"TL501"}
    assert codes(run_cli("--format", "json", "--ignore", "TL101", "bad.py")) == {"TL501"}
    assert codes(run_cli("--format", "json", "--select", "TL1", "--extend-select", "TL501", "bad.py")) == {"TL101", "TL501"}


def test_unknown_selector_is_usage_error(tmp_path, run_cli):
    write(tmp_path, "bad.py", BAD)
    proc = run_cli("--select", "TL999", "bad.py")
    assert proc.returncode == 2
    assert "TL999" in proc.stderr and "Traceback" not in proc.stderr


def test_noqa(tmp_path, run_cli):
    write(tmp_path, "a.py", "import torch\n"
          "a = torch.zeros(3).cuda()  # noqa: TL101\n"
          "b = torch.zeros(3).cuda()  # noqa\n"
          "c = torch.zeros(3).cuda()  # noqa: TL501\n"
          "d = torch.zeros(3).cuda()  # NOQA:TL501,TL101 because reasons\n")
    proc = run_cli("--format", "json", "a.py")
    assert [item["line"] for item in json.loads(proc.stdout)] == [4]


def test_noqa_on_multiline_statement(tmp_path, run_cli):
    write(tmp_path, "a.py", "from torch.utils.data import DataLoader\n"
          "loader = DataLoader(  # noqa: TL501\n    ds,\n    batch_size=4,\n)\n")
    assert run_cli("a.py").returncode == 0


def test_syntax_error_is_a_diagnostic_and_others_still_linted(tmp_path, run_cli):
    write(tmp_path, "broken.py", "import torch\ndef f(:\n")
    write(tmp_path, "plain_broken.py", "x = (\n")
    write(tmp_path, "bad.py", BAD)
    proc = run_cli("--format", "json", ".")
    items = json.loads(proc.stdout)
    assert {(i["path"], i["code"]) for i in items} == {
        ("bad.py", "TL101"), ("broken.py", "TL001"), ("plain_broken.py", "TL001")}
    assert proc.returncode == 1
    assert "Traceback" not in proc.stderr


def test_missing_path_and_undecodable_file_are_findings(tmp_path, run_cli):
    """Like ruff's E902: every output format shows the file that was skipped."""
    write(tmp_path, "bad.py", BAD)
    (tmp_path / "latin.py").write_bytes(b"x = '\xff\xfe'\n")
    proc = run_cli("bad.py", "nope.py", "latin.py")
    assert proc.returncode == 1 and proc.stderr == ""
    lines = proc.stdout.splitlines()
    assert "nope.py:1:1: TL002 no such file or directory" in lines
    assert any(line.startswith("latin.py:1:1: TL002 cannot decode") for line in lines)
    assert "bad.py:2:5: TL101" in proc.stdout
    sarif = json.loads(run_cli("--output-format", "sarif", "nope.py").stdout)
    [result] = sarif["runs"][0]["results"]
    assert (result["ruleId"], result["level"]) == ("TL002", "error")
    assert run_cli("--exit-zero", "nope.py").returncode == 0
    assert run_cli("--ignore", "TL002", "nope.py").returncode == 1  # like a syntax error, never ignored


def test_aliases_and_kwargs(tmp_path, run_cli):
    write(tmp_path, "a.py", "import torch as T\nfrom torch import randperm\n"
          "from torch.utils.data import DataLoader as DL\n"
          "a = T.zeros(2).to('cuda')\nb = randperm(5).cuda()\n"
          "c = DL(ds)\nd = DL(ds, **cfg)\ne = T.zeros(2, **kw).cuda()\n")
    items = json.loads(run_cli("--format", "json", "a.py").stdout)
    assert [(i["line"], i["code"]) for i in items] == [(4, "TL101"), (5, "TL101"), (6, "TL501")]


def test_directory_discovery_skips_virtualenvs(tmp_path, run_cli):
    write(tmp_path, "pkg/mod.py", BAD)
    write(tmp_path, ".venv/lib/x.py", BAD)
    write(tmp_path, "build/x.py", BAD)
    write(tmp_path, "notes.txt", BAD)
    items = json.loads(run_cli("--format", "json").stdout)
    assert [i["path"] for i in items] == ["pkg/mod.py"]


def test_rules_and_explain(run_cli):
    rows = json.loads(run_cli("rules", "--format", "json").stdout)
    assert [row["code"] for row in rows[:4]] == ["TL001", "TL002", "TL003", "TL101"]
    assert {"code": "TL101", "name": "factory-without-device",
            "summary": rows[3]["summary"], "fix": "safe", "preview": False} == rows[3]
    assert any(row["code"] == "TL501" and row["fix"] is None for row in rows)
    text = run_cli("explain", "tl101").stdout
    assert text.startswith("# TL101 factory-without-device")
    assert "## Why is it slow" in text
    assert run_cli("explain", "TL000").returncode == 2
    listing = run_cli("rules").stdout.splitlines()
    assert [line.split()[0] for line in listing] == [row["code"] for row in rows]
    assert listing[3].split()[:4] == ["TL101", "factory-without-device", "safe", "fix"]
    assert not any(line.endswith(" ") for line in listing)


def test_version(run_cli):
    proc = run_cli("--version")
    assert proc.returncode == 0 and proc.stdout.startswith("torchlint ")


def test_reader_closing_the_pipe_early_is_no_error(tmp_path):
    import subprocess
    import sys

    from tests.conftest import checkout_env

    # Far more output than a pipe buffers, so the writer meets the closed pipe.
    write(tmp_path, "many.py", "import torch\n" + "x = torch.zeros(3).cuda()\n" * 3000)
    proc = subprocess.Popen(
        [sys.executable, "-m", "torchlint", "--format", "json", "--no-cache", "many.py"],
        cwd=tmp_path, stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=checkout_env(),
    )
    assert proc.stdout.readline() == b"[\n"
    proc.stdout.close()
    stderr = proc.stderr.read().decode()
    assert proc.wait() == 1
    assert stderr == ""


def test_text_extras_do_not_corrupt_a_json_document(tmp_path, run_cli):
    write(tmp_path, "bad.py", BAD)
    proc = run_cli("--format", "json", "--statistics", "--output-file", "out.json", "bad.py")
    assert proc.returncode == 1 and proc.stdout == ""
    assert json.loads((tmp_path / "out.json").read_text())[0]["code"] == "TL101"
    proc = run_cli("--format", "json", "--diff", "bad.py")  # the diff alone: no findings, no summary
    assert proc.stdout.startswith("--- bad.py\n") and "[" not in proc.stdout
    proc = run_cli("--format", "sarif", "--statistics", "bad.py")
    assert proc.returncode == 2 and proc.stdout == ""
    assert proc.stderr == "torchlint: error: --statistics prints a table or JSON; not --output-format sarif\n"


def test_no_python_files_is_a_warning(tmp_path, run_cli):
    (tmp_path / "empty").mkdir()
    proc = run_cli("empty")
    assert proc.returncode == 0
    assert proc.stderr == "torchlint: warning: no Python files found under the given paths\n"


def test_fix_counts_in_the_summary_agree_with_what_is_fixed(tmp_path, run_cli):
    """One finding, one fix: pinning a loader and its two non-blocking moves is one fix."""
    write(tmp_path, "train.py",
          "from torch.utils.data import DataLoader\nloader = DataLoader(ds, num_workers=4)\n"
          "for x, y in loader:\n    x, y = x.cuda(), y.cuda()\n")
    check = run_cli("--select", "TL503", "train.py").stdout
    assert "Found 1 finding." in check and "1 more fixable with `--fix --unsafe-fixes`." in check
    fixed = run_cli("--select", "TL503", "--fix", "--unsafe-fixes", "train.py").stdout
    assert "Fixed 1 finding." in fixed and "All checks passed!" in fixed
    assert "x.cuda(non_blocking=True), y.cuda(non_blocking=True)" in (tmp_path / "train.py").read_text()
