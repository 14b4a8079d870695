"""The flake8 plugin, through the real ``flake8``: selection, noqa, syntax errors."""

import re
import subprocess
import sys

from tests.conftest import checkout_env
from torchlint import flake8_plugin
from torchlint.rules.base import Rule

BAD = "import torch\nx = torch.zeros(3).cuda()\n"
LOADER = "from torch.utils.data import DataLoader\nloader = DataLoader(ds)\n"
FLAKE8_LINE = re.compile(r"^(?P<path>[^:]+):(?P<line>\d+):(?P<col>\d+): (?P<code>[A-Z]+\d+) ")


def findings(proc):
    return [(m["path"], int(m["line"]), int(m["col"]), m["code"])
            for m in map(FLAKE8_LINE.match, proc.stdout.splitlines()) if m]


def test_select_reports_torchlint_codes_with_flake8_columns(tmp_path, run_flake8):
    (tmp_path / "bad.py").write_text(BAD)
    proc = run_flake8("--select", "TL", "bad.py")
    assert proc.returncode == 1, proc.stderr
    # the plugin yields a 0-based column; flake8 prints it 1-based, as torchlint does
    assert findings(proc) == [("bad.py", 2, 5, "TL101")]
    assert "tensor created on the CPU" in proc.stdout


def test_flake8_noqa_applies(tmp_path, run_flake8):
    (tmp_path / "a.py").write_text(
        "import torch\n"
        "a = torch.zeros(3).cuda()  # noqa: TL101\n"
        "b = torch.zeros(3).cuda()  # noqa\n"
        "c = torch.zeros(3).cuda()  # noqa: E501\n"
    )
    assert [f[1] for f in findings(run_flake8("--select", "TL", "a.py"))] == [4]
    # --disable-noqa proves flake8, not the plugin, did the suppressing
    assert [f[1] for f in findings(run_flake8("--select", "TL", "--disable-noqa", "a.py"))] == [2, 3, 4]


def test_extend_select_and_per_file_ignores(tmp_path, run_flake8):
    (tmp_path / "bad.py").write_text(BAD + LOADER)
    (tmp_path / "tests").mkdir()
    (tmp_path / "tests" / "t.py").write_text(BAD)
    proc = run_flake8("--select", "E9", "--extend-select", "TL501", "bad.py", "tests/t.py")
    assert findings(proc) == [("bad.py", 4, 10, "TL501")]
    proc = run_flake8("--select", "TL", "--per-file-ignores", "tests/*:TL101", "bad.py", "tests/t.py")
    assert [(f[0], f[3]) for f in findings(proc)] == [("bad.py", "TL101"), ("bad.py", "TL501")]


def test_config_file_selection(tmp_path, run_flake8):
    (tmp_path / "bad.py").write_text(BAD + LOADER)
    (tmp_path / "setup.cfg").write_text("[flake8]\nselect = TL\nper-file-ignores =\n    bad.py: TL5\n")
    proc = run_flake8("bad.py", isolated=False)
    assert [f[3] for f in findings(proc)] == ["TL101"]


def test_syntax_error_is_left_to_flake8(tmp_path, run_flake8):
    (tmp_path / "broken.py").write_text("import torch\nx = torch.zeros(3).cuda(\n")
    proc = run_flake8("--select", "TL,E9", "broken.py")
    assert [f[3] for f in findings(proc)] == ["E999"]
    assert "TL001" not in proc.stdout and "Traceback" not in proc.stderr


class _SumInHotPath(Rule):
    """A test rule that counts only on hot paths."""

    code, name, message, triggers = "TL999", "test-hot-sum", "sum in a hot path", ("sum",)

    def visit_Call(self, node):
        self.report(node, hot_when=lambda scope: True)


def test_hot_functions_come_from_pyproject(tmp_path, monkeypatch):
    """Hot-path rules see the same ``[tool.torchlint] hot-functions`` as the CLI."""
    monkeypatch.setattr(flake8_plugin, "ALL_RULES", (_SumInHotPath,))
    path = tmp_path / "a.py"
    path.write_text("def train_one_batch(x):\n    return sum(x)\n")

    def run():
        flake8_plugin._settings.cache_clear()
        plugin = flake8_plugin.Plugin(None, path.read_text().splitlines(True), str(path))
        return [(line, col, text.split()[0]) for line, col, text, _ in plugin.run()]

    assert run() == []
    (tmp_path / "pyproject.toml").write_text('[tool.torchlint]\nhot-functions = ["train_one_batch"]\n')
    assert run() == [(2, 11, "TL999")]


def test_bad_torchlint_config_is_one_line(tmp_path, run_flake8):
    (tmp_path / "pyproject.toml").write_text("[tool.torchlint]\nbogus = 1\n")
    (tmp_path / "a.py").write_text(BAD)
    (tmp_path / "b.py").write_text(BAD)
    proc = run_flake8("--select", "TL", "a.py", "b.py")
    errors = proc.stderr.splitlines()  # once per flake8 worker process
    assert errors and all(e.startswith("torchlint: error: ") and e.endswith("unknown key 'bogus'") for e in errors)
    assert [f[0] for f in findings(proc)] == ["a.py", "b.py"]


def test_importing_torchlint_does_not_need_flake8(tmp_path):
    (tmp_path / "bad.py").write_text(BAD)
    code = ("import sys; sys.modules['flake8'] = None\n"  # any `import flake8` now fails
            "import torchlint.flake8_plugin, torchlint.cli\n"
            "sys.exit(torchlint.cli.main(['bad.py']))\n")
    proc = subprocess.run([sys.executable, "-c", code], cwd=tmp_path, capture_output=True,
                          text=True, env=checkout_env())
    assert proc.returncode == 1, proc.stderr
    assert "bad.py:2:5: TL101" in proc.stdout
