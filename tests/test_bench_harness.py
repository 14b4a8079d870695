"""The harness on tiny fixture pairs written to a temporary fixtures root."""

import sys
import textwrap

import pytest

torch = pytest.importorskip("torch")

from torchlint.bench import timing  # noqa: E402
from torchlint.bench.fixture import Fixture  # noqa: E402
from torchlint.bench.harness import FAILED, MEASURED, SKIPPED, Machine, bench  # noqa: E402
from torchlint.rules import RULES_BY_CODE  # noqa: E402

TL101, TL501 = RULES_BY_CODE["TL101"], RULES_BY_CODE["TL501"]
MOVED = "torch.arange(n).to(device)"
FIXED = "torch.arange(n, device=device)"


def module_text(expression=MOVED, requires="", extra=""):
    return textwrap.dedent(
        """\
        import torch

        REASON = "the effect needs a GPU"
        {requires}
        device = torch.device("cpu")


        def setup(device, size):
            return 1000


        def step(n):
            return {expression}
        {extra}"""
    ).format(expression=expression, requires=requires, extra=extra)


def loader_text(workers="", extra="", requires=""):
    """A TL501 pair side: before without workers, after with ``workers`` (a rule with no fix)."""
    return textwrap.dedent(
        """\
        from torch.utils.data import DataLoader

        REASON = "the effect needs cores"
        WORKERS = 0
        {requires}

        def setup(device, size):
            return list(range(8))


        def step(data):
            return [batch.tolist() for batch in DataLoader(data, batch_size=4{workers})]
        {extra}"""
    ).format(workers=workers, extra=extra, requires=requires)


HAND_FIX = ", num_workers=WORKERS"
PARALLEL = "\nmodel = torch.nn.DataParallel(torch.nn.Linear(2, 2))\n"  # TL401: another rule's finding


def write_pair(root, before, after, code="TL101", workload=None):
    directory = root / code
    directory.mkdir(parents=True)
    (directory / "before.py").write_text(before)
    (directory / "after.py").write_text(after)
    if workload is not None:
        (directory / "workload.py").write_text(workload)
    return Fixture(code, str(directory))


@pytest.fixture(autouse=True)
def short_blocks(monkeypatch):
    monkeypatch.setattr(timing, "BLOCK_SECONDS", 0.002)
    monkeypatch.setattr(timing, "CALIBRATION_SECONDS", 0.001)


@pytest.fixture
def run(tmp_path):
    machine = Machine(torch.device("cpu"), gpus=0, cpus=2)

    def run_bench(rule=TL101, repeats=2):
        return bench(rule, str(tmp_path), machine, "small", repeats)

    return run_bench


def test_consistent_pair_is_measured(tmp_path, run):
    write_pair(tmp_path, module_text(MOVED), module_text(FIXED))
    result = run(repeats=3)
    assert (result.status, result.reason) == (MEASURED, None)
    assert result.lint_consistent and result.outputs_match
    assert result.timing.repeats == 3
    assert result.timing.before_s > 0 and result.timing.after_s > 0
    assert result.timing.paired_min <= result.timing.ratio * 1.5
    assert result.as_json()["speedup"] == pytest.approx(result.timing.before_s / result.timing.after_s)


@pytest.mark.parametrize(
    "requires, needs",
    [
        ("REQUIRES_CUDA = True", "needs CUDA (cpu here)"),
        ("REQUIRES_GPUS = 2", "needs 2 CUDA devices (0 here)"),
        ("REQUIRES_CPUS = 64", "needs 64 CPU cores (2 here)"),
    ],
)
def test_unmet_requirement_is_skipped_and_never_run(tmp_path, run, requires, needs):
    never = "\ndef setup(device, size):\n    raise AssertionError('a skipped fixture was run')\n"
    write_pair(tmp_path, module_text(MOVED, requires, never), module_text(FIXED, requires, never))
    result = run()
    assert result.status == SKIPPED
    assert result.reason == f"{needs}: the effect needs a GPU"
    assert result.timing is None and result.outputs_match is None
    assert result.lint_consistent is True


def test_requirements_are_read_from_before(tmp_path, run):
    write_pair(tmp_path, loader_text(requires="REQUIRES_CUDA = True"), loader_text(HAND_FIX), "TL501")
    assert run(TL501).status == SKIPPED


@pytest.mark.parametrize(
    "before, after, reason",
    [
        (module_text(FIXED), module_text(FIXED), "before.py is not flagged with TL101"),
        (module_text(MOVED), module_text(MOVED), "after.py is flagged with TL101 (line 13)"),
        (module_text(MOVED), module_text("torch.arange(n, device=device) + 0"), "the fix of before.py differs"),
        (module_text(MOVED), module_text(FIXED) + "\n", "the fix of before.py differs"),
        ("import torch\nx = (", module_text(FIXED), "before.py cannot be linted"),
        (module_text(MOVED, extra=PARALLEL), module_text(FIXED, extra=PARALLEL), "before.py is also flagged with TL401"),
        (module_text(MOVED), module_text(FIXED, extra=PARALLEL), "after.py is flagged with TL401"),
    ],
)
def test_lint_inconsistency_fails_before_anything_runs(tmp_path, run, before, after, reason):
    write_pair(tmp_path, before, after)
    result = run()
    assert result.status == FAILED and result.lint_consistent is False
    assert result.reason.startswith(reason)
    assert result.timing is None and result.outputs_match is None


def test_output_mismatch_fails(tmp_path, run):
    after = loader_text(HAND_FIX).replace("return [", "return [[0]] + [")
    write_pair(tmp_path, loader_text(), after, "TL501")
    result = run(TL501)
    assert (result.status, result.outputs_match, result.reason) == (FAILED, False, "outputs differ beyond tolerance")
    assert result.lint_consistent is True and result.timing is None


@pytest.mark.parametrize(
    "check, status, reason",
    [
        ("return True", MEASURED, None),
        ("return False", FAILED, "check() returned False"),
        ("assert before == after", FAILED, "check() raised AssertionError"),
        ("assert before == after, 'not the same'", FAILED, "check() raised AssertionError: not the same"),
        ("pass", FAILED, "check() returned None, not a bool"),
    ],
)
def test_after_check_replaces_value_comparison(tmp_path, run, check, status, reason):
    after = loader_text(HAND_FIX, extra=f"\n\ndef check(before, after):\n    {check}\n")
    write_pair(tmp_path, loader_text(), after.replace("return [", "return [[0]] + ["), "TL501")
    result = run(TL501)
    assert (result.status, result.reason) == (status, reason)


def test_no_fixture_fails(run):
    result = run()
    assert (result.status, result.reason) == (FAILED, "no fixture")


@pytest.mark.parametrize(
    "extra, reason",
    [
        ("\ndef setup(device, size):\n    raise ValueError('no data')\n", "before.py setup raised ValueError: no data"),
        ("\nimport not_a_module_anywhere\n", "before.py import raised ModuleNotFoundError"),
        ("\nstep = None\n", "before.py step raised TypeError"),
    ],
)
def test_a_fixture_that_raises_fails_with_its_error(tmp_path, run, extra, reason):
    write_pair(tmp_path, module_text(MOVED, extra=extra), module_text(FIXED, extra=extra))
    result = run()
    assert result.status == FAILED and result.reason.startswith(reason)


def test_rule_without_fix_accepts_a_hand_written_after(tmp_path, run):
    write_pair(tmp_path, loader_text(), loader_text(HAND_FIX) + "# fixed by hand\n", "TL501")
    result = run(TL501)
    assert (result.status, result.lint_consistent, result.outputs_match) == (MEASURED, True, True)


WORKLOAD = textwrap.dedent(
    """\
    import torch
    from torch.utils.data import Dataset

    NAME = {name!r}


    class Samples(Dataset):
        def __len__(self):
            return 4

        def __getitem__(self, index):
            return torch.tensor([index * {scale}])


    def setup(device, size):
        return 1000
    """
)
USES_WORKLOAD = "from workload import NAME, Samples, setup\n"


def test_each_fixture_side_imports_its_own_workload(tmp_path):
    """Two fixtures whose workload.py define the same names differently never see each other's."""
    first = write_pair(tmp_path, USES_WORKLOAD, USES_WORKLOAD, "TL101", WORKLOAD.format(name="first", scale=1))
    second = write_pair(tmp_path, USES_WORKLOAD, USES_WORKLOAD, "TL501", WORKLOAD.format(name="second", scale=10))
    saved = sys.modules.get("workload")
    first_before, second_before, first_after = first.load("before"), second.load("before"), first.load("after")
    assert (first_before.NAME, second_before.NAME, first_after.NAME) == ("first", "second", "first")
    assert first_before.Samples is not first_after.Samples  # each side imports its workload afresh
    assert sys.modules.get("workload") is saved  # `workload` is bound only while a side is imported
    # the workload's classes reach DataLoader worker processes (fork) and come back by value
    loader = torch.utils.data.DataLoader(second_before.Samples(), batch_size=2, num_workers=1)
    assert [batch.flatten().tolist() for batch in loader] == [[0, 10], [20, 30]]


def test_a_fixture_without_workload_cannot_import_another_ones(tmp_path):
    write_pair(tmp_path, USES_WORKLOAD, USES_WORKLOAD, "TL101", WORKLOAD.format(name="first", scale=1))
    lonely = write_pair(tmp_path, USES_WORKLOAD, USES_WORKLOAD, "TL501")
    Fixture("TL101", str(tmp_path / "TL101")).load("before")
    with pytest.raises(ImportError):
        lonely.load("before")


def test_workload_is_shared_by_both_sides_and_never_flagged(tmp_path, run):
    body = "import torch\n\nfrom workload import device, setup\n\n\ndef step(n):\n    return {expression}\n"
    workload = "import torch\n\ndevice = torch.device('cpu')\n\n\ndef setup(device, size):\n    return 1000\n"
    write_pair(tmp_path / "clean", body.format(expression=MOVED), body.format(expression=FIXED), "TL101", workload)
    write_pair(tmp_path / "flagged", body.format(expression=MOVED), body.format(expression=FIXED), "TL101",
               workload + "\n\ndef warm(n):\n    return " + MOVED + "\n")
    machine = Machine(torch.device("cpu"), gpus=0, cpus=2)
    clean = bench(TL101, str(tmp_path / "clean"), machine, "small", 2)
    assert (clean.status, clean.lint_consistent, clean.outputs_match) == (MEASURED, True, True)
    flagged = bench(TL101, str(tmp_path / "flagged"), machine, "small", 2)
    assert (flagged.status, flagged.lint_consistent) == (FAILED, False)
    assert flagged.reason == "workload.py is flagged with TL101 (line 11)"


def test_a_cost_fixture_reports_what_the_fix_costs(tmp_path, run):
    write_pair(tmp_path, module_text(MOVED, 'KIND = "cost"'), module_text(FIXED, 'KIND = "cost"'))
    document = run().as_json()
    assert (document["status"], document["kind"], document["speedup"]) == (MEASURED, "cost", None)
    assert document["ratio"] == pytest.approx(document["before_s"] / document["after_s"])


CORRECTNESS_AFTER = """

def verdict(before, after):
    return isinstance(before, ValueError) and after == [[0, 1, 2, 3], [4, 5, 6, 7]], f"before gave {type(before).__name__}"
"""


@pytest.mark.parametrize("before_end, holds", [("raise ValueError('strides')", True), ("return 1000", False)])
def test_a_correctness_fixture_gets_a_verdict_and_no_timing(tmp_path, run, before_end, holds):
    before = loader_text(requires='KIND = "correctness"',
                         extra=f"\ndef step(data):\n    DataLoader(data, batch_size=4)\n    {before_end}\n")
    write_pair(tmp_path, before, loader_text(HAND_FIX, CORRECTNESS_AFTER, 'KIND = "correctness"'), "TL501")
    result = run(TL501)
    assert result.timing is None and result.outputs_match is None
    if holds:
        assert (result.status, result.verdict) == (MEASURED, "before gave ValueError")
    else:
        assert result.status == FAILED and result.reason == "the fix does not hold: before gave int"


SWEPT = """
SWEEP = {"name": "n", "small": (10, 1000), "full": (10, 1000, 100000), "headline": 1000}


def setup(device, size, n):
    return n
"""


def test_a_sweep_measures_every_value_and_reports_its_headline(tmp_path, run):
    write_pair(tmp_path, module_text(MOVED, extra=SWEPT), module_text(FIXED, extra=SWEPT))
    result = run()
    assert result.status == MEASURED and [point.value for point in result.points] == [10, 1000]
    document = result.as_json()
    assert document["sweep"]["name"] == "n" and [p["value"] for p in document["sweep"]["points"]] == [10, 1000]
    assert document["before_s"] == result.points[1].timing.before_s


def test_memory_is_measured_when_asked(tmp_path, run):
    write_pair(tmp_path, module_text(MOVED, "MEMORY = True"), module_text(FIXED, "MEMORY = True"))
    document = run().as_json()
    assert document["status"] == MEASURED
    assert document["before_bytes"] >= 1000 * 8 and document["after_bytes"] >= 1000 * 8


@pytest.mark.parametrize("constant, reason", [
    ('KIND = "faster"', "KIND must be one of"),
    ('SWEEP = {"name": "n", "small": (1, 2), "full": (1, 2, 3), "headline": 3}', "SWEEP needs a name, values"),
])
def test_bad_protocol_constants_fail_with_a_reason(tmp_path, run, constant, reason):
    write_pair(tmp_path, module_text(MOVED, constant), module_text(FIXED, constant))
    result = run()
    assert result.status == FAILED and reason in result.reason
