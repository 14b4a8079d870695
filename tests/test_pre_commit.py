"""The hooks in .pre-commit-hooks.yaml, run by the real pre-commit on a fresh git repository.

``pre-commit try-repo`` installs this checkout (its HEAD plus uncommitted changes to tracked
files) into a new virtualenv, with libcst and rich from PyPI.
"""

import json
import os
import re
import subprocess
import sys

import pytest

from tests.conftest import ROOT

BAD = "import torch\nx = torch.zeros(3).cuda()\n"
FIXED = 'import torch\nx = torch.zeros(3, device="cuda")\n'


def git(cwd, *args):
    subprocess.run(["git", "-c", "user.name=t", "-c", "user.email=t@example.com", *args],
                   cwd=cwd, check=True, capture_output=True)


@pytest.mark.slow
def test_check_hook_fails_and_fix_hook_rewrites(tmp_path):
    git(tmp_path, "init", "-q")
    (tmp_path / "train.py").write_text(BAD)
    cell = {"cell_type": "code", "execution_count": None, "metadata": {}, "outputs": [],
            "source": BAD.splitlines(True)}
    notebook = {"cells": [cell], "metadata": {}, "nbformat": 4, "nbformat_minor": 5}
    (tmp_path / "nb.ipynb").write_text(json.dumps(notebook, indent=1) + "\n")
    (tmp_path / "notes.txt").write_text(BAD)  # not Python: no hook runs on it
    git(tmp_path, "add", ".")
    proc = subprocess.run([sys.executable, "-m", "pre_commit", "try-repo", ROOT, "--all-files", "--color", "never"],
                          cwd=tmp_path, capture_output=True, text=True, timeout=540)
    out = proc.stdout + proc.stderr
    assert proc.returncode == 1, out
    check, fix = out.split("\ntorchlint-fix.", 1)  # each hook's status line, then its output
    check = check[check.index("\ntorchlint."):]
    assert "Failed" in check.splitlines()[1]
    assert "train.py:2:5: TL101" in check and "nb.ipynb:cell 1:2:5: TL101" in check
    assert "Failed" in fix.splitlines()[0] and "files were modified by this hook" in fix
    assert (tmp_path / "train.py").read_text() == FIXED
    assert json.loads((tmp_path / "nb.ipynb").read_text())["cells"][0]["source"] == FIXED.splitlines(True)
    assert (tmp_path / "notes.txt").read_text() == BAD


README_REPO = "https://github.com/torchlint/torchlint"


def readme_pre_commit_config():
    with open(os.path.join(ROOT, "README.md"), encoding="utf-8") as handle:
        readme = handle.read()
    section = readme[readme.index("pre-commit (`.pre-commit-config.yaml`)"):]
    return section.split("```yaml\n", 1)[1].split("```", 1)[0]


@pytest.mark.slow
def test_the_readme_snippet_works_as_written(tmp_path):
    """The snippet as the README shows it; only the repository's address points at this
    checkout (whose history holds the pinned commit) instead of GitHub."""
    config = readme_pre_commit_config()
    rev = re.search(r"rev: (\S+)", config).group(1)
    pinned = subprocess.run(["git", "cat-file", "-e", f"{rev}^{{commit}}"], cwd=ROOT, capture_output=True)
    if pinned.returncode != 0:
        pytest.skip(f"{rev} is not in this clone's history (a shallow clone?)")
    assert README_REPO in config
    git(tmp_path, "init", "-q")
    (tmp_path / ".pre-commit-config.yaml").write_text(config.replace(README_REPO, ROOT))
    (tmp_path / "train.py").write_text(BAD)
    git(tmp_path, "add", ".")
    proc = subprocess.run([sys.executable, "-m", "pre_commit", "run", "--all-files", "--color", "never"],
                          cwd=tmp_path, capture_output=True, text=True, timeout=540)
    out = proc.stdout + proc.stderr
    assert proc.returncode == 1 and "train.py:2:5: TL101" in out, out
