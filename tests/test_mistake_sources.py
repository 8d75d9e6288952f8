"""The bank's public sources: a mutant that names where real code made its mistake names it well.

A mistake file may carry, after its ``Must fail:`` line, a ``Source: <URL>`` line (a GitHub issue,
pull request, commit or file, or a web page) and one line saying what that source shows
(docs/mistakes.md, "Where a mistake comes from"). These tests check the form of every such line and
that every exercise (the ten original ones and the efficient variants) has at least five mutants
backed by a public source.
"""
import ast
import re
from pathlib import Path
from urllib.parse import urlsplit

import pytest

EXERCISES = Path(__file__).resolve().parents[1] / "exercises"
ORIGINAL_TEN = ("softmax", "attention_scores", "mha", "causal_mask", "kv_cache", "gqa",
                "positional_encoding", "rope", "transformer_block", "flash_attention")
ALL_EXERCISES = tuple(sorted(p.parent.name for p in EXERCISES.glob("*/exercise.toml")))
SOURCE_LINE = re.compile(r"^Source:\s*(\S.*?)\s*$", re.MULTILINE)
# owner/name, then what GitHub calls the page: an issue, a pull request, a commit or a file
GITHUB_PATH = re.compile(r"^/[A-Za-z0-9][A-Za-z0-9_.-]*/[A-Za-z0-9_.-]+/"
                         r"(issues/\d+|pull/\d+|commit/[0-9a-f]{7,40}|blob/\S+|tree/\S+|discussions/\d+)/?$")


def source_problems(doc: str) -> list[str]:
    """What is wrong with the ``Source:`` lines of one mistake docstring.

    Args:
        doc: the docstring of a mistake file.

    Returns:
        One sentence per problem (empty when the docstring has no ``Source:`` line, or a well-formed
        one): more than one source line, a URL that is not ``https`` with a host, a GitHub URL that
        is not an issue/PR/commit/file of one repository, no line after it saying what the source
        shows, or a source placed before the ``Must fail:`` line.
    """
    found = SOURCE_LINE.findall(doc)
    if not found:
        return []
    if len(found) > 1:
        return [f"{len(found)} 'Source:' lines, expected one"]
    url = found[0]
    problems = []
    parts = urlsplit(url)
    if parts.scheme != "https" or not parts.netloc or " " in url:
        problems.append(f"{url!r} is not an https URL with a host")
    elif parts.netloc == "github.com" and not GITHUB_PATH.match(parts.path):
        problems.append(f"{url!r} is not a GitHub issue, pull request, commit or file URL")
    lines = doc.splitlines()
    at = next(i for i, line in enumerate(lines) if line.startswith("Source:"))
    after = lines[at + 1].strip() if at + 1 < len(lines) else ""
    if not after or after.startswith(("Must fail:", "Source:")):
        problems.append("no line after 'Source:' saying what the source shows")
    must_fail = next((i for i, line in enumerate(lines) if line.startswith("Must fail:")), None)
    if must_fail is None or must_fail > at:
        problems.append("'Source:' comes before the 'Must fail:' line (the diagnosis paragraph must stay first)")
    return problems


def _mistake_files():
    return sorted(p for p in EXERCISES.glob("*/mistakes*/*.py") if not p.name.startswith("_"))


def _doc(path: Path) -> str:
    return ast.get_docstring(ast.parse(path.read_text(encoding="utf-8"))) or ""


@pytest.mark.parametrize("path", [p for p in _mistake_files() if SOURCE_LINE.search(_doc(p))],
                         ids=lambda p: f"{p.parent.parent.name}/{p.parent.name}/{p.stem}")
def test_every_source_is_a_well_formed_url_with_a_line_on_what_it_shows(path):
    assert source_problems(_doc(path)) == []


def test_the_bank_covers_the_original_ten_and_the_efficient_variants():
    assert set(ORIGINAL_TEN) | {"linear_attention", "sliding_window_attention"} <= set(ALL_EXERCISES)


@pytest.mark.parametrize("exercise_id", ALL_EXERCISES)
def test_each_exercise_has_five_mutants_with_a_public_source(exercise_id):
    sourced = [p.stem for p in EXERCISES.glob(f"{exercise_id}/mistakes*/*.py") if SOURCE_LINE.search(_doc(p))]
    assert len(sourced) >= 5, f"{exercise_id}: {len(sourced)} mutants name a public source: {sorted(sourced)}"


@pytest.mark.parametrize("doc, problem", [
    ("d.\n\nMust fail: values\n\nSource: github.com/a/b/issues/1\nshows it.", "not an https URL"),
    ("d.\n\nMust fail: values\n\nSource: https://github.com/a/b\nshows it.", "not a GitHub issue"),
    ("d.\n\nMust fail: values\n\nSource: https://github.com/a/b/issues/x\nshows it.", "not a GitHub issue"),
    ("d.\n\nMust fail: values\n\nSource: https://github.com/a/b/pull/3", "no line after"),
    ("d.\n\nSource: https://github.com/a/b/pull/3\nshows it.\nMust fail: values", "comes before"),
    ("d.\n\nMust fail: values\n\nSource: https://a.org/x\nSource: https://b.org/y\nshows.", "2 'Source:' lines"),
])
def test_a_malformed_source_is_reported(doc, problem):
    assert any(problem in p for p in source_problems(doc)), source_problems(doc)


def test_well_formed_sources_pass():
    for url in ("https://github.com/karpathy/nanoGPT/issues/473", "https://github.com/a/b/pull/12",
                "https://github.com/a/b/commit/db6b82efcead", "https://github.com/a/b/blob/main/x.py",
                "https://discuss.pytorch.org/t/some-thread/123"):
        assert source_problems(f"d.\n\nMust fail: values\n\nSource: {url}\nshows the mistake.") == []
