"""Worker processes and the progress bar: same output whatever the job count."""

import io
import sys

from torchlint.config import Settings
from torchlint.progress import MIN_FILES, progress_bar
from torchlint.runner import Options, run

BAD = "import torch\nx = torch.zeros(3).cuda()\ny = torch.zeros(2).to('cuda')\n"


def make_tree(root, count=24):
    for i in range(count):
        package = root / f"pkg{i % 3}"
        package.mkdir(exist_ok=True)
        if i % 7 == 3:
            (package / f"m{i}.py").write_text("import torch\ndef f(:\n")
        elif i % 11 == 5:
            (package / f"m{i}.py").write_bytes(b"x = '\xff'\n")
        else:
            (package / f"m{i}.py").write_text("\n" * i + BAD)


def test_output_is_identical_for_any_job_count(tmp_path, run_cli):
    make_tree(tmp_path)
    runs = [run_cli("--no-cache", "--jobs", str(jobs), ".") for jobs in (1, 2, 3)]
    assert runs[0].returncode == 1 and runs[0].stdout.count("TL002") == 2  # the undecodable files
    assert runs[0].stdout.count("TL101") == 2 * 19 and runs[0].stdout.count("TL001") == 3
    for other in runs[1:]:
        assert (other.stdout, other.stderr, other.returncode) == (runs[0].stdout, runs[0].stderr, runs[0].returncode)
    findings = [line.split(":")[:3] for line in runs[0].stdout.splitlines() if ": TL" in line]
    keys = [(path, int(line), int(column)) for path, line, column in findings]
    assert keys == sorted(keys)


def test_fix_in_worker_processes(tmp_path, run_cli):
    for i in range(12):
        (tmp_path / f"m{i}.py").write_text(BAD)
    proc = run_cli("--no-cache", "--jobs", "2", "--fix", ".")
    assert proc.returncode == 0 and "Fixed 24 findings." in proc.stdout
    assert all('device="cuda"' in (tmp_path / f"m{i}.py").read_text() for i in range(12))


def test_outcomes_keep_the_order_of_the_files(tmp_path):
    make_tree(tmp_path)
    files = sorted(str(p) for p in tmp_path.rglob("*.py"))
    serial = run(files, Settings(), Options(), jobs=1)
    parallel = run(files, Settings(), Options(), jobs=2)
    assert [o.path for o in parallel] == files
    assert [(o.diagnostics, o.errors) for o in parallel] == [(o.diagnostics, o.errors) for o in serial]


class FakeTerminal(io.StringIO):
    def isatty(self):
        return True


def test_progress_only_on_a_terminal_and_never_for_json(monkeypatch):
    with progress_bar(MIN_FILES) as advance:
        assert advance is None  # pytest captures stderr: not a terminal
    terminal = FakeTerminal()
    monkeypatch.setattr(sys, "stderr", terminal)
    with progress_bar(MIN_FILES, enabled=False) as advance:
        assert advance is None
    with progress_bar(MIN_FILES - 1) as advance:
        assert advance is None
    with progress_bar(MIN_FILES) as advance:
        advance(MIN_FILES)
    assert f"{MIN_FILES}/{MIN_FILES}" in terminal.getvalue()


def test_piped_run_prints_no_progress(tmp_path, run_cli):
    for i in range(MIN_FILES):
        (tmp_path / f"m{i}.py").write_text("x = 1\n")
    proc = run_cli("--no-cache", ".")
    assert proc.returncode == 0 and proc.stderr == ""
