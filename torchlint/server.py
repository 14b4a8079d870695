"""``torchlint server``: a Language Server Protocol server over stdio, built on pygls.

It lints Python documents on open, change and save (notebooks through LSP's notebook
document sync: each cell gets its own diagnostics), reads ``[tool.torchlint]`` from the
pyproject.toml nearest each document, offers every fix as a quick fix (unsafe ones say
so) and the safe fixes of a whole file as ``source.fixAll.torchlint``, and shows a rule's
page on hover over its code or over a finding.
"""

from __future__ import annotations

import json
import os
import re
from typing import Dict, List, Optional, Tuple

from torchlint import DOCS_URL, __version__
from torchlint.codes import IO_ERROR, SYNTAX_ERROR, code_name, known_codes
from torchlint.config import ConfigError, Settings, find_pyproject, load_settings
from torchlint.diagnostics import SAFE, Diagnostic, Edit
from torchlint.docs import rule_page
from torchlint.runner import CHECK, FIX, Options, process_source
from torchlint.usage import EXIT_CLEAN, Parser

FIX_ALL = "source.fixAll.torchlint"
_CODE = re.compile(r"TL\d{3}")


def main(argv: List[str]) -> int:
    parser = Parser(prog="torchlint server", description="Run the language server on stdin/stdout.")
    parser.parse_args(argv)
    try:
        server = build_server()
    except ImportError:
        raise ConfigError("torchlint server needs pygls: pip install 'torchlint[server]'") from None
    server.start_io()
    return EXIT_CLEAN


class SettingsCache:
    """Settings per pyproject.toml, read again when the file changes."""

    def __init__(self) -> None:
        self._cache: Dict[Optional[str], Tuple[float, Settings]] = {}

    def for_path(self, path: str) -> Settings:
        pyproject = find_pyproject(path)
        stamp = os.stat(pyproject).st_mtime if pyproject else 0.0
        cached = self._cache.get(pyproject)
        if cached is None or cached[0] != stamp:  # a bad file raises ConfigError, every time
            cached = self._cache[pyproject] = (stamp, load_settings(pyproject, known_codes()))
        return cached[1]


def build_server():
    from lsprotocol import types
    from pygls.lsp.server import LanguageServer
    from pygls.uris import to_fs_path
    from pygls.workspace.position_codec import ServerTextPosition, ServerTextRange

    notebook_sync = types.NotebookDocumentSyncOptions(notebook_selector=[
        types.NotebookDocumentFilterWithCells(
            notebook="jupyter-notebook", cells=[types.NotebookCellLanguage(language="python")]),
    ])
    server = LanguageServer("torchlint", __version__, notebook_document_sync=notebook_sync)
    settings_cache = SettingsCache()
    findings: Dict[str, List[Diagnostic]] = {}  # document (or cell) uri -> its last findings

    def path_of(uri: str) -> str:
        return to_fs_path(uri) or uri

    def settings_for(path: str) -> Optional[Settings]:
        try:
            return settings_cache.for_path(path)
        except ConfigError as exc:
            server.window_log_message(types.LogMessageParams(types.MessageType.Error, f"torchlint: {exc}"))
            return None

    def client_range(document, start: Tuple[int, int], end: Tuple[int, int]):
        """An LSP range (client units) from 1-based lines and 0-based code point columns."""
        server_range = ServerTextRange(ServerTextPosition(start[0] - 1, start[1]), ServerTextPosition(end[0] - 1, end[1]))
        return document.range_to_client_units(server_range)

    def to_lsp(document, d: Diagnostic):
        end = (d.end_line, d.end_column - 1) if d.end_line else (d.line, d.column - 1)
        return types.Diagnostic(
            range=client_range(document, (d.line, d.column - 1), end),
            message=d.message,
            severity=types.DiagnosticSeverity.Error if d.code in (SYNTAX_ERROR, IO_ERROR)
            else types.DiagnosticSeverity.Warning,
            code=d.code,
            code_description=types.CodeDescription(href=f"{DOCS_URL}/rules/{d.code}.md"),
            source="torchlint",
        )

    def publish(uri: str, found: List[Diagnostic]) -> None:
        document = server.workspace.get_text_document(uri)
        findings[uri] = found
        server.text_document_publish_diagnostics(types.PublishDiagnosticsParams(
            uri=uri, version=document.version, diagnostics=[to_lsp(document, d) for d in found]))

    def lint_document(uri: str) -> None:
        if server.workspace.get_notebook_document(cell_uri=uri) is not None:
            return  # cells are linted with their notebook
        document = server.workspace.get_text_document(uri)
        path = path_of(uri)
        settings = settings_for(path)
        if settings is None or settings.is_excluded(path):
            publish(uri, [])
            return
        outcome = process_source(path, document.source.encode("utf-8"), settings, Options(CHECK), stdin=True)
        publish(uri, outcome.diagnostics)

    def lint_notebook(notebook_uri: str) -> None:
        notebook = server.workspace.get_notebook_document(notebook_uri=notebook_uri)
        if notebook is None:
            return
        cells = [cell.document for cell in notebook.cells if cell.kind == types.NotebookCellKind.Code]
        path = path_of(notebook_uri)
        settings = settings_for(path)
        results: Dict[int, List[Diagnostic]] = {}
        if settings is not None and not settings.is_excluded(path):
            document = {"nbformat": 4, "nbformat_minor": 5, "metadata": {}, "cells": [
                {"cell_type": "code", "metadata": {}, "source": server.workspace.get_text_document(uri).source}
                for uri in cells]}
            data = json.dumps(document).encode("utf-8")
            outcome = process_source(path if path.endswith(".ipynb") else path + ".ipynb", data, settings,
                                     Options(CHECK), stdin=True)
            for d in outcome.diagnostics:
                results.setdefault((d.cell or 1) - 1, []).append(d)
        for index, uri in enumerate(cells):
            publish(uri, results.get(index, []))

    for method in (types.TEXT_DOCUMENT_DID_OPEN, types.TEXT_DOCUMENT_DID_CHANGE, types.TEXT_DOCUMENT_DID_SAVE):
        server.feature(method)(lambda params: lint_document(params.text_document.uri))
    for method in (types.NOTEBOOK_DOCUMENT_DID_OPEN, types.NOTEBOOK_DOCUMENT_DID_CHANGE,
                   types.NOTEBOOK_DOCUMENT_DID_SAVE):
        server.feature(method)(lambda params: lint_notebook(params.notebook_document.uri))

    @server.feature(types.TEXT_DOCUMENT_DID_CLOSE)
    def did_close(params: types.DidCloseTextDocumentParams) -> None:
        findings.pop(params.text_document.uri, None)
        server.text_document_publish_diagnostics(
            types.PublishDiagnosticsParams(uri=params.text_document.uri, diagnostics=[]))

    def text_edit(document, edit: Edit):
        return types.TextEdit(range=client_range(document, edit.start, edit.end), new_text=edit.content)

    def overlaps(document, d: Diagnostic, wanted) -> bool:
        found = to_lsp(document, d).range
        return (found.start.line, found.start.character) <= (wanted.end.line, wanted.end.character) and (
            wanted.start.line, wanted.start.character) <= (found.end.line, found.end.character)

    @server.feature(
        types.TEXT_DOCUMENT_CODE_ACTION,
        types.CodeActionOptions(code_action_kinds=[types.CodeActionKind.QuickFix, FIX_ALL], resolve_provider=False),
    )
    def code_actions(params: types.CodeActionParams) -> List[types.CodeAction]:
        uri = params.text_document.uri
        document = server.workspace.get_text_document(uri)
        only = params.context.only
        actions = []
        if not only or any(kind.startswith(types.CodeActionKind.QuickFix) for kind in only):
            for d in findings.get(uri, []):
                if d.fix is None or not overlaps(document, d, params.range):
                    continue
                unsafe = "" if d.fix.applicability == SAFE else " (unsafe)"
                actions.append(types.CodeAction(
                    title=f"Fix {d.code}{unsafe}: {code_name(d.code)}",
                    kind=types.CodeActionKind.QuickFix,
                    diagnostics=[to_lsp(document, d)],
                    is_preferred=not unsafe,
                    edit=types.WorkspaceEdit(changes={uri: [text_edit(document, e) for e in d.fix.edits]}),
                ))
        fix_all = not only or any(FIX_ALL.startswith(kind) for kind in only)
        if fix_all and server.workspace.get_notebook_document(cell_uri=uri) is None:
            action = fix_all_action(uri, document)
            if action is not None:
                actions.append(action)
        return actions

    def fix_all_action(uri: str, document) -> Optional["types.CodeAction"]:
        path = path_of(uri)
        settings = settings_for(path)
        if settings is None or settings.is_excluded(path) or path.endswith(".ipynb"):
            return None
        outcome = process_source(path, document.source.encode("utf-8"), settings, Options(FIX), stdin=True)
        if outcome.new_contents is None:
            return None
        whole = types.Range(start=types.Position(0, 0), end=types.Position(len(document.lines), 0))
        return types.CodeAction(
            title=f"torchlint: fix all ({outcome.fixed} safe fix{'es' * (outcome.fixed != 1)})",
            kind=FIX_ALL,
            edit=types.WorkspaceEdit(changes={uri: [types.TextEdit(range=whole, new_text=outcome.new_contents.decode("utf-8"))]}),
        )

    @server.feature(types.TEXT_DOCUMENT_HOVER)
    def hover(params: types.HoverParams) -> Optional[types.Hover]:
        uri = params.text_document.uri
        document = server.workspace.get_text_document(uri)
        word = document.word_at_position(params.position)
        code = word if _CODE.fullmatch(word or "") else None
        if code is None:
            covering = [d for d in findings.get(uri, []) if overlaps(document, d, types.Range(params.position, params.position))]
            code = covering[0].code if covering else None
        page = rule_page(code) if code else None
        if page is None:
            return None
        return types.Hover(contents=types.MarkupContent(kind=types.MarkupKind.Markdown, value=page))

    return server
