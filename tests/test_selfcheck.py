"""`grade selfcheck` for every exercise: references full, stubs zero, samples as their docstrings say."""
from pathlib import Path

import pytest

from grader.grading.exercise import exercise_ids, get_exercise
from grader.cohort.selfcheck import diagnosis_stats, expected_failures, run_selfcheck, samples_dir


TRACKS = [(i, t) for i in exercise_ids() for t in get_exercise(i).tracks]


@pytest.mark.slow
@pytest.mark.parametrize("exercise_id, track", TRACKS)
def test_selfcheck(exercise_id, track):
    rows = run_selfcheck([get_exercise(exercise_id, track=track)], seed=99)  # the warm path (trusted files)
    bad = [(r.file, r.expectation, r.status, r.failed_checks, r.note) for r in rows if not r.ok]
    assert not bad
    # counting, not timing, judges every complexity check of a correct file (issue 15)
    assert not [(r.file, r.timed) for r in rows if r.kind in ("reference", "correct") and r.timed]
    kinds = [r.kind for r in rows]
    assert kinds.count("correct") >= 2 and kinds.count("bug") + kinds.count("mistake") >= 5


@pytest.mark.parametrize("exercise_id, track", TRACKS)
def test_every_bug_sample_names_a_check(exercise_id, track):
    for path in samples_dir(get_exercise(exercise_id, track=track)).glob("bug_*.py"):
        assert expected_failures(path), path


@pytest.mark.slow
@pytest.mark.parametrize("exercise_id, track", TRACKS)
def test_selfcheck_scores_do_not_depend_on_the_seed(exercise_id, track):
    """What CI runs: the warm path at 5 seeds for NumPy tracks and 3 for torch ones; every file as
    intended at every seed with one score, no correct file diagnosed, every named diagnosis right."""
    seeds = 5 if track == "numpy" else 3
    rows = run_selfcheck([get_exercise(exercise_id, track=track)], seed=1, seeds=seeds)
    bad = [(r.file, r.expectation, r.scores, r.note) for r in rows if not r.ok]
    assert not bad
    assert all(len(r.scores) == seeds for r in rows if r.kind != "missing")
    stats = diagnosis_stats(rows)
    assert stats.correct_diagnosed == 0 and stats.precision == 1.0


def test_a_bug_sample_without_a_must_fail_line_is_a_failed_row_not_a_crash(tmp_path):
    """A sample whose docstring lacks `Must fail:` makes its row fail with the reason (selfcheck went on
    to a traceback before)."""
    from types import SimpleNamespace  # noqa: PLC0415

    from grader.cohort.selfcheck import _judge_row  # noqa: PLC0415

    sample = tmp_path / "bug_no_line.py"
    sample.write_text('"""Wrong: forgot to say which check it fails."""\n')
    card = SimpleNamespace(checks=[], status="graded", score=1.0, max_score=2.0, all_passed=False, status_message="")
    row = _judge_row(get_exercise("softmax"), sample, "bug", card)
    assert row.ok is False and "no 'Must fail: <check id>' line" in row.note


def _card(messages: dict[str, str], mistakes: dict[str, str] | None = None, score: float = 1.0):
    """A stand-in scorecard: failed checks with these messages (and bank names in details)."""
    from types import SimpleNamespace  # noqa: PLC0415

    checks = [SimpleNamespace(id=i, message=m, verdict="failed", deducted=True,
                              details={"mistake": (mistakes or {}).get(i)} if (mistakes or {}).get(i) else {})
              for i, m in messages.items()]
    return SimpleNamespace(checks=checks, status="graded", score=score, max_score=2.0, all_passed=False,
                           status_message="")


CONFUSER = '''"""Confuser: a stable softmax computed in float32.

Must not name: no_max_subtraction, "exp overflowed"
May name: computed_in_float32, "entirely -inf"
"""
'''


def test_a_confuser_row_fails_on_any_name_its_docstring_does_not_allow(tmp_path):
    """Issue 24: a hand-written hint or a bank name that the confuser's ``May name:`` line does not
    allow is a wrong diagnosis and fails the row; the allowed ones, or none, pass it."""
    from grader.cohort.selfcheck import _judge_row  # noqa: PLC0415

    path = tmp_path / "stable_in_float32.py"
    path.write_text(CONFUSER)
    ex = get_exercise("softmax")
    wrong = _judge_row(ex, path, "confuser", _card({"dtype_max": "Likely mistake: exp overflowed: subtract the max\nx"}))
    assert not wrong.ok and wrong.wrong_names == ["hint: exp overflowed: subtract the max"]
    assert "must not get this" in wrong.note
    other = _judge_row(ex, path, "confuser", _card({"float64": "Likely mistake: x\ny"}, {"float64": "global_max"}))
    assert not other.ok and other.wrong_names == ["global_max"]
    allowed = _judge_row(ex, path, "confuser", _card(
        {"float64": "Likely mistake: x\ny", "all_neg_inf": "Likely mistake: a slice that is entirely -inf gave NaN\nz",
         "dtype_max": "'output' is not close.\nThe output has 3 NaN/inf entries"}, {"float64": "computed_in_float32"}))
    assert allowed.ok and not allowed.wrong_names
    full_marks = _judge_row(ex, path, "confuser", _card({}, score=2.0))
    assert not full_marks.ok  # a confuser must be a wrong solution
    bare = tmp_path / "no_rules.py"
    bare.write_text('"""Confuser without rules."""\n')
    assert not _judge_row(ex, bare, "confuser", _card({})).ok


def test_selfcheck_reports_precision_on_confusers_and_fails_on_a_wrong_name(tmp_path, monkeypatch):
    """`grade selfcheck` grades the confusers folder, prints precision on confusers apart from the
    mutants', and exits 1 when a confuser gets a wrong name (here the softmax confuser that computes a
    float64 input in float32, with a docstring that forbids the name the bank's replay gives it)."""
    from click.testing import CliRunner  # noqa: PLC0415

    import grader.cohort.selfcheck as selfcheck  # noqa: PLC0415
    from grader.cli import main  # noqa: PLC0415
    from grader.grading.exercise import Exercise  # noqa: PLC0415

    source = (get_exercise("softmax").confusers_dir / "stable_in_float32.py").read_text()
    folder = tmp_path / "confusers"
    folder.mkdir()
    (folder / "float32.py").write_text(source)  # its name is allowed: graded as intended
    forbidden = source.replace("May name: computed_in_float32", "May name: nothing_else") \
        .replace("Must not name: ", "Must not name: computed_in_float32, ")
    assert forbidden != source
    (folder / "float32_forbidden.py").write_text(forbidden)
    monkeypatch.setattr(Exercise, "confusers_dir", property(lambda self: folder))
    everything = selfcheck.selfcheck_files

    def few(ex):  # the reference, one correct and one bug sample (no "missing" rows), and the confusers
        files = everything(ex)
        return [f for f in files if f[1] == "reference"] + [next(f for f in files if f[1] == k) for k in ("correct", "bug")] \
            + [f for f in files if f[1] == "confuser"]

    monkeypatch.setattr(selfcheck, "selfcheck_files", few)
    argv = ["selfcheck", "softmax", "--track", "numpy", "--seed", "1"]
    result = CliRunner().invoke(main, argv)
    assert result.exit_code == 1, result.output
    assert "precision on confusers: 50% (1 of 2 confusers" in " ".join(result.output.split())
    rows = selfcheck.run_selfcheck([get_exercise("softmax")], seed=1)
    by_file = {Path(r.file).name: r for r in rows if r.kind == "confuser"}
    assert by_file["float32.py"].ok and not by_file["float32_forbidden.py"].ok
    assert by_file["float32_forbidden.py"].wrong_names == ["computed_in_float32"]
    (folder / "float32_forbidden.py").unlink()
    result = CliRunner().invoke(main, argv)
    assert result.exit_code == 0, result.output
    assert "precision on confusers: 100% (1 of 1 confusers" in " ".join(result.output.split())


def test_a_file_named_differently_at_two_seeds_fails_its_row(tmp_path, monkeypatch):
    """Issue 24: a name must not depend on the hidden cases' draw. Two seeds whose scorecards give
    different bank names (both allowed by the confuser's docstring) fail the row; the same name at
    both seeds passes it."""
    from types import SimpleNamespace  # noqa: PLC0415

    import grader.cohort.selfcheck as selfcheck  # noqa: PLC0415

    path = tmp_path / "either.py"
    path.write_text('"""Confuser.\n\nMust not name: global_max\nMay name: no_max_subtraction, shift_by_mean\n"""\n')
    monkeypatch.setattr(selfcheck, "selfcheck_files", lambda ex: [(path, "confuser")])
    names = {}

    def fake_grade(ex, file, seed, **_kw):
        check = SimpleNamespace(id="large_logits", message="Likely mistake: x\ny", verdict="failed", deducted=True,
                                category="correctness", details={"mistake": names[seed]})
        return SimpleNamespace(checks=[check], status="graded", score=1.0, max_score=2.0, all_passed=False,
                               status_message="")

    monkeypatch.setattr(selfcheck, "grade_submission", fake_grade)
    names.update({1: "no_max_subtraction", 2: "shift_by_mean"})
    [row] = [r for r in selfcheck.run_selfcheck([get_exercise("softmax")], seed=1, seeds=2) if r.kind == "confuser"]
    assert not row.ok and "named differently at different seeds" in row.note
    names.update({2: "no_max_subtraction"})
    [row] = [r for r in selfcheck.run_selfcheck([get_exercise("softmax")], seed=1, seeds=2) if r.kind == "confuser"]
    assert row.ok, row.note


def test_a_sandboxed_selfcheck_grades_confusers_and_mutants_in_process_and_samples_in_the_sandbox(monkeypatch):
    """With a sandbox, the reference, the stub and the samples go to it; mutants and confusers prove the
    host's naming and run through the trusted in-process runner (no sandbox changes a name)."""
    import grader.cohort.selfcheck as selfcheck  # noqa: PLC0415

    seen = []

    def fake(ex, path, *, seed, sandbox=None, trusted_runner=None):
        seen.append((Path(path).parent.name, Path(path).name, trusted_runner is not None, sandbox))
        from types import SimpleNamespace  # noqa: PLC0415
        return SimpleNamespace(checks=[], status="graded", score=0.0, max_score=1.0, all_passed=False,
                               status_message="", mistakes=())

    monkeypatch.setattr(selfcheck, "grade_submission", fake)
    ex = get_exercise("rope")
    run_selfcheck([ex], sandbox="docker", seed=1)
    by_kind = {kind: path for path, kind in selfcheck.selfcheck_files(ex)}
    assert by_kind["confuser"] and by_kind["mistake"]
    confusers = [t for folder, _n, t, _ in seen if folder == ex.confusers_dir.name]
    mutants = [t for folder, name, t, _ in seen if name in {m.path.name for m in ex.mistakes}
               and folder not in (ex.confusers_dir.name, samples_dir(ex).name)]  # written to a temporary folder
    sandboxed = [(t, sb) for folder, _n, t, sb in seen if folder == samples_dir(ex).name]
    assert confusers and all(confusers)
    assert len(mutants) == len(ex.mistakes) and all(mutants)
    assert sandboxed and all(not t and sb == "docker" for t, sb in sandboxed)


def test_a_selfcheck_of_the_sandboxed_kinds_grades_no_mutant_or_confuser(monkeypatch):
    """``kinds=SANDBOXED_KINDS`` (what the docker selfcheck test runs) sends the reference, the stub and
    every sample to the sandbox and grades nothing in process: the warm path's self-check grades the
    mutants and confusers at the same seed."""
    import grader.cohort.selfcheck as selfcheck  # noqa: PLC0415

    seen = []

    def fake(ex, path, *, seed, sandbox=None, trusted_runner=None):
        seen.append((Path(path), trusted_runner is not None, sandbox))
        from types import SimpleNamespace  # noqa: PLC0415
        return SimpleNamespace(checks=[], status="graded", score=0.0, max_score=1.0, all_passed=False,
                               status_message="", mistakes=())

    monkeypatch.setattr(selfcheck, "grade_submission", fake)
    ex = get_exercise("rope")
    rows = run_selfcheck([ex], sandbox="docker", seed=1, kinds=selfcheck.SANDBOXED_KINDS)
    expected = [p for p, k in selfcheck.selfcheck_files(ex) if k in selfcheck.SANDBOXED_KINDS]
    assert [p for p, _t, _sb in seen] == expected
    assert all(not t and sb == "docker" for _p, t, sb in seen)
    assert {r.kind for r in rows} == {"reference", "stub", "correct", "bug"}


def test_bank_messages_with_a_confuser_counts_names_in_must_not_lines_of_the_same_track():
    """The coverage line counts a bank mistake once per exercise and track, as covered only where a
    confuser of that exercise and track lists it under ``Must not name:`` (hint phrases are not bank
    messages)."""
    from grader.cohort.selfcheck import SelfcheckRow  # noqa: PLC0415

    def row(kind, track, mistake=None, targets=()):
        return SelfcheckRow(exercise="mha", file="f.py", kind=kind, expectation="", status="graded", score=0.0,
                            max_score=1.0, track=track, mistake=mistake, targets=list(targets))

    rows = [row("mistake", "torch", "unscaled"), row("mistake", "torch", "unscaled"),
            row("mistake", "torch", "no_output_projection"), row("mistake", "numpy", "unscaled"),
            row("confuser", "torch", targets=["unscaled", 'hint: "no output projection"']),
            row("confuser", "numpy", targets=["no_output_projection"])]
    stats = diagnosis_stats(rows)
    assert (stats.bank_messages, stats.bank_messages_confused) == (3, 1)


def test_a_confuser_row_carries_its_must_not_targets():
    from grader.cohort.selfcheck import _judge_row, confuser_rules  # noqa: PLC0415

    ex = get_exercise("kv_cache")
    path = next(p for p in sorted(ex.confusers_dir.glob("*.py")) if not p.name.startswith("_"))
    card = _card({"values": "'output' is not close to the expected values."})
    assert _judge_row(ex, path, "confuser", card).targets == confuser_rules(path)[0] != []


def test_every_probe_step_is_the_same_at_every_seed():
    """The premise of ``PROBE_SEED`` (a bank mutant's cost kept across seeds) and of ``ProbeReplay``
    (a trusted file's probes measured once in a several-seed self-check): every probe step, its wire
    and the arrays it reads, is the same at two seeds whose hidden cases differ."""
    from grader.grading.grade import build_plan  # noqa: PLC0415

    def arrays_named(wire, names):
        if isinstance(wire, dict):
            return set().union(set(), *(arrays_named(v, names) for v in wire.values()))
        if isinstance(wire, list):
            return set().union(set(), *(arrays_named(v, names) for v in wire))
        return {wire} if isinstance(wire, str) and wire in names else set()

    import numpy as np  # noqa: PLC0415

    probed = 0
    for exercise_id, track in TRACKS:
        ex = get_exercise(exercise_id, track=track)
        one, other = build_plan(ex, 1), build_plan(ex, 2)
        assert one.wire() != other.wire() or any(
            not np.array_equal(one.arrays[n], other.arrays[n]) for n in one.arrays if n in other.arrays), exercise_id
        probes = {p.check for p in ex.probes}
        a = [s.wire for s in one.steps if s.check in probes]
        b = [s.wire for s in other.steps if s.check in probes]
        assert a == b, (exercise_id, track)
        assert all(s.check in probes for s in one.steps[len(one.steps) - len(a):]), exercise_id  # the probes come last
        for name in arrays_named(a, set(one.arrays)):
            assert np.array_equal(one.arrays[name], other.arrays[name]), (exercise_id, track, name)
        probed += bool(a)
    assert probed >= 10


LOGGING_SOFTMAX = '''"""A correct softmax that writes the size of every input it is called with to {log}."""
import numpy as np


def softmax(x, axis=-1):
    with open({log!r}, "a") as f:
        f.write(f"{{np.shape(x)}}\\n")
    a = np.moveaxis(np.asarray(x), axis, -1)
    m = a.max(axis=-1, keepdims=True)
    m[~np.isfinite(m)] = 0
    e = np.exp(a - m)
    s = e.sum(axis=-1, keepdims=True)
    return np.moveaxis(np.divide(e, s, out=np.zeros_like(e), where=s != 0), -1, axis)
'''


def test_a_probe_replay_gives_the_scorecard_of_a_fresh_run_without_measuring_again(tmp_path):
    """``ProbeReplay``: a trusted file graded at a second seed with the probes kept from its first gets
    the checks a fresh run at that seed gets (every verdict, score and measured series), and its
    function is not called with a probe's input again (the cases are)."""
    from grader.grading.grade import _MEASURE_LOCK, build_plan, grade_submission  # noqa: PLC0415
    from grader.grading.trusted import ProbeReplay, TrustedInProcess  # noqa: PLC0415

    log = tmp_path / "calls.txt"
    path = tmp_path / "logging_softmax.py"
    path.write_text(LOGGING_SOFTMAX.format(log=str(log)))
    ex = get_exercise("softmax", track="numpy")
    ids = frozenset(s.id for s in build_plan(ex, 1).steps if s.check in {p.check for p in ex.probes})
    replay = ProbeReplay(ids)
    first = grade_submission(ex, path, seed=1, trusted_runner=TrustedInProcess("a.py", _MEASURE_LOCK, replay))
    assert set(replay.results) == ids and first.score == first.max_score
    calls_first = log.read_text().splitlines()
    log.write_text("")
    kept = grade_submission(ex, path, seed=2, trusted_runner=TrustedInProcess("a.py", _MEASURE_LOCK, replay))
    calls_kept = log.read_text().splitlines()
    log.write_text("")
    fresh = grade_submission(ex, path, seed=2, trusted_runner=TrustedInProcess("a.py", _MEASURE_LOCK))
    calls_fresh = log.read_text().splitlines()
    largest = "(4, 1024)"  # the probe's largest input; no case is that long
    assert largest not in calls_kept and largest in calls_fresh and largest in calls_first
    assert len(calls_kept) < len(calls_fresh) == len(calls_first)

    assert [(c.id, c.verdict, c.points) for c in kept.checks] == [(c.id, c.verdict, c.points) for c in fresh.checks]
    def probed(card):
        return {c.id: c.details for c in card.checks if c.category == "complexity"}

    assert probed(kept) and probed(kept) == probed(first)  # kept from the first run, not measured again
    assert {d["method"] for d in [*probed(kept).values(), *probed(fresh).values()]} == {"count"}
