"""Bad inputs never crash a run: each gets a diagnostic or one clear line, the rest is linted.

(A syntax error, a missing path, an undecodable file, a broken pyproject.toml and an unknown
``--select`` code are covered in test_cli.py and test_config.py.)
"""

import json
import multiprocessing
import os
import sysconfig
import warnings

import pytest

import torchlint.source
from torchlint.config import Settings
from torchlint.discovery import discover
from torchlint.codes import IO_ERROR, SYNTAX_ERROR
from torchlint.linter import MAX_SOURCE_CHARS, lint_text
from torchlint.rules import ALL_RULES
from torchlint.runner import Options, run

BAD = "import torch\nx = torch.zeros(3).cuda()\n"
STDLIB = sysconfig.get_paths()["stdlib"]


def error_lines(proc):
    lines = proc.stderr.splitlines()
    assert "Traceback" not in proc.stderr
    assert all(line.startswith("torchlint: ") for line in lines)
    return lines


def test_nul_bytes_and_binary_file_are_one_line_findings(tmp_path, run_cli):
    (tmp_path / "nul.py").write_bytes(b"import torch\x00\nx = 1\n")
    (tmp_path / "binary.py").write_bytes(bytes(range(256)) * 64)
    (tmp_path / "bad.py").write_text(BAD)
    proc = run_cli(".")
    assert error_lines(proc) == []
    lines = proc.stdout.splitlines()
    assert "nul.py:1:1: TL002 contains NUL bytes (binary file?)" in lines
    assert any(line.startswith("binary.py:1:1: TL002 ") for line in lines)
    assert proc.returncode == 1 and "bad.py:2:5: TL101" in proc.stdout


def test_empty_file_is_clean(tmp_path, run_cli):
    (tmp_path / "empty.py").write_bytes(b"")
    assert run_cli("empty.py").returncode == 0
    proc = run_cli("--fix", "--unsafe-fixes", "empty.py")
    assert proc.returncode == 0 and proc.stderr == ""
    assert (tmp_path / "empty.py").read_bytes() == b""


def test_huge_generated_file_is_skipped_with_one_line(tmp_path, run_cli):
    row = "    " + ", ".join(["0.123456"] * 12) + ",\n"
    text = "import torch\nDATA = [\n" + row * (10_000_000 // len(row)) + "]\n"
    assert len(text) > 9_000_000 > MAX_SOURCE_CHARS
    (tmp_path / "generated.py").write_text(text)
    (tmp_path / "bad.py").write_text(BAD)
    proc = run_cli("--no-cache", ".")
    errors = error_lines(proc)
    assert len(errors) == 1 and "generated.py: skipped: 10.0 MB is over the 2 MB limit" in errors[0]
    assert "bad.py:2:5: TL101" in proc.stdout


def test_directory_symlink_loop_and_self_link(tmp_path, run_cli):
    package = tmp_path / "pkg"
    package.mkdir()
    (package / "bad.py").write_text(BAD)
    os.symlink("..", package / "loop")
    os.symlink("self.py", package / "self.py")
    proc = run_cli("--format", "json", ".")
    found = [(item["path"], item["code"]) for item in json.loads(proc.stdout)]
    assert found == [("pkg/bad.py", "TL101"), ("pkg/self.py", "TL002")]
    assert "symbolic links" in json.loads(proc.stdout)[1]["message"] and error_lines(proc) == []


def test_valid_python_libcst_cannot_parse_is_no_syntax_error(tmp_path, run_cli):
    (tmp_path / "odd.py").write_text("import torch\n(pars): bool = True\nx = torch.zeros(3).cuda()\n")
    proc = run_cli("--format", "json", "odd.py")
    assert json.loads(proc.stdout) == []
    errors = error_lines(proc)
    assert len(errors) == 1 and "odd.py: not linted: valid Python that libcst" in errors[0]


def check_unreadable_file(tmp_path, hide):
    secret = tmp_path / "secret.py"
    secret.write_text(BAD)
    (tmp_path / "bad.py").write_text(BAD)
    hide(secret)
    bad, unreadable = run([str(tmp_path / "bad.py"), str(secret)], Settings(), Options())
    assert unreadable.errors == [] and [(d.code, d.message) for d in unreadable.diagnostics] == [
        ("TL002", "Permission denied")]
    assert [d.code for d in bad.diagnostics] == ["TL101"]


@pytest.mark.skipif(os.geteuid() == 0, reason="root reads files whatever their mode; see the simulated test")
def test_unreadable_file(tmp_path):
    check_unreadable_file(tmp_path, lambda path: path.chmod(0))


def test_unreadable_file_simulated(tmp_path, monkeypatch):
    """Running as root, chmod 000 does not stop reads: make ``open`` refuse instead."""
    real_open = open

    def refusing_open(path, *args, **kwargs):
        if str(path).endswith("secret.py"):
            raise PermissionError(13, "Permission denied", str(path))
        return real_open(path, *args, **kwargs)

    monkeypatch.setattr(torchlint.source, "open", refusing_open, raising=False)
    check_unreadable_file(tmp_path, lambda path: None)


# ---- the whole standard library --------------------------------------------------------

FORCED_RULES = [type(rule.__name__, (rule,), {"triggers": ("",)}) for rule in ALL_RULES]


def lint_forced(path):
    """Parse and walk ``path`` with every rule, even where no trigger word occurs."""
    try:
        source = torchlint.source.read_source(path)
    except torchlint.source.SourceError:
        return path, None, []
    result = lint_text(source.text, path, FORCED_RULES)
    return path, [d.code for d in result.diagnostics], result.errors


def rejected_by_python(files):
    rejected = set()
    for path in files:
        with open(path, "rb") as handle:
            data = handle.read()
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                compile(data, path, "exec", dont_inherit=True, flags=0x400)  # ast.PyCF_ONLY_AST
        except (SyntaxError, ValueError):
            rejected.add(path)
    return rejected


@pytest.fixture(scope="module")
def stdlib_files():
    files, errors = discover([STDLIB], Settings())
    assert not errors and len(files) > 500
    return files


@pytest.mark.slow
def test_stdlib_through_the_command_line(stdlib_files, run_cli):
    proc = run_cli("--no-cache", "--jobs", "2", "--format", "json", STDLIB)
    items = json.loads(proc.stdout)
    reported = {item["path"] for item in items if item["code"] == SYNTAX_ERROR}
    errors = error_lines(proc)
    assert not any("internal error" in line for line in errors)
    unreadable = {item["path"] for item in items if item["code"] == IO_ERROR}
    assert all(path.startswith(STDLIB) for path in unreadable)
    assert reported | unreadable == rejected_by_python(stdlib_files)


@pytest.mark.slow
def test_stdlib_parsed_and_walked_by_every_rule(stdlib_files):
    with multiprocessing.get_context("fork").Pool(2) as pool:
        results = pool.map(lint_forced, stdlib_files, chunksize=8)
    unparsable = {path for path, codes, _ in results if codes is None or SYNTAX_ERROR in codes}
    assert unparsable == rejected_by_python(stdlib_files)
    # Valid files libcst's parser does not accept are not called syntax errors, but said so.
    errors = {path: errors for path, _, errors in results if errors}
    assert all(len(e) == 1 and e[0].startswith("not linted: valid Python that libcst") for e in errors.values())
    assert len(errors) <= len(stdlib_files) // 100


def test_a_failing_rule_is_named_and_the_others_still_lint(monkeypatch):
    from torchlint.rules.tl101_factory_without_device import FactoryWithoutDevice

    def fail(self, node):
        raise ValueError("boom")

    monkeypatch.setattr(FactoryWithoutDevice, "visit_Call", fail, raising=False)
    result = lint_text("import torch\nmodel = torch.nn.DataParallel(net)\n" + BAD, "a.py", ALL_RULES)
    assert result.errors == ["internal error in TL101 (factory-without-device): ValueError: boom"]
    assert [d.code for d in result.diagnostics] == ["TL401"]


def test_a_failing_context_fails_the_file_with_its_own_error(tmp_path, monkeypatch):
    from torchlint.context import FileContext

    def fail(self, node):
        raise RecursionError("deep")

    monkeypatch.setattr(FileContext, "visit_Call", fail)
    (tmp_path / "a.py").write_text(BAD)
    (tmp_path / "b.py").write_text("x = 1\n")  # no rule wakes for it: linted without the context
    failed, clean = run([str(tmp_path / "a.py"), str(tmp_path / "b.py")], Settings(), Options())
    assert failed.errors == [f"{tmp_path / 'a.py'}: internal error: RecursionError: deep"]
    assert clean.errors == [] and clean.diagnostics == []
