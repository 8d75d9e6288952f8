"""The on-disk reference-answer cache: a second grading at a seed runs no reference and imports no
torch on the host, gives the same scorecard, and an edited exercise or another seed is a miss."""

from __future__ import annotations

import dataclasses
import json
import os
import shutil
import subprocess
import sys
import threading
from collections import OrderedDict

import numpy as np
import pytest

from grader.grading import grade as grading
from grader.grading import reference_cache
from grader.grading.exercise import get_exercise, project_root
from mutant_helpers import mutant_file

SAMPLES = project_root() / "submissions" / "samples"


@pytest.fixture
def cache(tmp_path, monkeypatch):
    """An empty cache folder, and an empty in-process cache (so only the disk can answer)."""
    monkeypatch.setenv("GRADER_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.delenv("GRADER_REFERENCE_CACHE", raising=False)
    monkeypatch.setattr(grading, "_ANSWERS", OrderedDict())
    monkeypatch.setattr(grading, "_PROBE_ANSWERS", OrderedDict())
    return tmp_path / "cache" / "references"


def _counting(monkeypatch) -> list:
    calls = []
    real = grading.run_in_process

    def counted(*args, **kwargs):
        calls.append(args[3] if len(args) > 3 else kwargs.get("module_file"))
        return real(*args, **kwargs)

    monkeypatch.setattr(grading, "run_in_process", counted)
    return calls


def _essence(card) -> list:
    return [card.status, card.score, [(c.id, c.verdict, c.points, c.message) for c in card.checks]]


@pytest.mark.parametrize("exercise_id, sample", [("softmax", "bug_ignores_axis.py"),
                                                 ("attention_scores", "mistake:unscaled")])
def test_second_grading_at_a_seed_runs_no_reference_and_gives_the_same_scorecard(cache, monkeypatch, exercise_id,
                                                                                 sample, tmp_path):
    """A bug sample, or (``mistake:NAME``) a mutant of the bank written to a file."""
    calls = _counting(monkeypatch)
    exercise = get_exercise(exercise_id)
    path = mutant_file(exercise_id, sample[8:], tmp_path) if sample.startswith("mistake:") \
        else SAMPLES / exercise_id / sample
    first = grading.grade_submission(exercise, path, sandbox="process", seed=21)
    assert calls, "the first grading must run the reference"
    assert len(list(cache.glob("*-seed21-*.npz"))) == 1
    grading._ANSWERS.clear()  # a new process: only the disk remembers
    grading._PROBE_ANSWERS.clear()
    calls.clear()
    second = grading.grade_submission(exercise, path, sandbox="process", seed=21)
    assert calls == []
    assert _essence(second) == _essence(first)
    assert any(c.verdict == "failed" for c in first.checks)  # a bug sample: the cached answers still catch it
    grading._ANSWERS.clear()
    grading.grade_submission(exercise, path, sandbox="process", seed=22)  # another seed: other hidden cases
    assert calls and len(list(cache.glob("*-seed2[12]-*.npz"))) == 2


def test_the_probes_answers_are_computed_once_for_every_seed(cache, monkeypatch):
    """The probes come last and are the same at every seed (``PROBE_SEED``): the reference's answers on
    them are kept (in the process and on disk, under ``probes-<tag>-<PROBE_SEED>``) from the first seed
    computed, and a new seed runs the reference on its cases only, with the same answers as a run of
    the whole plan."""
    exercise = get_exercise("sliding_window_attention", track="numpy")
    grading.answers_for(exercise, 3, grading.build_plan(exercise, 3))
    assert len(list(cache.glob(f"*-probes-*-{grading.PROBE_SEED}-*.npz"))) == 1
    grading._PROBE_ANSWERS.clear()  # a new process: only the disk remembers
    wires = []
    real = grading.run_in_process
    monkeypatch.setattr(grading, "run_in_process", lambda wire, *a, **k: wires.append(wire) or real(wire, *a, **k))
    plan = grading.build_plan(exercise, 4)
    probes = {p.check for p in exercise.probes}
    probe_ids = {s.id for s in plan.steps if s.check in probes}
    kept = grading.answers_for(exercise, 4, plan)
    assert wires and probe_ids and not {s["id"] for w in wires for s in w["steps"]} & probe_ids
    monkeypatch.setenv("GRADER_REFERENCE_CACHE", "off")
    grading._PROBE_ANSWERS.clear()
    fresh = grading.answers_for(exercise, 4, plan)
    assert any(s["id"] in probe_ids for s in wires[-1]["steps"])  # this time the probes ran

    def report(step):  # a clock and tracemalloc's few bytes of first-use allocations aside
        measure = {k: v for k, v in (step.report.get("measure") or {}).items() if k not in ("seconds", "peak_bytes")}
        return json.dumps({**{k: v for k, v in step.report.items() if k != "seconds"}, "measure": measure},
                          sort_keys=True)

    for got, want in zip([kept[0], kept[1], *kept[2], kept[3]], [fresh[0], fresh[1], *fresh[2], fresh[3]]):
        assert list(got.steps) == list(want.steps)
        for step_id, step in want.steps.items():
            assert report(got.steps[step_id]) == report(step), step_id
            assert got.steps[step_id].arrays.keys() == step.arrays.keys()
            for name, arr in step.arrays.items():
                np.testing.assert_array_equal(got.steps[step_id].arrays[name], arr)
    assert any("flops" in (kept[0].steps[i].report.get("measure") or {}) for i in probe_ids)


def test_cached_answers_equal_a_fresh_reference_run(cache):
    exercise = get_exercise("softmax")
    plan = grading.build_plan(exercise, 3)
    fresh = grading.answers_for(exercise, 3, plan)
    loaded = reference_cache.load(exercise, 3, "cpu")
    assert loaded is not None
    assert fresh[3].steps  # softmax has float64 cases: their float32-internals answers are kept too
    for got, want in zip([loaded[0], loaded[1], *loaded[2], loaded[3]], [fresh[0], fresh[1], *fresh[2], fresh[3]]):
        assert list(got.steps) == list(want.steps)
        for step_id, step in want.steps.items():
            assert json.dumps(got.steps[step_id].report, sort_keys=True) == json.dumps(step.report, sort_keys=True)
            assert got.steps[step_id].arrays.keys() == step.arrays.keys()
            for name, arr in step.arrays.items():
                assert got.steps[step_id].arrays[name].dtype == arr.dtype
                np.testing.assert_array_equal(got.steps[step_id].arrays[name], arr)


def test_editing_the_exercise_or_reference_invalidates_the_entry(cache, tmp_path):
    root = tmp_path / "home"
    shutil.copytree(project_root() / "exercises" / "softmax", root / "exercises" / "softmax")
    (root / "reference").mkdir()
    for ref in (project_root() / "reference").glob("softmax*.py"):  # every track's reference
        shutil.copyfile(ref, root / "reference" / ref.name)
    before = reference_cache.entry_path(get_exercise("softmax", root=root), 3, "cpu")
    assert before == reference_cache.entry_path(get_exercise("softmax"), 3, "cpu")  # same bytes, same entry
    with open(root / "reference" / "softmax.py", "a") as fh:
        fh.write("\n# edited\n")
    after_ref = reference_cache.entry_path(get_exercise("softmax", root=root), 3, "cpu")
    with open(root / "exercises" / "softmax" / "checks.py", "a") as fh:
        fh.write("\n# edited\n")
    after_checks = reference_cache.entry_path(get_exercise("softmax", root=root), 3, "cpu")
    assert len({before, after_ref, after_checks}) == 3
    assert reference_cache.entry_path(get_exercise("softmax"), 3, "cuda") != before


def test_concurrent_writers_and_a_torn_entry(cache):
    exercise = get_exercise("softmax")
    plan = grading.build_plan(exercise, 4)
    answers = grading.answers_for(exercise, 4, plan)
    threads = [threading.Thread(target=reference_cache.store, args=(exercise, 4, "cpu", answers)) for _ in range(6)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert [p.name for p in cache.iterdir() if p.name.startswith(".ref-")] == []  # no temp file left
    assert reference_cache.load(exercise, 4, "cpu") is not None
    entry = reference_cache.entry_path(exercise, 4, "cpu")
    entry.write_bytes(entry.read_bytes()[:100])  # a torn file (written by something else): a miss, removed
    assert reference_cache.load(exercise, 4, "cpu") is None and not entry.exists()


def test_turned_off_it_neither_reads_nor_writes(cache, monkeypatch):
    monkeypatch.setenv("GRADER_REFERENCE_CACHE", "off")
    exercise = get_exercise("softmax")
    answers = grading.answers_for(exercise, 5, grading.build_plan(exercise, 5))
    assert not cache.exists() or not list(cache.iterdir())
    assert reference_cache.store(exercise, 5, "cpu", answers) is None


@pytest.mark.slow
def test_a_torch_exercise_graded_again_never_imports_torch_on_the_host(tmp_path):
    """A correct file: a failing one replays the mistake bank's mutants on the host (diagnosis by
    replay), which runs torch code there whatever the reference cache holds."""
    code = ("import sys; from grader.grading.exercise import get_exercise; "
            "from grader.grading.grade import grade_submission; "
            f"c = grade_submission(get_exercise('mha'), {str(SAMPLES / 'mha' / 'correct_einsum.py')!r}, "
            "sandbox='process', seed=9); "
            "print(c.status, c.score, 'torch' in sys.modules)")
    env = {**os.environ, "GRADER_CACHE_DIR": str(tmp_path)}
    env.pop("GRADER_REFERENCE_CACHE", None)
    runs = [subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=300)
            for _ in range(2)]
    for run in runs:
        assert run.returncode == 0, run.stderr[-2000:]
    first, second = (r.stdout.split() for r in runs)
    assert first[2] == "True"  # the reference needed torch the first time
    assert second[:2] == first[:2] and second[2] == "False"


def test_an_entry_missing_steps_of_the_plan_is_a_miss(cache, monkeypatch):
    """A long-running process that imported checks.py before it changed writes its old plan's answers
    under the name of the files' new bytes; a reader whose plan has more steps must not use them
    (the warm selfcheck of mha failed with KeyError 'inputs_unchanged.55', an infrastructure_error)."""
    exercise = get_exercise("softmax")
    plan = grading.build_plan(exercise, 3)
    expected, golden, baselines, float32 = grading.answers_for(exercise, 3, plan)
    dropped = next(s.id for s in plan.steps if s.judge is not None)
    stale = (dataclasses.replace(expected, steps={k: v for k, v in expected.steps.items() if k != dropped}),
             golden, baselines, float32)
    monkeypatch.setattr(grading, "_ANSWERS", OrderedDict())
    monkeypatch.setattr(reference_cache, "load", lambda *a, **k: stale)
    _, answers = grading._reference_answers(exercise, 3)
    assert answers is None
    monkeypatch.setattr(reference_cache, "load", lambda *a, **k: (expected, golden, baselines, float32))
    _, answers = grading._reference_answers(exercise, 3)
    assert answers is not None and dropped in answers[0].steps


@pytest.mark.slow
def test_a_wrong_torch_file_graded_again_imports_no_torch_on_the_host_and_names_the_same_mistake(tmp_path):
    """Diagnosis replays the mistake bank on the host; its answers are cached on disk like the
    reference's, so the second grading at the seed needs torch nowhere on the host."""
    path = mutant_file("mha", "logits_divided_by_d_k", tmp_path)
    code = ("import sys; from grader.grading.exercise import get_exercise; "
            "from grader.grading.grade import grade_submission; "
            f"c = grade_submission(get_exercise('mha'), {str(path)!r}, sandbox='process', seed=9); "
            "names = sorted({k.details.get('mistake') or '-' for k in c.checks if k.verdict != 'passed'}); "
            "print(c.status, c.score, ','.join(names), 'torch' in sys.modules)")
    env = {**os.environ, "GRADER_CACHE_DIR": str(tmp_path / "cache")}
    env.pop("GRADER_REFERENCE_CACHE", None)
    runs = [subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=300)
            for _ in range(2)]
    for run in runs:
        assert run.returncode == 0, run.stderr[-2000:]
    first, second = (r.stdout.split() for r in runs)
    assert "logits_divided_by_d_k" in first[2].split(",")
    assert first[3] == "True"  # the reference and the mutants needed torch the first time
    assert second[:3] == first[:3] and second[3] == "False"
    mutants = tmp_path / "cache" / "mutants"
    assert oct(mutants.stat().st_mode & 0o777) == "0o700"
    entries = list(mutants.glob("*.npz"))
    assert entries and all(oct(e.stat().st_mode & 0o777) == "0o600" for e in entries)


def test_an_unreadable_mutant_entry_is_a_miss_and_goes(cache):
    """A torn entry is not answered from: the mutant is run again and the entry rewritten."""
    from grader.grading import diagnosis
    exercise = get_exercise("softmax")
    plan = grading.build_plan(exercise, 4)
    keys = reference_cache.MutantKeys(exercise, 4, "cpu")
    mistake = exercise.mistakes[0]
    fresh = diagnosis.run_mutant(mistake, plan)
    assert reference_cache.store_mutant(keys, "values", mistake, fresh) is not None
    got = reference_cache.load_mutant(keys, "values", mistake)
    assert set(got.steps) == set(fresh.steps)
    for sid, step in fresh.steps.items():
        for name, arr in step.arrays.items():
            np.testing.assert_array_equal(got.steps[sid].arrays[name], arr)
    path = keys.path("values", mistake)
    path.write_bytes(path.read_bytes()[:100])
    assert reference_cache.load_mutant(keys, "values", mistake) is None
    assert not path.exists()
    other = reference_cache.MutantKeys(exercise, 5, "cpu")
    assert other.path("values", mistake) != path
    assert keys.path("values", exercise.mistakes[1]) != path
