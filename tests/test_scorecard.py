import jsonschema
import pytest

from grader.grading.exercise import get_exercise
from grader.grading.grade import grade_submission
from grader.grading.scorecard import read_scorecard, validate, write_scorecard


@pytest.fixture(scope="module")
def failing_card(request):
    root = request.config.rootpath
    return grade_submission(get_exercise("softmax"), root / "submissions/samples/softmax/bug_global_max.py",
                            sandbox="process", seed=11)


def test_scorecard_round_trips_through_the_schema(failing_card, tmp_path):
    path = tmp_path / "card.json"
    write_scorecard(failing_card, path)
    again = read_scorecard(path)
    assert again == failing_card
    assert failing_card.sandbox["backend"] == "process"
    assert failing_card.submission["sha256"] and len(failing_card.submission["sha256"]) == 64


def test_schema_rejects_an_unknown_verdict(failing_card):
    doc = failing_card.to_json()
    doc["checks"][0]["verdict"] = "kinda"
    with pytest.raises(jsonschema.ValidationError):
        validate(doc)


def test_candidate_view_hides_hidden_case_details_but_keeps_verdicts(failing_card):
    hidden = [c for c in failing_card.checks if c.visibility == "hidden"]
    assert hidden and hidden[0].verdict == "failed" and hidden[0].details
    view = failing_card.candidate_view()
    validate(view.to_json())
    redacted = [c for c in view.checks if c.visibility == "hidden"][0]
    assert redacted.verdict == "failed" and redacted.details == {}
    assert "scale" not in redacted.message and "shape" not in redacted.message
    assert view.seed is None and failing_card.seed == 11
    public = [c for c in view.checks if c.id == "large_logits"][0]
    assert public.details["case"]  # public inputs stay visible
    assert view.score == failing_card.score
