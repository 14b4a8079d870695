"""``--format junit``: JUnit XML, one test suite per file and one failing test case per
finding, the layout CI dashboards (GitLab, Jenkins, Azure) read. A clean run is one passing
test case."""

from __future__ import annotations

from itertools import groupby
from typing import List, TextIO
from xml.etree import ElementTree

from torchlint.diagnostics import Diagnostic
from torchlint.reporters.text import location


def report_junit(diagnostics: List[Diagnostic], stream: TextIO, color: bool = False) -> None:
    count = str(len(diagnostics))
    root = ElementTree.Element("testsuites", name="torchlint", tests=count, failures=count, errors="0")
    if not diagnostics:
        suite = ElementTree.SubElement(root, "testsuite", name="torchlint", tests="1", failures="0", errors="0")
        ElementTree.SubElement(suite, "testcase", name="No findings", classname="torchlint")
    for path, group in groupby(diagnostics, key=lambda d: d.path):
        found = list(group)
        suite = ElementTree.SubElement(
            root, "testsuite", name=path, tests=str(len(found)), failures=str(len(found)), errors="0"
        )
        for d in found:
            case = ElementTree.SubElement(
                suite, "testcase", name=f"torchlint.{d.code}", classname=path, line=str(d.line), column=str(d.column)
            )
            failure = ElementTree.SubElement(case, "failure", message=d.message)
            failure.text = f"{location(d)}: {d.code} {d.message}"
    ElementTree.indent(root)
    stream.write('<?xml version="1.0" encoding="UTF-8"?>\n')
    stream.write(ElementTree.tostring(root, encoding="unicode") + "\n")
