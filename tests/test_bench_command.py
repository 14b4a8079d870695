"""``torchlint bench`` end to end: arguments, JSON, markdown, exit codes, the shipped fixtures."""

import json
import os
import re
import shutil
import subprocess
import sys

import pytest

from tests.conftest import ROOT

torch = pytest.importorskip("torch")
jsonschema = pytest.importorskip("jsonschema")

from torchlint.bench import timing  # noqa: E402
from torchlint.bench.results import committed  # noqa: E402
from torchlint.bench.command import main  # noqa: E402
from torchlint.linter import lint_text  # noqa: E402
from torchlint.rules import ALL_RULES  # noqa: E402

NUMBER = {"type": ["number", "null"]}
FLAG = {"type": ["boolean", "null"]}
SCHEMA = {
    "type": "object",
    "required": ["device", "device_name", "torch", "python", "size", "date", "results"],
    "properties": {
        "device": {"enum": ["cpu", "cuda"]},
        "device_name": {"type": "string", "minLength": 1},
        "torch": {"type": "string"},
        "python": {"type": "string"},
        "size": {"enum": ["small", "full"]},
        "date": {"type": "string", "pattern": r"^\d{4}-\d\d-\d\d$"},
        "results": {
            "type": "array",
            "items": {
                "type": "object",
                "required": ["code", "kind", "status", "reason", "before_s", "after_s", "ratio", "speedup",
                             "verdict", "outputs_match", "lint_consistent", "sweep"],
                "properties": {
                    "code": {"type": "string", "pattern": "^TL[0-9]{3}$"},
                    "kind": {"enum": ["speedup", "cost", "correctness", None]},
                    "status": {"enum": ["measured", "skipped", "failed"]},
                    "ratio": NUMBER, "verdict": {"type": ["string", "null"]},
                    "reason": {"type": ["string", "null"]},
                    "before_s": NUMBER, "after_s": NUMBER, "speedup": NUMBER,
                    "outputs_match": FLAG, "lint_consistent": FLAG,
                },
            },
        },
    },
}
HEAD = "import torch\n\ndevice = torch.device('cpu')\n\n\ndef setup(device, size):\n    return 64\n\n\ndef step(n):\n"
PAIR = {
    "before": HEAD + "    return torch.zeros(n).to(device)\n",
    "after": HEAD + "    return torch.zeros(n, device=device)\n",
}


@pytest.fixture
def fixtures_root(tmp_path, monkeypatch):
    monkeypatch.setattr(timing, "BLOCK_SECONDS", 0.002)
    monkeypatch.setattr(timing, "CALIBRATION_SECONDS", 0.001)
    (tmp_path / "TL101").mkdir()
    for side, text in PAIR.items():
        (tmp_path / "TL101" / f"{side}.py").write_text(text)
    return tmp_path


def bench(*args):
    return main(["--device", "cpu", "--repeat", "2", *map(str, args)])


def test_json_and_markdown_of_a_run(fixtures_root, tmp_path, capsys):
    out_json, out_md = tmp_path / "bench.json", tmp_path / "bench.md"
    assert bench("TL101", "--fixtures", fixtures_root, "--json", out_json, "--markdown", out_md) == 0
    document = json.loads(out_json.read_text())
    jsonschema.validate(document, SCHEMA)
    [result] = document["results"]
    assert (result["code"], result["status"], result["lint_consistent"], result["outputs_match"]) == (
        "TL101", "measured", True, True)
    assert result["speedup"] == pytest.approx(result["before_s"] / result["after_s"])
    assert (document["device"], document["threads"], document["torch"]) == ("cpu", 1, torch.__version__)
    markdown = out_md.read_text()
    assert markdown.startswith("## CPU: ")
    assert "1 torch thread" in markdown and f"torch {torch.__version__}" in markdown
    assert "`torchlint bench TL101 --device cpu --size small --repeat 2`" in markdown
    assert "\n| TL101 | speedup | measured | " in markdown
    assert "TL101" in capsys.readouterr().out  # the table


def test_a_failed_fixture_exits_one(fixtures_root, tmp_path):
    out_json = tmp_path / "bench.json"
    assert bench("--fixtures", fixtures_root, "--json", out_json) == 1  # TL501 has no fixture there
    results = {r["code"]: r for r in json.loads(out_json.read_text())["results"]}
    assert results["TL501"]["status"] == "failed" and results["TL501"]["reason"] == "no fixture"
    assert set(results) == {rule.code for rule in ALL_RULES}


@pytest.mark.parametrize(
    "args, message",
    [
        (["TL999"], "unknown rule code 'TL999'"),
        (["--repeat", "0"], "--repeat must be at least 1"),
        (["--size", "huge"], "invalid choice: 'huge'"),
        (["--fixtures", "/no/such/dir"], "--fixtures /no/such/dir: no such directory"),
    ],
)
def test_usage_errors_exit_two(args, message, capsys):
    assert main(args) == 2
    assert message in capsys.readouterr().err


def test_unwritable_output_exits_two(fixtures_root, capsys):
    assert bench("TL101", "--fixtures", fixtures_root, "--json", fixtures_root / "missing" / "out.json") == 2
    assert "torchlint: error: cannot write " in capsys.readouterr().err


def test_cuda_requested_without_cuda_exits_two(capsys):
    if torch.cuda.is_available():
        pytest.skip("this machine has CUDA")
    assert main(["--device", "cuda"]) == 2
    assert capsys.readouterr().err == "torchlint: error: --device cuda: no CUDA device is available\n"


def test_linting_never_needs_torch_and_bench_says_it_does(tmp_path):
    (tmp_path / "code.py").write_text("import torch\nx = torch.zeros(3).cuda()\n")
    script = (
        "import sys; sys.modules['torch'] = None\n"  # any `import torch` now raises ImportError
        "from torchlint.cli import main\n"
        "assert main([sys.argv[1]]) == 1\n"
        "sys.exit(main(['bench']))\n"
    )
    env = dict(os.environ, PYTHONPATH=ROOT)
    proc = subprocess.run([sys.executable, "-c", script, str(tmp_path / "code.py")],
                          capture_output=True, text=True, env=env, cwd=tmp_path)
    assert proc.returncode == 2, proc.stderr
    assert proc.stderr == "torchlint: error: `torchlint bench` needs torch: pip install 'torchlint[bench]'\n"


@pytest.mark.slow
def test_shipped_fixtures_pass_on_cpu(tmp_path, run_cli):
    """The real command over every rule's shipped fixture, as CI runs it."""
    out_json = tmp_path / "bench.json"
    proc = run_cli("bench", "--device", "cpu", "--size", "small", "--repeat", "2", "--json", out_json)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    document = json.loads(out_json.read_text())
    jsonschema.validate(document, SCHEMA)
    assert [r["code"] for r in document["results"]] == [rule.code for rule in ALL_RULES]
    for result in document["results"]:
        assert result["lint_consistent"] is True, result
        if result["kind"] == "correctness":  # a verdict, no comparison of outputs
            assert (result["status"] == "measured") == (result["verdict"] is not None), result
        else:
            assert (result["status"] == "measured") == (result["outputs_match"] is True), result
    results = {result["code"]: result for result in document["results"]}
    assert results["TL301"]["status"] == "measured" and results["TL301"]["verdict"].startswith(
        "before.py raises ValueError")
    assert [point["value"] for point in results["TL502"]["sweep"]["points"]] == [1, 2, 4]


@pytest.mark.parametrize("code", [rule.code for rule in ALL_RULES])
def test_shipped_fixture_texts_isolate_their_rule(code):
    """With every rule on, before.py is flagged with its fixture's code and no other; after.py
    and workload.py with nothing."""
    directory = os.path.join(ROOT, "torchlint", "bench", "fixtures", code)
    found = {}
    for name in sorted(os.listdir(directory)):
        if name.endswith(".py"):
            with open(os.path.join(directory, name), encoding="utf-8") as handle:
                found[name] = {d.code for d in lint_text(handle.read(), name, ALL_RULES).diagnostics}
    assert found.pop("before.py") == {code}
    assert found.pop("after.py") == set()
    assert set(found) <= {"workload.py"} and not any(found.values()), found


@pytest.mark.filterwarnings("ignore:'pin_memory' argument is set as true but no accelerator:UserWarning")
@pytest.mark.parametrize("code", ["TL101", "TL102", "TL201", "TL204", "TL302", "TL401", "TL501", "TL503", "TL601", "TL802", "TL803"])
def test_fixtures_skipped_here_still_agree_on_cpu(code, tmp_path, fixtures_root):
    """Run a shipped fixture with its hardware requirements lifted: it must run and agree on the CPU."""
    shutil.copytree(os.path.join(ROOT, "torchlint", "bench", "fixtures", code), tmp_path / "lifted" / code)
    for side in ("before", "after"):
        path = tmp_path / "lifted" / code / f"{side}.py"
        path.write_text(re.sub(r"(?m)^REQUIRES_\w+ = .*$", "", path.read_text()))
    out_json = tmp_path / "bench.json"
    assert bench(code, "--repeat", "1", "--fixtures", tmp_path / "lifted", "--json", out_json) == 0
    [result] = json.loads(out_json.read_text())["results"]
    assert result["status"] == "measured", result
    assert result["outputs_match"] is (None if result["kind"] == "correctness" else True)


def test_committed_documents_full_runs_first_then_later_parts(tmp_path):
    for name in ("cuda-2.json", "cuda.json", "cpu.json", "notes.txt"):
        (tmp_path / name).write_text(json.dumps({"name": name}))
    assert [document["name"] for document in committed(str(tmp_path))] == [
        "cpu.json", "cuda.json", "cuda-2.json"]
    assert committed(str(tmp_path / "missing")) == []
