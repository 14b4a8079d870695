"""``--fix`` never loses data: each promise, checked."""

import os
import stat

import libcst as cst

from torchlint import runner
from torchlint.config import Settings
from torchlint.rewrite import Replacement
from torchlint.rules.base import Rule
from torchlint.runner import FIX, Options, process_file

BAD = "import torch\nx = torch.zeros(3).cuda()\n"
FIXED = 'import torch\nx = torch.zeros(3, device="cuda")\n'


def fix(path):
    return process_file(str(path), Settings(), Options(FIX))


def test_keeps_latin1_with_coding_cookie(tmp_path, run_cli):
    path = tmp_path / "latin.py"
    path.write_bytes(b"# -*- coding: latin-1 -*-\nimport torch\nname = '\xe9t\xe9'\nx = torch.zeros(3).cuda()\n")
    assert "latin.py:4:5: TL101" in run_cli("latin.py").stdout
    assert run_cli("--fix", "latin.py").returncode == 0
    assert path.read_bytes() == (b"# -*- coding: latin-1 -*-\nimport torch\nname = '\xe9t\xe9'\n"
                                 b'x = torch.zeros(3, device="cuda")\n')


def test_keeps_utf8_bom(tmp_path, run_cli):
    path = tmp_path / "bom.py"
    path.write_bytes(b"\xef\xbb\xbf" + BAD.encode())
    assert "bom.py:2:5: TL101" in run_cli("bom.py").stdout
    assert run_cli("--fix", "bom.py").returncode == 0
    assert path.read_bytes() == b"\xef\xbb\xbf" + FIXED.encode()


def test_keeps_crlf(tmp_path, run_cli):
    path = tmp_path / "crlf.py"
    path.write_bytes(BAD.replace("\n", "\r\n").encode())
    assert run_cli("--fix", "crlf.py").returncode == 0
    assert path.read_bytes() == FIXED.replace("\n", "\r\n").encode()


def test_atomic_write_keeps_mode_and_leaves_no_temporary_file(tmp_path):
    path = tmp_path / "script.py"
    path.write_text(BAD)
    path.chmod(0o751)
    before = os.stat(path).st_ino
    assert fix(path).fixed == 1
    assert stat.S_IMODE(os.stat(path).st_mode) == 0o751
    assert os.stat(path).st_ino != before  # replaced by rename, not rewritten in place
    assert sorted(os.listdir(tmp_path)) == ["script.py"]


def test_failed_write_keeps_the_original(tmp_path, monkeypatch):
    path = tmp_path / "a.py"
    path.write_text(BAD)

    def failing_replace(src, dst):
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(os, "replace", failing_replace)
    outcome = fix(path)
    assert outcome.fixed == 0
    assert outcome.errors == [f"{path}: cannot write the fix: [Errno 28] No space left on device"]
    assert path.read_text() == BAD and sorted(os.listdir(tmp_path)) == ["a.py"]


class BreaksTheFile(Rule):
    """A deliberately broken fix: replaces every ``cuda()`` call with unbalanced text."""

    code, name, message, fix = "TL999", "test-only", "test", "safe"

    def visit_Call(self, node: cst.Call) -> None:
        if isinstance(node.func, cst.Attribute) and node.func.attr.value == "cuda":
            self.report(node, replacements=(Replacement(node, "torch.randn(3"),))


def test_refuses_a_fix_that_does_not_parse(tmp_path, monkeypatch):
    path = tmp_path / "a.py"
    path.write_text(BAD)
    monkeypatch.setattr(runner, "rules_for", lambda settings, path=None: [BreaksTheFile])
    outcome = fix(path)
    assert outcome.fixed == 0 and [d.code for d in outcome.diagnostics] == ["TL999"]
    assert outcome.errors == [f"{path}: fixes for TL999 would make the file unparsable; not applied"]
    assert path.read_text() == BAD


def test_second_fix_is_a_no_op(tmp_path):
    path = tmp_path / "a.py"
    path.write_text(BAD + "y = torch.zeros(2).to('cuda')\n")
    assert fix(path).fixed == 2
    fixed = path.read_bytes()
    inode = os.stat(path).st_ino
    outcome = fix(path)
    assert outcome.fixed == 0 and outcome.errors == []
    assert path.read_bytes() == fixed and os.stat(path).st_ino == inode  # not even rewritten


def test_file_changed_during_the_run_is_not_overwritten(tmp_path, monkeypatch):
    path = tmp_path / "a.py"
    path.write_text(BAD)
    edited = BAD + "# saved by the editor meanwhile\n"
    real_fix_text = runner.fix_text

    def fix_while_someone_edits(*args, **kwargs):
        result = real_fix_text(*args, **kwargs)
        path.write_text(edited)
        return result

    monkeypatch.setattr(runner, "fix_text", fix_while_someone_edits)
    outcome = fix(path)
    assert outcome.fixed == 0
    assert outcome.errors == [f"{path}: changed on disk while torchlint ran; not fixed"]
    assert path.read_text() == edited


def test_fix_in_one_file_reaches_the_files_it_informs(tmp_path, run_cli):
    """Pinning train.py's loader lets engine.py's move of its batches stop blocking, in the
    same run: news a fix changes replaces what the other file was told before."""
    (tmp_path / "engine.py").write_text(
        "def train_one_epoch(model, optimizer, data_loader, device):\n"
        "    for images, targets in data_loader:\n"
        "        images = images.to(device)\n"
        "        model(images, targets).backward()\n"
        "        optimizer.step()\n"
    )
    (tmp_path / "train.py").write_text(
        "import torch\n"
        "from torch.utils.data import DataLoader\n"
        "from engine import train_one_epoch\n\n"
        "def main(dataset, model, optimizer, epochs):\n"
        "    loader = DataLoader(dataset, batch_size=32, num_workers=4, persistent_workers=True)\n"
        "    for _ in range(epochs):\n"
        "        train_one_epoch(model, optimizer, loader, torch.device('cuda'))\n"
    )
    assert "Fixed 2 findings" in run_cli("--fix", "--unsafe-fixes", "--no-cache", ".").stdout
    assert "pin_memory=True" in (tmp_path / "train.py").read_text()
    assert "images.to(device, non_blocking=True)" in (tmp_path / "engine.py").read_text()
    assert "Fixed" not in run_cli("--fix", "--unsafe-fixes", "--no-cache", ".").stdout
