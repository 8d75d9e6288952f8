"""grader.service.regrades on a SQLite database, without a server: what a regrade stores, what it
never overwrites, and how the choice of which scorecards stand is read by every view."""

from __future__ import annotations

import copy

import pytest

from grader.judge.verdicts import Status
from grader.service import records, regrades
from grader.service.db import Regrade, RegradedScorecard, StoredScorecard, make_engine, migrate, session_factory
from grader.service.queue import enqueue

pytestmark = pytest.mark.service


@pytest.fixture
def world(tmp_path, grade_source):
    engine = make_engine(f"sqlite:///{tmp_path / 'r.db'}")
    migrate(engine)
    factory = session_factory(engine)
    card = grade_source("softmax", "import numpy as np\ndef softmax(x, axis=-1):\n    return x\n").to_json()
    with factory() as session:
        cohort = records.create_cohort(session, "r", ["softmax"], seed=9)
        cand, _token = records.invite(session, cohort.id, "ann")
        sub = enqueue(session, cand, "softmax", b"def softmax(x, axis=-1):\n    return x\n", "a.py")
        sub.status = "graded"
        session.add(StoredScorecard(submission_id=sub.id, document=card, score=card["score"],
                                    max_score=card["max_score"]))
        session.commit()
        ids = (cohort.id, sub.id)
    yield factory, ids, card
    engine.dispose()


def _better(card):
    doc = copy.deepcopy(card)
    doc["checks"][0].update(verdict="passed", points=doc["checks"][0]["max_points"], message="")
    doc["score"] = sum(c["points"] for c in doc["checks"])
    doc["grader_version"] = "9.9.9"
    return doc


def test_a_regrade_adds_a_row_keeps_the_original_and_stands_only_when_chosen(world):
    factory, (cid, sid), card = world
    seen = []

    def grade(exercise, source, seed, sandbox):
        seen.append((exercise, source, seed, sandbox))
        return _better(card)

    regrade = regrades.start(factory, cid, grade, "process", wait=True)
    assert seen == [("softmax", b"def softmax(x, axis=-1):\n    return x\n", 9, "process")]  # the cohort's seed
    with factory() as session:
        doc = regrades.regrade_json(session, session.get(Regrade, regrade.id))
        assert doc["status"] == "done" and doc["regraded"] == doc["total"] == 1 and doc["changed"] == 1
        change = doc["changes"][0]
        first = card["checks"][0]["id"]
        assert change["checks"] == [{"id": first, "before": card["checks"][0]["verdict"], "after": "passed"}]
        assert session.get(StoredScorecard, sid).document == card  # the original row is untouched
        sub = session.get(records.Submission, sid)
        assert records.stored_card(session, sub).score == card["score"]  # nothing stands until chosen
        regrades.choose(session, cid, regrade.id)
        assert records.stored_card(session, sub).score == _better(card)["score"]
        assert records.cohort_cards(session, cid)[0].card.grader_version == "9.9.9"
        regrades.choose(session, cid, None)
        assert records.stored_card(session, sub).score == card["score"]


def test_a_regrade_whose_grading_processes_are_gone_is_interrupted_and_stores_nothing(world):
    factory, (cid, _sid), _card = world

    def gone(*_args):
        raise RuntimeError("cannot schedule new futures after shutdown")

    regrade = regrades.start(factory, cid, gone, "process", wait=True)
    with factory() as session:
        assert session.get(Regrade, regrade.id).status == "interrupted"
        assert session.query(RegradedScorecard).count() == 0


def test_an_infrastructure_error_of_a_regrade_never_stands(world):
    factory, (cid, sid), card = world
    fault = {**copy.deepcopy(card), "status": str(Status.INFRASTRUCTURE_ERROR)}
    regrade = regrades.start(factory, cid, lambda *a: fault, "process", wait=True)
    with factory() as session:
        regrades.choose(session, cid, regrade.id)
        assert records.stored_card(session, session.get(records.Submission, sid)).status == card["status"]


def test_refusals(world):
    factory, (cid, _sid), card = world
    with pytest.raises(regrades.RegradeRefused) as err:
        regrades.start(factory, 999, lambda *a: card, "process", wait=True)
    assert err.value.status == 404
    with factory() as session:
        session.add(Regrade(cohort_id=cid, grader_version="x", status="running", accepted=False, total=1))
        session.commit()
        running = session.query(Regrade).one().id
    with pytest.raises(regrades.RegradeRefused) as err:
        regrades.start(factory, cid, lambda *a: card, "process", wait=True)
    assert err.value.status == 409
    with factory() as session, pytest.raises(regrades.RegradeRefused) as err:
        regrades.choose(session, cid, running)
    assert err.value.status == 409
    assert regrades.interrupt_running(factory) == 1
