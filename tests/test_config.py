"""[tool.torchlint] configuration."""

import json


def project(tmp_path, config):
    (tmp_path / "pyproject.toml").write_text(config)
    (tmp_path / "train.py").write_text(
        "import torch\nfrom torch.utils.data import DataLoader\n"
        "x = torch.zeros(3).cuda()\nDataLoader(ds)\n")
    (tmp_path / "scripts").mkdir()
    (tmp_path / "scripts" / "tool.py").write_text("import torch\ny = torch.zeros(1).cuda()\n")


def codes(proc):
    return sorted((i["path"], i["code"]) for i in json.loads(proc.stdout))


def test_select_ignore_from_pyproject(tmp_path, run_cli):
    project(tmp_path, '[tool.torchlint]\nignore = ["TL5"]\n')
    assert codes(run_cli("--format", "json")) == [("scripts/tool.py", "TL101"), ("train.py", "TL101")]


def test_per_file_ignores_and_exclude(tmp_path, run_cli):
    project(tmp_path, '[tool.torchlint]\nexclude = ["scripts"]\n[tool.torchlint.per-file-ignores]\n"train.py" = ["TL101"]\n')
    assert codes(run_cli("--format", "json")) == [("train.py", "TL501")]


def test_unknown_key_is_an_error_naming_key_and_file(tmp_path, run_cli):
    project(tmp_path, '[tool.torchlint]\nselct = ["TL1"]\n')
    proc = run_cli()
    assert proc.returncode == 2
    assert "selct" in proc.stderr and "pyproject.toml" in proc.stderr


def test_bad_value_is_an_error(tmp_path, run_cli):
    project(tmp_path, '[tool.torchlint]\nselect = "TL1"\n')
    proc = run_cli()
    assert proc.returncode == 2 and "select" in proc.stderr


def test_unknown_code_in_config(tmp_path, run_cli):
    project(tmp_path, '[tool.torchlint]\nignore = ["TL777"]\n')
    proc = run_cli()
    assert proc.returncode == 2 and "TL777" in proc.stderr


def test_broken_toml(tmp_path, run_cli):
    project(tmp_path, '[tool.torchlint\nselect = ["TL1"]\n')
    proc = run_cli()
    assert proc.returncode == 2 and "invalid TOML" in proc.stderr
    assert "Traceback" not in proc.stderr


def test_extra_hot_functions(tmp_path, run_cli):
    project(tmp_path, '[tool.torchlint]\nhot-functions = ["my_step"]\n')
    from torchlint.config import load_settings
    settings = load_settings(str(tmp_path / "pyproject.toml"), ["TL101"])
    assert settings.hot_functions == frozenset({"my_step"})
