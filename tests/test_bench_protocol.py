"""The timing protocol and the value comparison, without fixtures."""

import pytest

torch = pytest.importorskip("torch")

from torchlint.bench import timing  # noqa: E402
from torchlint.bench.compare import values_agree  # noqa: E402
from torchlint.bench.timing import Side, measure  # noqa: E402


def test_blocks_interleave_alternate_and_pair(monkeypatch):
    per_call = {"before": [0.1, 0.1, 0.12, 0.1, 0.3, 0.1], "after": [0.05, 0.05, 0.04, 0.05, 0.1, 0.05]}
    blocks = []

    def fake_block(side, calls, synchronize):
        blocks.append((side.state, calls))
        return per_call[side.state].pop(0)

    monkeypatch.setattr(timing, "time_block", fake_block)
    result = measure(Side(None, "before"), Side(None, "after"), 5, lambda: None)
    # calibration first (0.1 s per call -> 2 calls per 0.2 s block; 0.05 s -> 4), then alternating order
    assert blocks == [("before", 1), ("after", 1)] + [
        ("before", 2), ("after", 4), ("after", 4), ("before", 2), ("before", 2),
        ("after", 4), ("after", 4), ("before", 2), ("before", 2), ("after", 4),
    ]
    assert (result.before_s, result.after_s, result.ratio) == (0.1, 0.05, 2.0)
    assert result.before_spread == pytest.approx((0.3 - 0.1) / 0.1)
    assert (result.paired_min, result.paired_max) == (pytest.approx(2.0), pytest.approx(3.0))


def test_calibration_doubles_until_the_block_is_long_enough(monkeypatch):
    monkeypatch.setattr(timing, "time_block", lambda side, calls, sync: 0.001)
    assert timing.calibrate(Side(None, None), lambda: None) == 200  # 0.2 s / 1 ms


def test_time_block_synchronizes_around_the_calls():
    events = []
    side = Side(lambda state: events.append("call"), None)
    per_call = timing.time_block(side, 3, lambda: events.append("sync"))
    assert events == ["sync", "call", "call", "call", "sync"] and per_call > 0


@pytest.mark.parametrize(
    "before, after, agree",
    [
        (torch.ones(3), torch.ones(3) * (1 + 1e-6), True),
        (torch.ones(3), torch.ones(3) * 1.01, False),
        (torch.ones(3), torch.ones(4), False),
        (torch.arange(3), torch.arange(3), True),
        (torch.arange(3), torch.tensor([0, 1, 3]), False),
        (torch.ones(2, dtype=torch.float16), torch.ones(2, dtype=torch.float64), True),
        ((1.0, [2, {"a": torch.zeros(1)}]), (1.0, [2, {"a": torch.zeros(1)}]), True),
        ({"a": 1}, {"b": 1}, False),
        ([1, 2], [1, 2, 3], False),
        (0.3, 0.1 + 0.2, True),
        (float("nan"), float("nan"), True),
        ("text", "text", True),
        (None, None, True),
        (None, 0, False),
    ],
)
def test_values_agree(before, after, agree):
    assert values_agree(before, after) is agree


def test_numpy_arrays_compare_by_value():
    np = pytest.importorskip("numpy")
    assert values_agree(np.ones(3), np.ones(3) + 1e-7)
    assert not values_agree(np.ones(3), np.zeros(3))
