"""Probe figures a submission cannot forge: the host's CPU-time observation and the tamper flag.

The counts are made inside the submission's process; the host samples the sandbox's CPU time from
outside (``/proc`` for the process backend, the container's cgroup under docker) as each step frame
arrives, and the probe judge flags, for the interviewer only, observed time growing much faster than
the counted work.
"""
from __future__ import annotations

import io
import json
import math
import os
from pathlib import Path

import numpy as np
import pytest

from grader.grading.exercise import get_exercise
from grader.grading.grade import grade_submission
from grader.grading.render import render_scorecard
from rich.console import Console
from grader.judge.forgery import MEASURABLE_S, SLOPE_MARGIN, tamper_flag
from grader.run.channel import decode_stream
from grader.run.runner import encode_step_frame, write_frame
from grader.sandbox.observe import (CpuTimeline, attach_observed_cpu, cgroup_cpu_source,
                                    process_tree_cpu_seconds)

ROOT = Path(__file__).resolve().parent.parent
SAMPLES = ROOT / "submissions" / "samples"

#: Correct attention scores plus hidden work that grows like seq_len^4 (seq_len/4 products of
#: (4 seq_len)^2 matrices), done with the FLOP counter switched off: counts stay the reference's.
FORGER = '''
import sys
import numpy as np


def _counter():
    for mod in list(sys.modules.values()):
        c = getattr(mod, "COUNTER", None)
        if c is not None and hasattr(c, "matmul_flops"):
            return c
    return None


def _hidden_work(seq_len):
    c = _counter()
    was = c.active if c is not None else None
    if c is not None:
        c.active = False
    try:
        n = 4 * seq_len
        m = np.full((n, n), 1.0 / n)
        for _ in range(max(1, seq_len // 4)):
            m = m @ m
    finally:
        if c is not None:
            c.active = was


def compute_attention_scores(query, key, mask=None):
    _hidden_work(query.shape[-2])
    scores = np.einsum("...qd,...kd->...qk", query, key) / np.sqrt(query.shape[-1]).astype(query.dtype)
    if mask is not None:
        allowed = np.broadcast_to(np.asarray(mask).astype(bool), scores.shape)
        scores = np.where(allowed, scores, np.finfo(scores.dtype).min)
    weights = np.exp(scores - scores.max(axis=-1, keepdims=True))
    weights = weights / weights.sum(axis=-1, keepdims=True)
    if mask is not None:
        weights = np.where(allowed.any(axis=-1, keepdims=True) & allowed, weights, 0.0).astype(query.dtype)
    return weights


def scaled_dot_product_attention(query, key, value, mask=None):
    weights = compute_attention_scores(query, key, mask)
    return np.einsum("...qk,...kv->...qv", weights, value), weights
'''


# -- the flag's arithmetic, against slopes worked out by hand -----------------------------------------

SIZES = [16, 32, 64, 128]


def test_time_growing_much_faster_than_the_count_is_flagged_with_both_exponents():
    counted = [1e6 * (s / 16) ** 2 for s in SIZES]           # grows like L^2
    observed = [0.001 * (s / 16) ** 4 for s in SIZES]         # 1, 16, 256 ms... 4096 ms: like L^4
    flag = tamper_flag("seq_len", SIZES, observed, counted)
    assert flag is not None
    # only sizes at >= 20 ms are fitted (64 and 128): log(16)/log(2) = 4 and log(4)/log(2) = 2
    assert flag["fitted_sizes"] == [64, 128]
    assert flag["observed_slope"] == pytest.approx(math.log(4096 / 256) / math.log(2))
    assert flag["counted_slope"] == pytest.approx(2.0)
    assert "seq_len^4.0" in flag["message"] and "seq_len^2.0" in flag["message"]
    assert "tampered" in flag["message"]


def test_overhead_flattened_time_of_correct_code_is_not_flagged():
    counted = [1e6 * (s / 16) ** 2 for s in SIZES]
    # fixed 30 ms overhead plus work like the count: grows slower than L^2
    observed = [0.03 + 0.0005 * (s / 16) ** 2 for s in SIZES]
    assert tamper_flag("seq_len", SIZES, observed, counted) is None


def test_steep_but_unmeasurable_time_is_not_flagged():
    counted = [float(s) for s in SIZES]
    observed = [1e-5 * (s / 16) ** 4 for s in SIZES]          # L^4, but 41 ms at the largest size
    assert observed[-1] < MEASURABLE_S
    assert tamper_flag("seq_len", SIZES, observed, counted) is None


def test_one_point_doubled_by_load_is_not_flagged():
    counted = [1e6 * s for s in SIZES]                        # grows like L
    observed = [0.0, 0.0, 0.03, 2 * 0.06]                     # L, the largest slowed down 2x
    flag = tamper_flag("seq_len", SIZES, observed, counted)
    assert flag is None and math.log(0.12 / 0.03) / math.log(2) <= 1.0 + SLOPE_MARGIN


def test_unobserved_or_tick_quantised_series_are_not_flagged():
    counted = [1e6 * s for s in SIZES]
    assert tamper_flag("seq_len", SIZES, [None, 0.01, 0.1, 1.0], counted) is None
    assert tamper_flag("seq_len", SIZES, [0.0, 0.0, 0.01, 0.9], counted) is None  # one fitted point


# -- the host's observation --------------------------------------------------------------------------

_CPU_PROBE = """
import os
import numpy as np
from grader.sandbox.observe import process_tree_cpu_seconds
x = np.random.default_rng(0).standard_normal((300, 300))
for _ in range(40):
    x = np.tanh(x @ x.T / 300)
t = os.times()
before = t.user + t.system
seen = process_tree_cpu_seconds(os.getpid())
t = os.times()
after = t.user + t.system
print(before, seen, after)
"""


def test_process_tree_cpu_time_matches_the_kernels_own_accounting():
    # In a fresh process with no children: the tree's time is then the process's own, which the
    # kernel also reports through os.times() (a pytest-xdist worker has live children whose time
    # the tree counts and os.times() does not until they are waited for). The reading must fall
    # between the kernel's figures taken just before and just after it, within a clock tick.
    import subprocess  # noqa: PLC0415
    import sys  # noqa: PLC0415

    run = subprocess.run([sys.executable, "-c", _CPU_PROBE], capture_output=True, text=True, timeout=120,
                         env={**os.environ, "OMP_NUM_THREADS": "1", "OPENBLAS_NUM_THREADS": "1"})
    assert run.returncode == 0, run.stderr[-2000:]
    before, seen, after = (float(v) for v in run.stdout.split())
    assert before > 0.05  # the work above was measured at all
    assert before - 0.02 <= seen <= after + 0.02, (before, seen, after)
    assert process_tree_cpu_seconds(2 ** 22 + 12345) is None


def test_cgroup_reader_reads_v1_nanoseconds_and_v2_microseconds(tmp_path: Path):
    v1 = tmp_path / "v1" / "cpuacct" / "docker" / "abc"
    v1.mkdir(parents=True)
    (v1 / "cpuacct.usage").write_text("1500000000\n")
    assert cgroup_cpu_source("abc", str(tmp_path / "v1"))() == pytest.approx(1.5)
    v2 = tmp_path / "v2" / "system.slice" / "docker-def.scope"
    reader = cgroup_cpu_source("def", str(tmp_path / "v2"))
    assert reader() is None                                     # not started yet: no cgroup
    v2.mkdir(parents=True)
    (v2 / "cpu.stat").write_text("usage_usec 2500000\nuser_usec 2000000\nsystem_usec 500000\n")
    assert reader() == pytest.approx(2.5)


def _stream() -> tuple[bytes, list[int]]:
    """Three frames (import, step a, step b) and the stream length after each."""
    buf, ends = io.BytesIO(), []
    write_frame(buf, "import", json.dumps({"ok": True}).encode())
    ends.append(buf.tell())
    for sid in ("a", "b"):
        write_frame(buf, "step", encode_step_frame({"id": sid, "ok": True}, {}))
        ends.append(buf.tell())
    return buf.getvalue(), ends


def test_each_step_gets_the_cpu_seconds_between_its_frame_and_the_previous_one():
    data, ends = _stream()
    clock = iter([1.0, 1.25, 3.0])
    timeline = CpuTimeline(lambda: next(clock))
    for end in ends:                                            # one chunk per frame
        timeline.sample(end)
    results = decode_stream(data)
    attach_observed_cpu(results, timeline)
    assert results.steps["a"].observed_cpu_seconds == pytest.approx(0.25)
    assert results.steps["b"].observed_cpu_seconds == pytest.approx(1.75)


def test_a_frame_claiming_an_observation_is_ignored_and_unsampled_runs_attach_nothing():
    buf = io.BytesIO()
    write_frame(buf, "import", json.dumps({"ok": True}).encode())
    write_frame(buf, "step", encode_step_frame({"id": "a", "ok": True, "observed_cpu_seconds": 99.0}, {}))
    results = decode_stream(buf.getvalue())
    attach_observed_cpu(results, CpuTimeline(None))
    assert results.steps["a"].observed_cpu_seconds is None


# -- end to end ---------------------------------------------------------------------------------------

def _work_check(card):
    return next(c for c in card.checks if c.id == "work_scaling")


def test_forged_counts_are_flagged_for_the_interviewer_only(tmp_path: Path):
    path = tmp_path / "forger.py"
    path.write_text(FORGER)
    card = grade_submission(get_exercise("attention_scores"), path, sandbox="process", seed=7)
    check = _work_check(card)
    assert check.verdict == "passed"                            # the verdict is kept: evidence, not proof
    flag = check.details["interviewer_flag"]
    assert flag["observed_slope"] > flag["counted_slope"] + SLOPE_MARGIN
    assert check.message.startswith("Interviewer note: observed CPU time grows like seq_len^")
    candidate = _work_check(card.candidate_view())
    assert "interviewer_flag" not in candidate.details and candidate.message == ""
    shown = Console(record=True, width=200)
    render_scorecard(card, shown)
    assert "work_scaling: Interviewer note: observed CPU time" in shown.export_text()
    shown = Console(record=True, width=200)
    render_scorecard(card.candidate_view(), shown)
    assert "Interviewer note" not in shown.export_text()


@pytest.mark.slow
@pytest.mark.parametrize("path", sorted((SAMPLES / "attention_scores").glob("correct_*.py"))
                         + sorted((SAMPLES / "attention_scores" / "torch").glob("correct_*.py")),
                         ids=lambda p: f"{p.parent.name}/{p.name}")
def test_correct_samples_are_never_flagged(path: Path):
    track = "torch" if path.parent.name == "torch" else None
    card = grade_submission(get_exercise("attention_scores", track=track), path, sandbox="process", seed=3)
    assert card.all_passed, [(c.id, c.verdict, c.message) for c in card.checks if c.verdict != "passed"]
    for check in card.checks:
        assert "interviewer_flag" not in check.details, (check.id, check.message)
    observed = _work_check(card).details
    assert observed["method"] == "count"


@pytest.mark.docker
def test_forged_counts_are_flagged_under_docker(tmp_path: Path):
    path = tmp_path / "forger.py"
    path.write_text(FORGER)
    card = grade_submission(get_exercise("attention_scores"), path, sandbox="docker", seed=7)
    assert card.sandbox.get("backend") == "docker"
    check = _work_check(card)
    assert check.verdict == "passed" and "interviewer_flag" in check.details, check.details


@pytest.mark.parametrize("line", ["from instruments import COUNTER", "import runner",
                                  "import grader.run.instruments as inst", "__import__('instruments')"])
def test_importing_the_graders_own_modules_is_forbidden(grade_source, line):
    card = grade_source("softmax", f'''
        {line}
        import numpy as np

        def softmax(x, axis=-1):
            e = np.exp(x - x.max(axis=axis, keepdims=True))
            return e / e.sum(axis=axis, keepdims=True)
    ''')
    assert {c.verdict for c in card.checks} == {"forbidden"}
    assert "at line 2" in card.status_message
