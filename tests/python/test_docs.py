"""Every ```python block of docs/python.md and README.md runs, in order, in one namespace per
file (blocks fenced as ```python nki are NKI code for comparison and are skipped), and the C++
blocks of the tutorials (python.md, kernel.md) compile."""
import os
import re
import subprocess

import pytest

SOURCE = os.environ.get("TRN_SOURCE_DIR", os.path.join(os.path.dirname(__file__), "..", ".."))


def python_blocks(path):
    """Each block, preceded by blank lines so that its lines keep their numbers in the file."""
    text = open(path, encoding="utf-8").read()
    blocks = []
    for match in re.finditer(r"^```python\n(.*?)^```", text, re.S | re.M):
        first_line = text.count("\n", 0, match.start(1)) + 1
        blocks.append("\n" * (first_line - 1) + match.group(1))
    return blocks


def test_python_md_runs(capsys):
    path = os.path.join(SOURCE, "docs", "python.md")
    blocks = python_blocks(path)
    assert len(blocks) >= 6
    namespace = {}
    for block in blocks:
        exec(compile(block, path, "exec"), namespace)  # noqa: S102
    printed = capsys.readouterr().out
    assert "-bound (" in printed and "remedy" in printed
    assert "python.md:" in printed and "nl.add" in printed  # the error example names its line


def test_readme_python_runs(capsys):
    path = os.path.join(SOURCE, "README.md")
    blocks = python_blocks(path)
    assert blocks
    for block in blocks:
        exec(compile(block, path, "exec"), {})  # noqa: S102
    assert "trnsim run report: trn2" in capsys.readouterr().out


TUTORIAL_CPP = ["docs/python.md", "docs/kernel.md"]


def cpp_blocks(path):
    text = open(path, encoding="utf-8").read()
    return re.findall(r"^```cpp\n(.*?)^```", text, re.S | re.M)


@pytest.mark.parametrize("doc", TUTORIAL_CPP)
def test_tutorial_cpp_blocks_compile(doc, tmp_path):
    """The C++ of the tutorials compiles as written, each block a translation unit of its own,
    against the project's headers."""
    blocks = cpp_blocks(os.path.join(SOURCE, doc))
    assert blocks
    compiler = os.environ.get("CXX", "c++")
    for i, block in enumerate(blocks):
        source = tmp_path / f"block{i}.cpp"
        source.write_text(block)
        result = subprocess.run(
            [compiler, "-std=c++20", "-fsyntax-only", "-I", os.path.join(SOURCE, "include"),
             str(source)], capture_output=True, text=True)
        assert result.returncode == 0, f"{doc} block {i}:\n{result.stderr}"
