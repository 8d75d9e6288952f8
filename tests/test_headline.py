"""grader.grading.headline: the scorecard's mistakes section, and every reader leading with it."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner
from rich.console import Console

from grader.grading.headline import candidate_mistakes, mistakes_of
from grader.grading.render import render_scorecard
from grader.grading.scorecard import SCHEMA_VERSION, CheckResult, Scorecard, validate

ROOT = Path(__file__).resolve().parent.parent
SQRT_D = "scores were scaled by 1/sqrt(D), the model width, instead of 1/sqrt(d_k), the width of one head."


def _check(id_, verdict="failed", points=0.0, max_points=1.0, message="", visibility="public", **details):
    return CheckResult(id=id_, title=id_, category="correctness", visibility=visibility, verdict=verdict,
                       points=points, max_points=max_points, message=message, details=details)


def _diff_message(value, index):
    return (f"Likely mistake: {SQRT_D}\n'output' is not close to the expected values.\n"
            f"Greatest absolute difference: {value} at index {index} (got 1, expected 2; up to 1e-05 allowed)")


def test_one_named_mistake_is_one_entry_with_its_checks_points_and_greatest_difference():
    checks = [
        _check("a", max_points=2, message=_diff_message(1.06, "(1, 0, 11)"), mistake="sqrt_d", diagnosis=SQRT_D,
               max_abs_diff=1.06, case="self-attention: query (2, 6, 16)"),
        _check("b", verdict="passed", points=1),
        _check("c", message=_diff_message(5.37, "(0, 3, 2)"), mistake="sqrt_d", diagnosis=SQRT_D,
               max_abs_diff=5.37, case="cross-attention: query (3, 6, 12)"),
        _check("h", visibility="hidden", message=_diff_message(9.5, "(0, 0, 0)"), mistake="sqrt_d",
               diagnosis=SQRT_D, max_abs_diff=9.5, case="hidden: query (4, 4, 8)"),
        _check("d", message="'output' has the wrong shape: got (2, 4), expected (4, 2)", case="mask: (2, 4)"),
        _check("e", message="'output' has the wrong shape: got (2, 4), expected (4, 2)", case="mask: (3, 4)"),
        _check("f", message="'output' has the wrong shape: got (2, 4), expected (4, 2)", case="causal: (3, 4)"),
        _check("g", verdict="skipped", points=1, message="Not judged: the forward is wrong."),  # no charge
    ]
    entries = mistakes_of(checks)
    assert [e["name"] for e in entries] == ["sqrt_d", None, None]
    named = entries[0]
    assert named["message"] == SQRT_D and named["checks"] == ["a", "c", "h"] and named["points_lost"] == 4.0
    assert named["difference"]["check"] == "h" and "9.5 at index (0, 0, 0)" in named["difference"]["text"]
    # same first line and same case kind share an entry; another case kind is its own
    assert entries[1]["checks"] == ["d", "e"] and entries[1]["points_lost"] == 2.0
    assert entries[2]["checks"] == ["f"]
    assert entries[1]["message"] == "'output' has the wrong shape: got (2, 4), expected (4, 2)"
    # the candidate's section derives from public checks only: no hidden check, no hidden difference
    public = candidate_mistakes(checks)
    assert public[0]["checks"] == ["a", "c"] and public[0]["points_lost"] == 3.0
    assert public[0]["difference"]["check"] == "c"


def test_a_hand_written_hint_is_the_headline_of_every_check_it_explains():
    """A cause named by a check's own hint (no bank mistake) leads its entry, across case kinds and
    whatever the checks' own sentences; a check without the hint keeps its symptom's entry."""
    hint = "the cached k-projections are divided by sqrt(d_k); cache the plain projections and scale the scores."
    checks = [
        _check("contents", message=f"Likely mistake: {hint}\n'k_cache' is not close to the expected values.\n"
                                   "Greatest absolute difference: 1.44 at index (1, 1, 3, 0) (got 1, expected 2)",
               max_abs_diff=1.44, case="contents: k_cache after 6 tokens"),
        _check("long", max_points=2, message=f"Likely mistake: {hint}\n'v_cache' is not close to the expected values.\n"
                                             "Greatest absolute difference: 1.7 at index (0, 0, 34, 1) (got 1, expected 2)",
               max_abs_diff=1.7, case="long: k_cache after 40 tokens"),
        _check("chunked", message="'output' is not close to the expected values.", case="chunked: forward"),
        _check("symptom", message="The output does not sum to 1 along axis -1.\n'output' is not close",
               case="chunked: forward"),
    ]
    entries = mistakes_of(checks)
    assert [(e["name"], e["message"], e["checks"], e["points_lost"]) for e in entries] == [
        (None, hint, ["contents", "long"], 3.0),
        (None, "'output' is not close to the expected values.", ["chunked"], 1.0),
        (None, "The output does not sum to 1 along axis -1.", ["symptom"], 1.0)]
    assert entries[0]["difference"]["check"] == "long" and "1.7 at index" in entries[0]["difference"]["text"]
    # the candidate's section: a hint on a hidden check is never a headline
    hidden = [_check("h", visibility="hidden", message=f"Likely mistake: {hint}\nx")] + checks[2:3]
    assert [e["checks"] for e in candidate_mistakes(hidden)] == [["chunked"]]


def test_cases_that_name_no_kind_group_by_their_sentence_alone():
    """transformer_block's cases are described by their shapes ("x (2, 6, 16), num_heads=4"): one wrong
    block failed nine output checks and read as nine entries, one per shape; they now share one."""
    msg = "'output' is not close to the expected values.\nGreatest absolute difference: {} at index (0,) (got 1)"
    checks = [_check(f"c{n}", message=msg.format(n), max_abs_diff=float(n), case=f"x (2, {n}, 16), num_heads=4")
              for n in range(1, 5)]
    checks.append(_check("grad", message="'gradient of x' is not close to the expected values.",
                         case="x (2, 5, 8), gradients of x"))
    # a description with a colon further on is no kind either (flash_attention's cross-length cases)
    checks.insert(2, _check("cross", message=msg.format(0.5), max_abs_diff=0.5,
                            case="q (2, 2, 5, 8), k/v (2, 2, 17, 8), causal=True, L_q < L_k: query i sees j <= i + 12"))
    entries = mistakes_of(checks)
    assert [(e["checks"], e["points_lost"]) for e in entries] == [(["c1", "c2", "cross", "c3", "c4"], 5.0),
                                                                  (["grad"], 1.0)]
    assert entries[0]["difference"]["check"] == "c4"


def test_not_run_checks_say_the_status_once():
    status = "The file does not compile: SyntaxError (line 4): '(' was never closed\n    f(x\n     ^"
    checks = [_check(i, message="Not run: the file does not compile (see the status).") for i in "abc"]
    (entry,) = mistakes_of(checks, status)
    assert entry == {"name": None, "message": status, "checks": ["a", "b", "c"], "points_lost": 3.0}


def _card(checks, status="graded", status_message="") -> Scorecard:
    return Scorecard(exercise={"id": "mha", "version": "1", "title": "MHA"},
                     submission={"path": "x.py", "sha256": "0" * 64},
                     sandbox={"backend": "process", "image": None, "isolation": {}, "limits": {}},
                     environment={"python": "3.11", "numpy": "2", "torch": None, "platform": "linux",
                                  "device": "cpu"},
                     started_at="2026-01-01T00:00:00+00:00", duration_s=1.0, status=status,
                     status_message=status_message, score=float(sum(c.points for c in checks)),
                     max_score=float(sum(c.max_points for c in checks)), checks=tuple(checks),
                     output={"text": "", "truncated": False}, seed=3)


def test_the_section_is_in_the_schema_and_version_1_cards_are_still_read():
    card = _card([_check("a", message=_diff_message(1.0, "(0,)"), mistake="m", diagnosis=SQRT_D, max_abs_diff=1.0),
                  _check("h", visibility="hidden", message="'output' is not close", case="hidden: q")])
    doc = card.to_json()
    validate(doc)
    assert doc["schema_version"] == SCHEMA_VERSION == 2 and [m["name"] for m in doc["mistakes"]] == ["m", None]
    candidate = card.candidate_view().to_json()
    validate(candidate)
    assert [m["checks"] for m in candidate["mistakes"]] == [["a"]]  # the hidden group is not a headline
    old = {k: v for k, v in doc.items() if k != "mistakes"}
    old["schema_version"] = 1
    again = Scorecard.from_json(old)
    assert again.mistakes == card.mistakes and again.schema_version == 2
    doc["mistakes"][0]["points_lost"] = -1
    with pytest.raises(Exception, match="minimum"):
        validate(doc)


def test_a_grader_fault_is_no_mistake_of_the_candidate():
    checks = [_check(i, verdict="skipped", message="Not graded: the sandbox could not start") for i in "ab"]
    card = _card(checks, status="infrastructure_error", status_message="the sandbox could not start")
    assert card.mistakes == () and card.candidate_view().mistakes == ()
    assert _card(checks, status="crashed", status_message="it crashed").mistakes[0]["message"] == "it crashed"


def _rendered(card, **kwargs) -> str:
    console = Console(record=True, width=200)
    render_scorecard(card, console, **kwargs)
    return console.export_text()


def test_terminal_leads_with_one_line_per_mistake_and_keeps_the_detail_for_verbose():
    checks = [_check(i, message=_diff_message(float(n), f"({n},)"), mistake="sqrt_d", diagnosis=SQRT_D,
                     max_abs_diff=float(n), case=f"self-attention: case {n}") for n, i in enumerate("abcdefghij")]
    card = _card(checks + [_check("ok", verdict="passed", points=1)])
    text = _rendered(card)
    assert text.count(SQRT_D) == 1
    assert text.index(SQRT_D) < text.index("┃ check")            # before the table
    assert "10 checks, -10 points" in text and "9.0 at index (9,)" in text
    assert text.count("Greatest absolute difference") == 1
    verbose = _rendered(card, verbose=True)
    assert verbose.count(SQRT_D) == 11 and verbose.count("Greatest absolute difference") == 11


@pytest.fixture(scope="module")
def sqrt_d_file(tmp_path_factory) -> Path:
    source = (ROOT / "submissions/samples/mha/correct_bmm.py").read_text()
    assert "/ math.sqrt(d_k)" in source
    path = tmp_path_factory.mktemp("mha") / "mha_sqrt_d.py"
    path.write_text(source.replace("/ math.sqrt(d_k)", "/ math.sqrt(D)"))
    return path


def test_an_mha_scaled_by_sqrt_d_reads_as_one_headline(sqrt_d_file, tmp_path, monkeypatch):
    """The issue's case: 15 "Likely mistake" paragraphs (160 lines) for one bug."""
    from grader.cli import main

    monkeypatch.chdir(tmp_path)
    r = CliRunner().invoke(main, ["submit", "mha", str(sqrt_d_file), "--sandbox", "process", "--seed", "5", "-q",
                                  "--out", "card.json"])
    assert r.exit_code == 1, r.output
    assert r.output.count(SQRT_D) == 1 and "Likely mistake" not in r.output
    assert len(r.output.splitlines()) < 45, r.output
    doc = json.loads((tmp_path / "card.json").read_text())
    (entry,) = doc["mistakes"]                                   # candidate view: public checks only
    assert entry["name"] == "scaled_by_sqrt_d_model" and "hidden_values" not in entry["checks"]
    assert entry["points_lost"] == sum(c["max_points"] - c["points"] for c in doc["checks"]
                                       if c["id"] in entry["checks"]) >= 10
    assert "Greatest absolute difference" in entry["difference"]["text"]


def test_a_syntax_error_shows_the_line_a_caret_and_the_message_once(tmp_path, monkeypatch):
    from grader.cli import main

    monkeypatch.chdir(tmp_path)
    path = tmp_path / "broken.py"
    path.write_text("import torch\n\ndef multi_head_attention(query, *args):\n    return (query @ args[0]\n")
    r = CliRunner().invoke(main, ["submit", "mha", str(path), "--sandbox", "process", "-q", "--out", "c.json"])
    assert r.exit_code == 1
    lines = r.output.splitlines()
    at = next(i for i, line in enumerate(lines) if "'(' was never closed" in line)
    assert lines[at + 1].strip() == "return (query @ args[0]"
    assert lines[at + 2].index("^") == lines[at + 1].index("(")  # under the unclosed parenthesis
    assert r.output.count("was never closed") == 1 and "Not run" not in r.output


def test_the_readme_first_command_sample_prints_no_warning(tmp_path):
    """The set-up command grades this sample; a RuntimeWarning in its captured output is the first
    thing a new user reads."""
    import re

    from grader.grading.exercise import get_exercise
    from grader.grading.grade import grade_submission

    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    (sample,) = re.findall(r"grade submit softmax (submissions/samples/softmax/\S+\.py)", readme.split("```")[1])
    card = grade_submission(get_exercise("softmax"), ROOT / sample, sandbox="process", seed=7)
    assert card.all_passed and "Warning" not in card.output["text"], card.output["text"]
    assert card.candidate_view().output["text"] == ""  # nothing printed at import or in public steps


def test_the_hint_label_is_written_and_read_in_one_place():
    """Every "Likely mistake:" line is built by judges.with_hint and read by hint_of/hints_in/strip_hint:
    no other module of the grader or the exercises spells the label in code (docstrings and comments
    may), so the headline, the bank's replay and selfcheck cannot disagree on what a hint is."""
    import ast  # noqa: PLC0415

    from grader.judge.judges import HINT_LABEL, hint_of, hints_in, strip_hint, with_hint  # noqa: PLC0415

    message, details = with_hint("'output' is not close.", "keys scaled twice.")
    assert message == f"{HINT_LABEL} keys scaled twice.\n'output' is not close." and details == {"diagnosis": "keys scaled twice."}
    assert hint_of(message) == "keys scaled twice." and strip_hint(message) == "'output' is not close."
    assert hints_in(f"a\n{message}\n{HINT_LABEL} another.") == ["keys scaled twice.", "another."]
    assert hint_of("'output' is not close.") == "" and strip_hint("x") == "x"
    spelled = []
    for path in [*ROOT.joinpath("grader").rglob("*.py"), *ROOT.joinpath("exercises").glob("*/checks.py")]:
        tree = ast.parse(path.read_text())
        docstrings = {id(n.body[0].value) for n in ast.walk(tree)
                      if isinstance(n, (ast.Module, ast.FunctionDef, ast.ClassDef, ast.AsyncFunctionDef))
                      and n.body and isinstance(n.body[0], ast.Expr) and isinstance(n.body[0].value, ast.Constant)}
        spelled += [f"{path.relative_to(ROOT)}:{n.lineno}" for n in ast.walk(tree)
                    if isinstance(n, ast.Constant) and isinstance(n.value, str) and "Likely mistake" in n.value
                    and id(n) not in docstrings]
    assert len(spelled) == 1 and spelled[0].startswith("grader/judge/judges.py:"), spelled  # HINT_LABEL

