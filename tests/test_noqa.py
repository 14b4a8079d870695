"""``# noqa`` comments in the forms flake8 and ruff accept."""

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
