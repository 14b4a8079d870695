"""Lint one source text: parse once, walk once with every rule, resolve what is kept."""

from __future__ import annotations

import importlib.metadata
import warnings
from dataclasses import dataclass, field
from typing import FrozenSet, List, Optional, Sequence, Tuple, Type

import libcst as cst

from torchlint.codes import known_codes, syntax_error
from torchlint.context import FileContext
from torchlint.context.imports import module_name, reexports
from torchlint.diagnostics import SAFE, Diagnostic, Edit, Fix
from torchlint.libcst_internals import parse_module
from torchlint.noqa import noqa_by_line, suppressed, unused_noqa
from torchlint.positions import Positions
from torchlint.project import Elsewhere, ProjectFacts
from torchlint.rules.base import Finding, Rule
from torchlint.walker import DispatchTable, walk

# Larger sources are generated data, not code: parsing 10 MB takes minutes and gigabytes.
MAX_SOURCE_CHARS = 2_000_000


@dataclass
class LintResult:
    diagnostics: List[Diagnostic] = field(default_factory=list)
    errors: List[str] = field(default_factory=list)  # internal errors, one line each
    parsed: bool = True
    project: ProjectFacts = field(default_factory=ProjectFacts)  # what the other files of a run need


class _RuleFailed(Exception):
    def __init__(self, rule: Rule, error: BaseException) -> None:
        super().__init__(f"internal error in {rule.code} ({rule.name}): {type(error).__name__}: {error}")
        self.rule_type = type(rule)


def lint_text(
    text: str,
    path: str,
    rules: Sequence[Type[Rule]],
    hot_functions: FrozenSet[str] = frozenset(),
    apply_noqa: bool = True,
    report_unused_noqa: bool = False,
    elsewhere: Optional[Elsewhere] = None,
) -> LintResult:
    """Every rule's findings in ``text``, without those ``# noqa`` suppresses (unless not
    ``apply_noqa``), and TL003 for suppressions that suppress nothing if asked.
    ``elsewhere``: what the other files of the run tell this one (``torchlint.project``)."""
    result = _lint(text, path, rules, hot_functions, elsewhere)
    if apply_noqa and result.parsed:
        found = result.diagnostics
        if found:
            noqa = noqa_by_line(text.splitlines(), (d.line for d in found))
            result.diagnostics = [d for d in found if not suppressed(d.code, noqa[d.line])]
        if report_unused_noqa:
            enabled = {rule.code for rule in rules}
            result.diagnostics += unused_noqa(text, path, found, enabled, known_codes())
    result.diagnostics.sort()
    return result


def _lint(
    text: str, path: str, rules: Sequence[Type[Rule]], hot_functions: FrozenSet[str],
    elsewhere: Optional[Elsewhere],
) -> LintResult:
    result = LintResult()
    if len(text) > MAX_SOURCE_CHARS:
        result.parsed = False
        result.errors.append(
            f"skipped: {len(text) / 1e6:.1f} MB is over the {MAX_SOURCE_CHARS / 1e6:.0f} MB limit "
            "for a source file (generated? add it to `exclude`)"
        )
        return result
    active = [rule for rule in rules if any(trigger in text for trigger in rule.triggers)]
    reexporting = path.endswith("__init__.py") and "import" in text  # what the run needs from a package
    if not active and not reexporting:
        _check_syntax_cheaply(text, path, result)
        return result
    try:
        module = parse_module(text)
    except cst.ParserSyntaxError:
        result.parsed = False
        if _check_syntax_cheaply(text, path, result):  # valid Python that libcst cannot parse
            version = importlib.metadata.version("libcst")
            result.errors.append(f"not linted: valid Python that libcst {version} cannot parse")
        return result
    except (RecursionError, MemoryError, ValueError) as exc:
        result.parsed = False
        result.errors.append(f"cannot parse: {type(exc).__name__}: {exc}")
        return result
    if not active:
        result.project = ProjectFacts(reexports=reexports(module, module_name(path)))
        return result
    while True:
        try:
            findings, context = _run_rules(module, text, active, hot_functions, path, elsewhere)
            break
        except _RuleFailed as failure:
            result.errors.append(str(failure))
            active = [rule for rule in active if rule is not failure.rule_type]
    kept, unsettled = [], []
    for finding in findings:
        (kept if finding.counts() else unsettled).append(finding)
    result.project = context.project_facts(unsettled)
    if kept:
        wanted = [f.node for f in kept] + [r.node for f in kept for r in f.replacements]
        positions = Positions(module, wanted, text)
        result.diagnostics.extend(_diagnostic(f, path, module, positions) for f in kept)
    return result


def _run_rules(
    module: cst.Module, text: str, rule_types: Sequence[Type[Rule]], hot_functions: FrozenSet[str], path: str = "",
    elsewhere: Optional[Elsewhere] = None,
) -> Tuple[List[Finding], FileContext]:
    context = FileContext(module, text, hot_functions, path, elsewhere)
    findings: List[Finding] = []
    seen = set()

    def sink(finding: Finding) -> None:
        key = (finding.rule.code, id(finding.node))
        if key not in seen:
            seen.add(key)
            findings.append(finding)

    rules = [rule_type(context, sink) for rule_type in rule_types]
    table = DispatchTable([context, *rules])
    try:
        walk(module, table, context.ancestors)
    except _RuleFailed:
        raise
    except Exception as error:  # a rule's hook raised: find which, report it, go on without it
        culprit = _culprit(error)
        if culprit is None:
            raise  # the shared context failed: no rule can lint this file
        raise _RuleFailed(culprit, error) from error
    return findings, context


def _culprit(error: BaseException) -> Optional[Rule]:
    """The rule whose code raised ``error``, if a rule's did."""
    traceback = error.__traceback__
    culprit = None
    while traceback is not None:
        owner = traceback.tb_frame.f_locals.get("self")
        if isinstance(owner, Rule):
            culprit = owner
        traceback = traceback.tb_next
    return culprit


def _diagnostic(finding: Finding, path: str, module: cst.Module, positions: Positions) -> Diagnostic:
    (line, column), (end_line, end_column) = positions.span(finding.node)
    fix = None
    if finding.replacements:
        edits = []
        for replacement in finding.replacements:
            start, end = positions.code_span(replacement.node)
            new = replacement.new
            content = new if isinstance(new, str) else module.code_for_node(new)
            edits.append(Edit(start, end, content))
        applicability = finding.applicability or finding.rule.fix or SAFE
        fix = Fix(applicability, tuple(sorted(edits, key=lambda e: e.start)))
    return Diagnostic(
        path, line, column + 1, finding.rule.code, finding.message, end_line, end_column + 1, fix
    )


def _check_syntax_cheaply(text: str, path: str, result: LintResult) -> bool:
    """Check syntax with Python's own parser (files no rule can fire in, libcst failures)."""
    try:
        with warnings.catch_warnings():  # e.g. invalid escape sequences: not ours to report
            warnings.simplefilter("ignore")
            compile(text, path, "exec", dont_inherit=True, flags=0x400)  # ast.PyCF_ONLY_AST
        return True
    except SyntaxError as exc:
        result.parsed = False
        result.diagnostics.append(syntax_error(path, exc.lineno or 1, exc.offset or 1, exc.msg))
    except (ValueError, RecursionError, MemoryError) as exc:
        result.parsed = False
        result.errors.append(f"cannot parse: {type(exc).__name__}: {exc}")
    return False
