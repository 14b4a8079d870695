"""``torchlint server`` end to end: a real LSP client (pytest-lsp) drives the real server process."""

import asyncio
import sys

import pytest

from tests.conftest import checkout_env
from torchlint.rules import RULES_BY_CODE

pytest_lsp = pytest.importorskip("pytest_lsp")
from lsprotocol import types  # noqa: E402
from pytest_lsp import ClientServerConfig, LanguageClient  # noqa: E402

BAD = "import torch\nx = torch.zeros(3).cuda()  # noqa: TL201\nfrom torch.utils.data import DataLoader\nloader = DataLoader(ds)\n"
UNSAFE = "import torch\nclass Net(torch.nn.Module):\n    def forward(self, x):\n        return x * torch.ones(x.shape[0])\n"

SERVER = ClientServerConfig(server_command=[sys.executable, "-m", "torchlint", "server"], server_env=checkout_env())


@pytest_lsp.fixture(config=SERVER)
async def client(lsp_client: LanguageClient, tmp_path):
    (tmp_path / "pyproject.toml").write_text('[tool.torchlint]\nextend-select = ["TL003"]\n')
    capabilities = types.ClientCapabilities(notebook_document=types.NotebookDocumentClientCapabilities(
        synchronization=types.NotebookDocumentSyncClientCapabilities()))
    await lsp_client.initialize_session(types.InitializeParams(capabilities=capabilities, root_uri=tmp_path.as_uri()))
    yield
    await lsp_client.shutdown_session()


async def opened(client, path, text, language="python"):
    uri = path.as_uri()
    client.text_document_did_open(types.DidOpenTextDocumentParams(
        types.TextDocumentItem(uri=uri, language_id=language, version=1, text=text)))
    await client.wait_for_notification(types.TEXT_DOCUMENT_PUBLISH_DIAGNOSTICS)
    return uri


async def published(client, uris):
    """Wait until every one of ``uris`` has had diagnostics published (they may come at once)."""
    while not all(uri in client.diagnostics for uri in uris):
        await asyncio.sleep(0.02)


def found(client, uri):
    return [(d.code, d.range.start.line, d.range.start.character, d.range.end.character)
            for d in client.diagnostics.get(uri, [])]


def apply(text, edits):
    lines = text.splitlines(keepends=True)

    def offset(position):
        return sum(len(line) for line in lines[: position.line]) + position.character

    for edit in sorted(edits, key=lambda e: offset(e.range.start), reverse=True):
        text = text[: offset(edit.range.start)] + edit.new_text + text[offset(edit.range.end):]
    return text


async def actions_at(client, uri, line, only=None):
    whole_line = types.Range(types.Position(line, 0), types.Position(line, 80))
    return await client.text_document_code_action_async(types.CodeActionParams(
        text_document=types.TextDocumentIdentifier(uri), range=whole_line,
        context=types.CodeActionContext(diagnostics=[], only=only)))


@pytest.mark.asyncio
async def test_diagnostics_on_open_and_change_with_the_projects_configuration(client: LanguageClient, tmp_path):
    uri = await opened(client, tmp_path / "train.py", BAD)
    assert found(client, uri) == [("TL101", 1, 4, 18), ("TL003", 1, 27, 40), ("TL501", 3, 9, 23)]  # TL003: pyproject
    [first] = [d for d in client.diagnostics[uri] if d.code == "TL101"]
    assert first.source == "torchlint" and first.severity == types.DiagnosticSeverity.Warning
    assert first.code_description.href.endswith("/docs/rules/TL101.md")
    client.text_document_did_change(types.DidChangeTextDocumentParams(
        text_document=types.VersionedTextDocumentIdentifier(uri=uri, version=2),
        content_changes=[types.TextDocumentContentChangePartial(
            range=types.Range(types.Position(3, 0), types.Position(4, 0)), text="")]))  # delete the loader line
    await client.wait_for_notification(types.TEXT_DOCUMENT_PUBLISH_DIAGNOSTICS)
    assert [code for code, *_ in found(client, uri)] == ["TL101", "TL003"]


@pytest.mark.asyncio
async def test_quick_fixes_apply_and_say_when_they_are_unsafe(client: LanguageClient, tmp_path):
    uri = await opened(client, tmp_path / "train.py", BAD)
    quick = [a for a in await actions_at(client, uri, 1) if a.kind == types.CodeActionKind.QuickFix]
    assert [a.title for a in quick] == ["Fix TL101: factory-without-device", "Fix TL003: unused-noqa"]
    assert apply(BAD, quick[0].edit.changes[uri]).splitlines()[1] == (
        'x = torch.zeros(3, device="cuda")  # noqa: TL201')
    assert quick[0].is_preferred and quick[0].diagnostics[0].code == "TL101"
    unsafe_uri = await opened(client, tmp_path / "net.py", UNSAFE)
    [unsafe] = await actions_at(client, unsafe_uri, 3, only=[types.CodeActionKind.QuickFix])
    assert unsafe.title == "Fix TL102 (unsafe): factory-meets-device-tensor" and not unsafe.is_preferred
    assert "torch.ones(x.shape[0], device=x.device)" in apply(UNSAFE, unsafe.edit.changes[unsafe_uri])


@pytest.mark.asyncio
async def test_fix_all_applies_every_safe_fix(client: LanguageClient, tmp_path):
    uri = await opened(client, tmp_path / "train.py", BAD)
    [fix_all] = await actions_at(client, uri, 0, only=["source.fixAll"])
    assert fix_all.kind == "source.fixAll.torchlint" and fix_all.title == "torchlint: fix all (2 safe fixes)"
    assert apply(BAD, fix_all.edit.changes[uri]).splitlines()[1] == 'x = torch.zeros(3, device="cuda")'


@pytest.mark.asyncio
async def test_hover_shows_the_rule_page(client: LanguageClient, tmp_path):
    uri = await opened(client, tmp_path / "train.py", BAD)

    async def hover(line, character):
        return await client.text_document_hover_async(types.HoverParams(
            types.TextDocumentIdentifier(uri), types.Position(line, character)))

    on_code = await hover(1, 38)  # the TL201 of the noqa comment
    assert on_code.contents.value.startswith("# TL201 host-sync-in-hot-path")
    on_finding = await hover(3, 12)
    assert on_finding.contents.value.startswith("# TL501 dataloader-without-workers")
    assert await hover(0, 3) is None


@pytest.mark.asyncio
async def test_notebook_cells_get_their_own_diagnostics(client: LanguageClient, tmp_path):
    notebook_uri = (tmp_path / "train.ipynb").as_uri()
    cells = [f"{notebook_uri}#cell{n}" for n in range(3)]
    texts = ["import torch\n", "def broken(:\n", "x = torch.zeros(3).cuda()\n"]
    client.notebook_document_did_open(types.DidOpenNotebookDocumentParams(
        notebook_document=types.NotebookDocument(uri=notebook_uri, notebook_type="jupyter-notebook", version=1, cells=[
            types.NotebookCell(kind=types.NotebookCellKind.Code, document=cell) for cell in cells]),
        cell_text_documents=[types.TextDocumentItem(uri=cell, language_id="python", version=1, text=text)
                             for cell, text in zip(cells, texts)]))
    await asyncio.wait_for(published(client, cells), timeout=30)
    assert [found(client, cell) for cell in cells] == [[], [("TL001", 0, 11, 11)], [("TL101", 0, 4, 18)]]
    [fix] = await actions_at(client, cells[2], 0, only=[types.CodeActionKind.QuickFix])
    assert apply(texts[2], fix.edit.changes[cells[2]]) == 'x = torch.zeros(3, device="cuda")\n'


@pytest.mark.asyncio
async def test_preview_rules_follow_the_projects_setting(client: LanguageClient, tmp_path):
    transposed = RULES_BY_CODE["TL302"].example.source  # a preview rule's example
    uri = await opened(client, tmp_path / "load.py", transposed)
    assert found(client, uri) == []
    (tmp_path / "preview").mkdir()
    (tmp_path / "preview" / "pyproject.toml").write_text("[tool.torchlint]\npreview = true\n")
    uri = await opened(client, tmp_path / "preview" / "load.py", transposed)
    assert [code for code, *_ in found(client, uri)] == ["TL302"]
