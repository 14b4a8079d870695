"""The per-file result cache: hits, invalidation, and never failing a run."""

import dataclasses
import os

import pytest

from torchlint import runner
from torchlint.cache import Cache, clean
from torchlint.config import Settings
from torchlint.runner import CHECK, FIX, Options, run

BAD = "import torch\nx = torch.zeros(3).cuda()\n"


@pytest.fixture
def counted(monkeypatch):
    """Counts the files that are really linted (not answered from the cache)."""
    linted = []
    real = runner.process_file

    def spy(path, settings, options, elsewhere=None):
        linted.append(os.path.basename(path))
        return real(path, settings, options, elsewhere)

    monkeypatch.setattr(runner, "process_file", spy)
    return linted


def lint(paths, cache, mode=CHECK, settings=Settings()):
    return run([str(p) for p in paths], settings, Options(mode), jobs=1, cache=cache)


def test_hit_returns_identical_results_with_fixes(tmp_path, counted):
    path = tmp_path / "a.py"
    path.write_text(BAD)
    cache = Cache(str(tmp_path / "cache"), Settings())
    first = lint([path], cache)
    second = lint([path], Cache(str(tmp_path / "cache"), Settings()))
    assert counted == ["a.py"]
    assert [dataclasses.asdict(d) for d in second[0].diagnostics] == [
        dataclasses.asdict(d) for d in first[0].diagnostics]
    assert second[0].diagnostics[0].fix is not None


def test_content_change_invalidates(tmp_path, counted):
    path = tmp_path / "a.py"
    path.write_text(BAD)
    lint([path], Cache(str(tmp_path / "cache"), Settings()))
    path.write_text("import torch\n")
    outcome = lint([path], Cache(str(tmp_path / "cache"), Settings()))[0]
    assert counted == ["a.py", "a.py"]
    assert outcome.diagnostics == []


def test_config_change_invalidates(tmp_path, counted):
    path = tmp_path / "a.py"
    path.write_text(BAD)
    lint([path], Cache(str(tmp_path / "cache"), Settings()))
    ignoring = Settings(ignore=("TL101",))
    outcome = lint([path], Cache(str(tmp_path / "cache"), ignoring), settings=ignoring)[0]
    assert counted == ["a.py", "a.py"]
    assert outcome.diagnostics == []


def test_hot_functions_order_does_not_matter(tmp_path, counted):
    path = tmp_path / "a.py"
    path.write_text(BAD)
    names = [f"step_{i}" for i in range(20)]
    lint([path], Cache(str(tmp_path / "cache"), Settings(hot_functions=frozenset(names))))
    lint([path], Cache(str(tmp_path / "cache"), Settings(hot_functions=frozenset(reversed(names)))))
    assert counted == ["a.py"]


def test_version_change_invalidates(tmp_path, counted, monkeypatch):
    path = tmp_path / "a.py"
    path.write_text(BAD)
    lint([path], Cache(str(tmp_path / "cache"), Settings()))
    monkeypatch.setattr("torchlint.__version__", "99.0")
    lint([path], Cache(str(tmp_path / "cache"), Settings()))
    assert counted == ["a.py", "a.py"]


def test_fix_never_reads_the_cache(tmp_path, counted):
    path = tmp_path / "a.py"
    path.write_text(BAD)
    lint([path], Cache(str(tmp_path / "cache"), Settings()))
    outcome = lint([path], Cache(str(tmp_path / "cache"), Settings()), mode=FIX)[0]
    assert counted == ["a.py", "a.py"]
    assert outcome.fixed == 1 and "device=" in path.read_text()


def test_corrupt_entry_is_a_miss_with_one_warning(tmp_path, counted):
    paths = [tmp_path / "a.py", tmp_path / "b.py"]
    for path in paths:
        path.write_text(BAD)
    lint(paths, Cache(str(tmp_path / "cache"), Settings()))
    for directory, _, names in os.walk(tmp_path / "cache" / "entries"):
        for name in names:
            with open(os.path.join(directory, name), "wb") as handle:
                handle.write(b"\x00{not json")
    cache = Cache(str(tmp_path / "cache"), Settings())
    outcomes = lint(paths, cache)
    assert [len(o.diagnostics) for o in outcomes] == [1, 1]
    assert len(cache.warnings) == 1 and "cache entry" in cache.warnings[0]
    lint(paths, Cache(str(tmp_path / "cache"), Settings()))  # rewritten: hits again
    assert counted == ["a.py", "b.py"] * 2


def test_unwritable_cache_directory_is_a_warning(tmp_path, run_cli):
    (tmp_path / "a.py").write_text(BAD)
    (tmp_path / "cache").write_text("a file where the cache directory should be")
    proc = run_cli("--cache-dir", "cache", "a.py")
    assert proc.returncode == 1 and "a.py:2:5: TL101" in proc.stdout
    warnings = [line for line in proc.stderr.splitlines() if "warning" in line]
    assert len(warnings) == 1 and "cannot write the cache" in warnings[0]
    assert "Traceback" not in proc.stderr


def test_cli_default_directory_and_clean(tmp_path, run_cli):
    (tmp_path / "pyproject.toml").write_text("[tool.torchlint]\n")
    (tmp_path / "src").mkdir()
    (tmp_path / "src" / "a.py").write_text(BAD)
    assert run_cli("a.py", cwd=tmp_path / "src").returncode == 1
    assert (tmp_path / ".torchlint_cache" / "CACHEDIR.TAG").exists()
    proc = run_cli("clean", cwd=tmp_path / "src")
    assert proc.returncode == 0 and "removed" in proc.stdout
    assert not (tmp_path / ".torchlint_cache").exists()
    assert "no cache" in run_cli("clean").stdout


def test_no_cache_writes_nothing(tmp_path, run_cli):
    (tmp_path / "a.py").write_text(BAD)
    assert run_cli("--no-cache", "a.py").returncode == 1
    assert not (tmp_path / ".torchlint_cache").exists()


def test_clean_refuses_a_directory_that_is_not_a_cache(tmp_path, run_cli):
    keep = tmp_path / "precious"
    keep.mkdir()
    (keep / "data.txt").write_text("keep me")
    with pytest.raises(OSError, match="not a torchlint cache"):
        clean(str(keep))
    proc = run_cli("clean", "--cache-dir", "precious")
    assert proc.returncode == 2 and "not a torchlint cache" in proc.stderr
    assert (keep / "data.txt").read_text() == "keep me"
