"""The CLI and the flake8 plugin agree, finding by finding, on every rule's invalid examples."""

import json

from tests.test_flake8_plugin import findings
from torchlint.rules import ALL_RULES


def test_cli_and_flake8_report_the_same_findings(tmp_path, run_cli, run_flake8):
    for rule in ALL_RULES:
        for index, example in enumerate(rule.invalid):
            folder = tmp_path / f"{rule.code.lower()}_{index}"  # a project each: no facts shared
            folder.mkdir()
            (folder / "example.py").write_text(example.source)
    (tmp_path / "pyproject.toml").write_text("[tool.torchlint]\npreview = true\n")  # every rule, both ways
    cli = run_cli("--format", "json", ".")
    assert cli.returncode == 1, cli.stderr
    from_cli = sorted((d["path"], d["line"], d["column"], d["code"]) for d in json.loads(cli.stdout))
    flake8 = run_flake8("--select", "TL", ".")
    assert flake8.returncode == 1, flake8.stderr
    from_flake8 = sorted((path[2:] if path.startswith("./") else path, line, col, code)
                         for path, line, col, code in findings(flake8))
    assert from_flake8 == from_cli
    assert {code for *_, code in from_cli} == {rule.code for rule in ALL_RULES}
