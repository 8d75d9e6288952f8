"""The executor seam: grade_one(job) -> scorecard document, and LocalExecutor mapping it over jobs."""

from __future__ import annotations

import pytest

from grader.cohort.executors import GradeJob, LocalExecutor, grade_one
from grader.grading.exercise import project_root
from grader.grading.scorecard import validate

SAMPLES = project_root() / "submissions" / "samples"


def _verdicts(doc: dict) -> dict[str, str]:
    return {c["id"]: c["verdict"] for c in doc["checks"]}


def test_grade_one_from_bytes_needs_no_file_and_matches_grading_the_file():
    sample = SAMPLES / "softmax" / "bug_ignores_axis.py"
    from_file = grade_one(GradeJob(exercise="softmax", path=str(sample), seed=5, sandbox="process"))
    from_bytes = grade_one(GradeJob(exercise="softmax", path="/nowhere/cand.py", seed=5, sandbox="process",
                                    source=sample.read_bytes()))
    validate(from_file)
    validate(from_bytes)
    assert from_bytes["submission"]["path"] == "/nowhere/cand.py"
    assert from_bytes["submission"]["sha256"] == from_file["submission"]["sha256"]
    assert _verdicts(from_bytes) == _verdicts(from_file)
    # the sample's docstring names the check that must catch it
    assert from_file["status"] == "graded" and _verdicts(from_file)["axes"] == "failed"
    assert from_file["seed"] == 5 and from_file["view"] == "interviewer"


def test_candidate_view_drops_the_seed_and_a_missing_file_is_a_grader_fault():
    sample = SAMPLES / "softmax" / "correct_logsumexp.py"
    doc = grade_one(GradeJob(exercise="softmax", path=str(sample), seed=5, sandbox="process", view="candidate"))
    assert doc["view"] == "candidate" and doc["seed"] is None and doc["score"] == doc["max_score"]
    missing = grade_one(GradeJob(exercise="softmax", path="/nowhere/x.py", seed=5, sandbox="process"))
    assert missing["status"] == "infrastructure_error" and missing["score"] == 0
    unknown = grade_one(GradeJob(exercise="no_such_exercise", path=str(sample), seed=5, sandbox="process"))
    assert unknown["status"] == "infrastructure_error" and "no_such_exercise" in unknown["status_message"]
    with pytest.raises(ValueError):
        GradeJob(exercise="softmax", path="x.py", seed=1, view="everything")


def test_local_executor_yields_each_job_once_with_its_own_index():
    files = ["correct_logsumexp.py", "bug_ignores_axis.py", "correct_logsumexp.py"]
    jobs = [GradeJob(exercise="softmax", path=str(SAMPLES / "softmax" / f), seed=2, sandbox="process") for f in files]
    with LocalExecutor(2) as ex:
        got = dict(ex.imap_unordered(jobs))
    assert sorted(got) == [0, 1, 2]
    assert [got[i]["submission"]["path"] for i in range(3)] == [j.path for j in jobs]
    assert got[0]["score"] == got[0]["max_score"] and got[2]["score"] == got[2]["max_score"]
    assert _verdicts(got[1])["axes"] == "failed"


def test_node_fingerprints_disagree_exactly_where_they_differ():
    import copy

    from grader.cohort.ray_executor import disagreements, fingerprint

    driver = fingerprint()
    assert set(driver["exercises"]) >= {"softmax", "mha"} and len(driver["exercises"]["mha"]["hash"]) == 64
    assert disagreements(driver, copy.deepcopy(driver)) == []
    node = copy.deepcopy(driver)
    node["torch"] = "0.0.1"
    node["exercises"]["mha"]["hash"] = "0" * 64
    del node["exercises"]["softmax"]
    node["sandbox"] = {"ok": False, "why": "the docker sandbox is not ready: no image", "built": False}
    found = disagreements(driver, node)
    assert found[0] == f"torch 0.0.1 (driver: {driver['torch']})"
    assert "exercise mha files differ (hash 000000000000" in " ".join(found)
    assert "exercise softmax missing" in found
    assert found[-1] == "sandbox not ready: the docker sandbox is not ready: no image"
    assert len(found) == 4
