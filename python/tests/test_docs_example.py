"""The README's example is docs/python.md's, and it runs (with a smaller fuzzing budget)."""

import os
import re

import pytest

from conftest import SOURCE_DIR


def example(path, heading):
    text = open(os.path.join(SOURCE_DIR, path), encoding="utf-8").read()
    section = text[text.index(heading):]
    return re.search(r"```python\n(.*?)```", section, re.S).group(1)


def test_the_readme_example_is_the_docs_example_and_runs(monkeypatch, torch):
    code = example("README.md", "## In your own pytest")
    assert code == example("docs/python.md", "## Example")
    assert "seconds=10" in code
    monkeypatch.chdir(SOURCE_DIR)
    exec(compile(code.replace("seconds=10", "cases=20"), "README.md", "exec"), {})
