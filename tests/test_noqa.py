"""``# noqa`` comments in the forms flake8 and ruff accept."""

import json

import pytest

from torchlint.noqa import ALL, parse_noqa, suppressed


@pytest.mark.parametrize("comment,codes", [
    ("# noqa:TL101", {"TL101"}),
    ("# noqa: TL101", {"TL101"}),
    ("# noqa: TL101,TL201", {"TL101", "TL201"}),
    ("# noqa: TL101, TL201", {"TL101", "TL201"}),
    ("# noqa: TL101 TL201", {"TL101", "TL201"}),
    ("# NOQA: TL101", {"TL101"}),
    ("# NoQA:tl101", {"TL101"}),
    ("#noqa:TL101", {"TL101"}),
    ("# noqa: TL101 -- the copy is intended", {"TL101"}),
    ("# noqa: TL101,E501 because reasons", {"TL101", "E501"}),
    ("# type: ignore  # noqa: TL101", {"TL101"}),
])
def test_codes(comment, codes):
    assert parse_noqa(f"x = torch.zeros(3).cuda()  {comment}") == codes


@pytest.mark.parametrize("comment", ["# noqa", "# NOQA", "#noqa", "# noqa this is fine", "# noqa:"])
def test_bare_noqa_suppresses_everything(comment):
    noqa = parse_noqa(f"x = 1  {comment}")
    assert noqa is ALL and suppressed("TL101", noqa)


def test_other_codes_do_not_suppress():
    assert not suppressed("TL101", parse_noqa("x = 1  # noqa: TL1011,E501"))
    assert not suppressed("TL101", parse_noqa("x = 1  # noqa: TL10"))
    assert parse_noqa("x = 1  # not a suppression") is None
    assert parse_noqa("x = 1") is None


UNUSED = (
    "import torch\n"
    "a = torch.zeros(3).cuda()  # noqa: TL101\n"  # used
    "b = torch.zeros(3, device='cuda')  # noqa: TL101, E501\n"  # TL101 unused, E501 not ours
    "c = 1  # noqa: TL999 -- reason\n"  # unknown code
    "d = 2  # type: ignore  # noqa: TL201\n"  # unused
    "e = 3  # noqa\n"  # bare: left alone
    "f = torch.zeros(3).cuda()  # noqa: TL101, TL501\n"  # TL501 unused
)


def test_unused_noqa_is_off_by_default(tmp_path, run_cli):
    (tmp_path / "a.py").write_text(UNUSED)
    assert run_cli("a.py").returncode == 0


def test_unused_and_unknown_noqa_codes_are_reported_and_fixed(tmp_path, run_cli):
    path = tmp_path / "a.py"
    path.write_text(UNUSED)
    proc = run_cli("--extend-select", "TL003", "--format", "json", "a.py")
    found = [(item["line"], item["column"], item["message"]) for item in json.loads(proc.stdout)]
    assert found == [
        (3, 36, "unused `noqa` directive (unused: TL101)"),
        (4, 8, "unused `noqa` directive (unknown: TL999)"),
        (5, 24, "unused `noqa` directive (unused: TL201)"),
        (7, 28, "unused `noqa` directive (unused: TL501)"),
    ]
    assert run_cli("--extend-select", "TL003", "--fix", "a.py").returncode == 0
    assert path.read_text().splitlines()[1:] == [
        "a = torch.zeros(3).cuda()  # noqa: TL101",
        "b = torch.zeros(3, device='cuda')  # noqa: E501",
        "c = 1  # -- reason",
        "d = 2  # type: ignore",
        "e = 3  # noqa",
        "f = torch.zeros(3).cuda()  # noqa: TL101",
    ]


def test_unused_noqa_judges_only_enabled_rules(tmp_path, run_cli):
    (tmp_path / "a.py").write_text("import torch\nx = 1  # noqa: TL201\n")
    assert run_cli("--select", "TL1,TL003", "a.py").returncode == 0  # TL201 is not running here
    assert run_cli("--select", "TL2,TL003", "a.py").returncode == 1


def test_the_flake8_plugin_never_reports_unused_noqa(tmp_path, run_flake8):
    (tmp_path / "a.py").write_text("x = 1  # noqa: TL101\n")
    assert run_flake8("--select", "TL", "a.py").stdout == ""
