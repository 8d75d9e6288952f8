"""Exports: Gradescope results.json (validated against our schema of Gradescope's spec), JUnit XML
(parsed back with junitparser), CSV; ``grade submit --format``."""

from __future__ import annotations

import csv
import io
import json
import xml.etree.ElementTree as ET

import jsonschema
import pytest
from click.testing import CliRunner

from grader.cli import main
from grader.grading.exercise import get_exercise, project_root
from grader.cohort.exports import export_text, to_gradescope, to_junit, validate_gradescope
from grader.grading.grade import grade_submission
from mutant_helpers import mutant_file

junitparser = pytest.importorskip("junitparser")
SAMPLES = project_root() / "submissions" / "samples"


@pytest.fixture(scope="module")
def cards(tmp_path_factory):
    unscaled = mutant_file("attention_scores", "unscaled", tmp_path_factory.mktemp("mutant"))  # fails `scaling`
    graded = {}
    for ex, path in (("attention_scores", unscaled), ("softmax", SAMPLES / "softmax" / "correct_logsumexp.py"),
                     ("softmax", SAMPLES / "softmax" / "bug_inplace.py")):
        graded[path.stem] = grade_submission(get_exercise(ex), path, sandbox="process", seed=5)
    return graded


def test_gradescope_results_validate_and_hide_hidden_cases(cards):
    card = cards["unscaled"]
    doc = to_gradescope(card)
    validate_gradescope(doc)
    assert doc["score"] == card.score and len(doc["tests"]) == len(card.checks)
    assert sum(t["score"] for t in doc["tests"]) == pytest.approx(card.score)
    hidden = [t for t in doc["tests"] if t["name"].startswith("hidden_cases")]
    assert hidden and hidden[0]["visibility"] == "after_published" and hidden[0]["status"] == "failed"
    assert "case:" not in hidden[0]["output"] and "query (" not in hidden[0]["output"]  # inputs not revealed
    public_failed = [t for t in doc["tests"] if t["name"].startswith("scaling")][0]
    assert public_failed["visibility"] == "visible" and "case:" in public_failed["output"]
    assert {t["status"] for t in doc["tests"]} <= {"passed", "failed"}
    hidden_doc = to_gradescope(card, hidden_visibility="hidden")
    assert [t["visibility"] for t in hidden_doc["tests"] if t["name"].startswith("hidden_cases")] == ["hidden"]


def test_gradescope_schema_rejects_what_gradescope_would(cards):
    doc = to_gradescope(cards["bug_inplace"])
    for bad in ({**doc, "tests": [{**doc["tests"][0], "status": "error"}]},
                {**doc, "tests": [{**doc["tests"][0], "visibility": "secret"}]},
                {k: v for k, v in doc.items() if k != "score"} | {"tests": [{"name": "x"}]},
                {**doc, "unknown": 1}):
        with pytest.raises(jsonschema.ValidationError):
            validate_gradescope(bad)


def test_junit_parses_back_with_matching_counts(cards, tmp_path):
    pairs = [(name, card) for name, card in cards.items()]
    path = tmp_path / "junit.xml"
    path.write_text(to_junit(pairs))
    xml = junitparser.JUnitXml.fromfile(str(path))
    suites = list(xml)
    assert len(suites) == 3
    for suite, (name, card) in zip(suites, pairs):
        assert suite.name.startswith(name)
        cases = list(suite)
        assert [c.name for c in cases] == [c.id for c in card.checks]
        for case, check in zip(cases, card.checks):
            kinds = {type(r).__name__ for r in case.result}
            if check.verdict == "passed":
                assert case.is_passed
            elif check.verdict in ("failed", "forbidden"):
                assert kinds == {"Failure"}
            elif check.verdict == "skipped":
                assert kinds == {"Skipped"}
            else:
                assert kinds == {"Error"}
        assert suite.failures == sum(c.verdict in ("failed", "forbidden") for c in card.checks)


def test_csv_export(cards):
    rows = list(csv.DictReader(io.StringIO(export_text("csv", [("bob", cards["bug_inplace"])]))))
    assert rows == [{"candidate": "bob", "exercise": "softmax", "status": "graded",
                     "score": f"{cards['bug_inplace'].score:g}", "max_score": f"{cards['bug_inplace'].max_score:g}",
                     "failed_checks": ";".join(c.id for c in cards["bug_inplace"].checks if c.verdict != "passed"),
                     "mistakes": ";".join(m["name"] or m["message"] for m in cards["bug_inplace"].mistakes),
                     "scorecard": ""}]
    assert rows[0]["mistakes"]
    assert "input_unchanged" in rows[0]["failed_checks"].split(";")


def test_submit_format_csv_fills_the_scorecard_column_and_leads_with_mistakes(tmp_path):
    sample = SAMPLES / "softmax" / "bug_default_axis0.py"
    card, export = tmp_path / "card.json", tmp_path / "r.csv"
    result = CliRunner().invoke(main, ["submit", "softmax", str(sample), "--sandbox", "process", "-q", "--out",
                                       str(card), "--format", "csv", "--export", str(export)])
    assert result.exit_code == 1, result.output
    (row,) = csv.DictReader(io.StringIO(export.read_text()))
    assert row["scorecard"] == str(card) and json.loads(card.read_text())["mistakes"]
    assert row["mistakes"] == ";".join(m["name"] or m["message"] for m in json.loads(card.read_text())["mistakes"])


def test_junit_and_gradescope_lead_with_the_mistakes(cards):
    card = cards["bug_inplace"]
    assert card.mistakes
    suite = ET.fromstring(to_junit([("bob", card)])).find("testsuite")
    props = [p.get("value") for p in suite.find("properties") if p.get("name") == "mistake"]
    assert len(props) == len(card.mistakes) and all(c in props[0] for c in card.mistakes[0]["checks"])
    assert suite.find("system-err").text.startswith(card.mistakes[0]["message"].splitlines()[0])
    summary = to_gradescope(card)["output"]
    public = card.candidate_view().mistakes
    assert summary.splitlines()[1] == "Mistakes:" and public[0]["message"].splitlines()[0] in summary.splitlines()[2]


def test_submit_format_gradescope_and_junit(tmp_path):
    runner = CliRunner()
    sample = SAMPLES / "softmax" / "bug_default_axis0.py"  # fails values_nd only
    result = runner.invoke(main, ["submit", "softmax", str(sample), "--sandbox", "process", "-q", "--out",
                                  str(tmp_path / "card.json"), "--format", "gradescope", "--export",
                                  str(tmp_path / "results.json")])
    assert result.exit_code == 1, result.output
    validate_gradescope(json.loads((tmp_path / "results.json").read_text()))
    result = runner.invoke(main, ["submit", "softmax", str(sample), "--sandbox", "process", "-q", "--out",
                                  str(tmp_path / "card.json"), "--format", "junit", "--export",
                                  str(tmp_path / "junit.xml")])
    assert result.exit_code == 1
    assert list(junitparser.JUnitXml.fromfile(str(tmp_path / "junit.xml")))[0].failures == 1


def test_docs_and_help_name_the_same_default_export_files():
    """The commands page's `grade submit` row and `--export`'s help both name DEFAULT_EXPORT_NAMES."""
    from grader.cohort.exports import DEFAULT_EXPORT_NAMES

    commands = (project_root() / "docs" / "commands.md").read_text(encoding="utf-8")
    row = next(line for line in commands.splitlines() if line.startswith("| `grade submit ID FILE`"))
    help_text = " ".join(CliRunner().invoke(main, ["submit", "-h"]).output.split())
    for name in DEFAULT_EXPORT_NAMES.values():
        assert f"`{name}`" in row and name in help_text, name
