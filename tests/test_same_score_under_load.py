"""Same score under load (issue 24 item 5), on a few files: graded with ``grade batch --jobs 1`` on a
quiet machine and with ``--jobs 2`` while two processes keep both cores busy, every file gets the
same status, score and verdict on every check. The files are the ones whose verdicts could follow
the clock if anything did: complexity probes (right and wrong cost, cache and no cache, a window, a
running state), a loop that must hit its step limit, and correct solutions that pass everything.
The whole corpus, at two seeds: ``python benchmarks/bench_load.py``."""

from __future__ import annotations

import importlib.util
from pathlib import Path

import pytest

from grader.grading.exercise import get_exercise

pytestmark = pytest.mark.slow

ROOT = Path(__file__).resolve().parent.parent
SAMPLES = ROOT / "submissions" / "samples"
FILES = [("softmax", "numpy", "correct_logsumexp"), ("softmax", "numpy", "bug_pairwise_quadratic"),
         ("kv_cache", "numpy", "bug_recompute_kv"), ("linear_attention", "numpy", "bug_masked_quadratic"),
         ("linear_attention", "numpy", "correct_chunked"), ("sliding_window_attention", "torch", "bug_dense_band_mask"),
         ("flash_attention", "torch", "correct_query_tiles")]


def _bench():
    spec = importlib.util.spec_from_file_location("bench_load", ROOT / "benchmarks" / "bench_load.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_the_differences_name_every_change():
    """The comparison itself: a changed verdict, status or missing file is reported, nothing else."""
    bench = _bench()
    card = {"status": "graded", "score": 3.0, "checks": {"a": "passed", "b": "failed"}}
    assert bench.differences({"x": card}, {"x": dict(card)}) == []
    flipped = {**card, "score": 4.0, "checks": {"a": "passed", "b": "passed"}}
    assert bench.differences({"x": card}, {"x": flipped}) == ["x: b failed -> passed"]
    assert bench.differences({"x": card}, {"x": {**card, "status": "timeout"}}) == ["x: status graded -> timeout"]
    assert bench.differences({"x": card}, {}) == ["x: graded only quiet"]


def test_a_few_timing_sensitive_files_score_the_same_quiet_and_loaded(tmp_path):
    bench = _bench()
    files = []
    for eid, track, stem in FILES:
        folder = get_exercise(eid, track=track).samples_path
        path = folder / f"{stem}.py"
        assert path.is_file(), path
        files.append((eid, track, f"sample-{stem}", path.read_text(encoding="utf-8")))
    lines = []
    found = bench.compare(files, tmp_path, seeds=[3], sandbox="process", say=lines.append)
    assert found == [], "\n".join(lines + found)
    assert lines and f"{len(FILES)} files" in lines[0]
