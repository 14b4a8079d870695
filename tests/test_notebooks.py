"""Jupyter notebooks: linted cell by cell, positions in cells, fixes that touch only the cell."""

import json

import pytest

from torchlint.notebooks import parse_notebook
from torchlint.source import SourceError

MARKDOWN = {"cell_type": "markdown", "id": "m1", "metadata": {}, "source": ["# Training — fast ✓\n", "notes"]}


def code(source, count, outputs=(), as_list=True):
    return {"cell_type": "code", "execution_count": count, "id": f"c{count}", "metadata": {"tags": []},
            "outputs": list(outputs), "source": source.splitlines(True) if as_list else source}


def notebook(*cells, language="python"):
    return {"cells": [MARKDOWN, *cells], "nbformat": 4, "nbformat_minor": 5,
            "metadata": {"kernelspec": {"display_name": "Python 3", "language": language, "name": "k"},
                         "language_info": {"name": language, "version": "3.11.0"}}}


def write(path, document, **dump):
    text = json.dumps(document, **(dump or {"indent": 1, "ensure_ascii": False})) + "\n"
    path.write_text(text, encoding="utf-8")
    return text


CELLS = (
    code("%matplotlib inline\nimport torch\n!pip install x\nfiles = !ls\nprint(files)  # all?\n", 1),
    code("%%bash\necho hi\n", 2, [{"name": "stdout", "output_type": "stream", "text": ["hi\n"]}]),
    code("for i in range(3):\n    %time f()\n    y = torch.zeros(3).cuda()\nx = (1\n     % 2)\ntorch.zeros?", 3,
         [{"data": {"text/plain": ["3"]}, "execution_count": 3, "metadata": {}, "output_type": "execute_result"}]),
    code("from torch.utils.data import DataLoader\nloader = DataLoader(ds)", 4, as_list=False),
)


def test_lint_positions_name_cell_and_line(tmp_path, run_cli):
    write(tmp_path / "train.ipynb", notebook(*CELLS))
    proc = run_cli("--format", "json", ".")  # discovered with .py files
    items = json.loads(proc.stdout)
    assert [(i["path"], i["cell"], i["line"], i["column"], i["code"]) for i in items] == [
        ("train.ipynb", 4, 3, 9, "TL101"), ("train.ipynb", 5, 2, 10, "TL501")]
    assert items[0]["end_line"] == 3 and items[0]["fix"]["edits"][0]["start"]["line"] == 3
    text = run_cli("train.ipynb").stdout.splitlines()
    assert text[0].startswith("train.ipynb:cell 4:3:9: TL101 ")


def test_fix_rewrites_only_the_changed_cell(tmp_path, run_cli):
    path = tmp_path / "train.ipynb"
    before = write(path, notebook(*CELLS))
    proc = run_cli("--fix", "train.ipynb")
    assert proc.returncode == 1 and "Fixed 1 finding" in proc.stdout  # TL501 has no fix
    after = path.read_text(encoding="utf-8")
    changed = [(old, new) for old, new in zip(before.splitlines(), after.splitlines()) if old != new]
    assert changed == [('    "    y = torch.zeros(3).cuda()\\n",',
                        '    "    y = torch.zeros(3, device=\\"cuda\\")\\n",')]
    assert len(after.splitlines()) == len(before.splitlines()) and after.endswith("}\n")
    assert json.loads(after)["cells"][3]["source"][1] == "    %time f()\n"
    assert run_cli("--fix", "train.ipynb").stdout.count("Fixed") == 0  # idempotent


def test_fix_keeps_string_sources_and_other_layouts(tmp_path, run_cli):
    path = tmp_path / "nb.ipynb"
    document = notebook(code("import torch\nx = torch.zeros(2).cuda()", 1, as_list=False))
    write(path, document, indent=2, ensure_ascii=True)
    assert run_cli("--fix", "nb.ipynb").returncode == 0
    fixed = json.loads(path.read_text())
    assert fixed["cells"][1]["source"] == 'import torch\nx = torch.zeros(2, device="cuda")'
    document["cells"][1]["source"] = fixed["cells"][1]["source"]
    assert path.read_text() == json.dumps(document, indent=2, ensure_ascii=True) + "\n"


def test_unreproducible_layout_is_not_rewritten(tmp_path, run_cli):
    path = tmp_path / "nb.ipynb"
    before = write(path, notebook(code("import torch\nx = torch.zeros(2).cuda()\n", 1)), separators=(",", ":"))
    proc = run_cli("--fix", "nb.ipynb")
    assert proc.returncode == 2 and "JSON layout" in proc.stderr
    assert path.read_text() == before


def test_diff_shows_cells(tmp_path, run_cli):
    write(tmp_path / "train.ipynb", notebook(*CELLS))
    proc = run_cli("--diff", "train.ipynb")
    assert "--- train.ipynb:cell 4\n+++ train.ipynb:cell 4\n" in proc.stdout
    assert '+    y = torch.zeros(3, device="cuda")\n' in proc.stdout


def test_syntax_error_in_a_cell(tmp_path, run_cli):
    write(tmp_path / "nb.ipynb", notebook(code("import torch\n", 1), code("x = 1\ndef f(:\n", 2)))
    [item] = json.loads(run_cli("--format", "json", "nb.ipynb").stdout)
    assert (item["code"], item["cell"], item["line"]) == ("TL001", 3, 2)


def test_other_languages_are_skipped(tmp_path, run_cli):
    write(tmp_path / "r.ipynb", notebook(code("library(torch)\nx <- torch_randn(3)$cuda()\n", 1), language="R"))
    assert run_cli("r.ipynb").returncode == 0


def test_malformed_notebooks_are_one_line_findings(tmp_path, run_cli):
    (tmp_path / "trunc.ipynb").write_text('{"cells": [')
    (tmp_path / "v3.ipynb").write_text('{"worksheets": [], "nbformat": 3}')
    (tmp_path / "cell.ipynb").write_text('{"cells": [{"cell_type": "code", "source": 3}]}')
    (tmp_path / "bad.py").write_text("import torch\nx = torch.zeros(3).cuda()\n")
    proc = run_cli(".")
    assert proc.returncode == 1 and proc.stderr == ""
    skipped = [line for line in proc.stdout.splitlines() if " TL002 " in line]
    assert len(skipped) == 3 and all("malformed notebook" in line for line in skipped)
    assert "bad.py:2:5: TL101" in proc.stdout


def test_ipython_lines_survive_fixes_that_move_lines():
    nb = parse_notebook(json.dumps(notebook(*CELLS)).encode())
    assert "%" not in nb.text.split("for i")[0] and "!" not in nb.text  # IPython lines became `pass`
    assert "print(files)  # all?\n" in nb.text and "     % 2)\n" in nb.text  # Python lines did not
    grown = nb.text.replace("import torch\n", "import torch\nimport numpy\n")
    old = "".join(CELLS[0]["source"])
    assert nb.changed_cells(grown) == [(2, old, old.replace("import torch\n", "import torch\nimport numpy\n"))]
    with pytest.raises(SourceError, match="IPython line in cell 4"):
        nb.changed_cells(nb.text.replace("    pass\n", "    print()\n"))


def test_a_cell_that_does_not_parse_hides_no_other_cell(tmp_path, run_cli):
    write(tmp_path / "nb.ipynb", notebook(
        code("import torch\nx = torch.zeros(3).cuda()\n", 1),
        code("def broken(:\n    pass\n", 2),
        code("await setup()\ny = torch.ones(2).cuda()\n", 3),  # IPython runs a top-level await
    ))
    proc = run_cli("--format", "json", "nb.ipynb")
    found = [(i["cell"], i["line"], i["code"]) for i in json.loads(proc.stdout)]
    assert found == [(2, 2, "TL101"), (3, 1, "TL001"), (4, 2, "TL101")]  # cell 1 is markdown
    assert run_cli("--fix", "nb.ipynb").returncode == 1
    sources = ["".join(cell["source"]) for cell in json.loads((tmp_path / "nb.ipynb").read_text())["cells"]]
    assert 'torch.zeros(3, device="cuda")' in sources[1] and 'torch.ones(2, device="cuda")' in sources[3]
    assert sources[2] == "def broken(:\n    pass\n"


def test_github_annotations_of_notebooks_have_lines(tmp_path, run_cli):
    write(tmp_path / "nb.ipynb", notebook(code("import torch\nx = torch.zeros(3).cuda()\n", 1)))
    line = run_cli("--format", "github", "nb.ipynb").stdout.splitlines()[0]
    assert line.startswith("::warning file=nb.ipynb,line=2,col=5,endLine=2,endColumn=19,title=TL101::cell 2: ")
