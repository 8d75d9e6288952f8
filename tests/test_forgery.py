"""Probe figures a submission cannot forge: the host's CPU-time and peak-memory observation and the
tamper flags.

The counts are made inside the submission's process; the host samples the sandbox's CPU time and a
resettable high-water mark of its memory from outside (``/proc`` for the process backend, the
container's cgroup under docker) at the step frames' boundaries, with the runner blocked there until
the host acknowledges (the frame handshake), and the probe judge flags, for the interviewer only,
observed time growing much faster than the counted work, observed peak memory far above the counted
peak bytes, and a probe whose largest sizes the host could not observe because the runner did not
wait for it.
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
from grader.judge.forgery import (MEASURABLE_S, MEM_MEASURABLE_BYTES, MEM_RATIO, SLOPE_MARGIN, memory_tamper_flag,
                                  memory_unobserved_flag, tamper_flag)
from grader.run.channel import decode_stream
from grader.run import runner
from grader.run.runner import encode_step_frame, write_frame
from grader.sandbox.observe import (CGROUP_ROOT, CpuTimeline, FrameSync, MemoryWatch, attach_observed,
                                    attach_observed_cpu, cgroup_cpu_source, cgroup_memory_watch,
                                    process_memory_watch, process_tree_cpu_seconds)

ROOT = Path(__file__).resolve().parent.parent
SAMPLES = ROOT / "submissions" / "samples"

#: Correct attention scores plus hidden work whose CPU time grows like seq_len^5, done with the FLOP
#: counter switched off: counts stay the reference's. It hides work only inside a counted call (not
#: in the probe's timing repeats or the other cases), so the run stays well inside its 60 s under
#: load. Sized in CPU seconds, not in FLOPs (products of (4 seq_len)^2 matrices until the process has
#: spent 0.1 s x (seq_len/64)^5 on them), so that the margin is the same on a fast CPU as on a slow
#: one (sized in FLOPs, seq_len=64 took 0.12 s on one machine and 0.026 s, under ``POINT_S``, on a
#: faster one): 0.1 s at seq_len=64 (twice ``POINT_S``), 3.2 s at 128, an observed slope of ~5
#: against the flag's threshold of 2 + ``SLOPE_MARGIN`` = 3.5.
FORGER = '''
import sys
import time
import numpy as np


def _counter():
    for mod in list(sys.modules.values()):
        c = getattr(mod, "COUNTER", None)
        if c is not None and hasattr(c, "matmul_flops"):
            return c
    return None


def _hidden_work(seq_len):
    c = _counter()
    if c is None or not c.active:
        return
    c.active = False
    try:
        n = 4 * seq_len
        m = np.full((n, n), 1.0 / n)
        until = time.process_time() + 0.1 * (seq_len / 64) ** 5
        while time.process_time() < until:
            m = m @ m
    finally:
        c.active = True


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

#: Softmax as 1 / sum_j exp(x_j - x_i) (exact and stable, but every pairwise difference along the
#: axis is held: (rows, n, n) float64, 33.5 MB at n=1024 for the probe's 4 rows). ``{alloc}`` is where
#: that buffer comes from: ``np.empty`` (an honest quadratic-memory bug, which tracemalloc counts),
#: or an anonymous ``mmap`` (memory tracemalloc never sees: a forged low count). The buffer is
#: allocated as soon as the step starts and freed before it returns: the host sees it only because it
#: reads the memory with the runner blocked at both frame boundaries (the handshake; observe.py).
PAIRWISE = '''
import mmap
import numpy as np
{patch}

def _buffer(shape, dtype):
    count = int(np.prod(shape))
    return {alloc}


def softmax(x, axis=-1):
    z = np.moveaxis(np.asarray(x), axis, -1)
    finite_row = np.isfinite(z.max(axis=-1, keepdims=True))
    safe = np.where(np.isneginf(z), np.finfo(z.dtype).min, z)
    diffs = _buffer(safe.shape + (safe.shape[-1],), safe.dtype)
    with np.errstate(over="ignore"):
        for i in range(safe.shape[-1]):  # row by row: a broadcast subtract would buffer 128 kB
            np.subtract(safe, safe[..., i:i + 1], out=diffs[..., i, :])
        np.exp(diffs, out=diffs)
        p = 1.0 / diffs.sum(axis=-1)
    del diffs
    p = np.where(np.isneginf(z) | ~finite_row, 0.0, p).astype(z.dtype)
    return np.moveaxis(p, -1, axis)
'''
TRACKED = "np.empty(shape, dtype)"
HIDDEN = ("np.frombuffer(mmap.mmap(-1, max(count, 1) * np.dtype(dtype).itemsize), dtype=dtype, "
          "count=count).reshape(shape)")
#: Patches the instrument's reader: the traced peak is reported as the memory in use at the end.
PATCH_TRACEMALLOC = """
import tracemalloc
_real = tracemalloc.get_traced_memory
tracemalloc.get_traced_memory = lambda: (_real()[0], _real()[0])
"""
MEMORY_FORGERS = {"mmap": PAIRWISE.format(patch="", alloc=HIDDEN),
                  "patched_tracemalloc": PAIRWISE.format(patch=PATCH_TRACEMALLOC, alloc=TRACKED)}
#: Patches the runner (the sandbox's ``__main__``) so that it never waits for the host's
#: acknowledgements: its frames and its exit then race the host's reads of the memory.
SKIP_HANDSHAKE = """
import sys as _sys
_sys.modules["__main__"].FrameSync.wait = lambda self: None
"""
HANDSHAKE_SKIPPER = PAIRWISE.format(patch=SKIP_HANDSHAKE, alloc=HIDDEN)
HONEST_QUADRATIC = PAIRWISE.format(patch="", alloc=TRACKED)


# -- the flag's arithmetic, against slopes worked out by hand -----------------------------------------

SIZES = [16, 32, 64, 128]


def test_time_growing_much_faster_than_the_count_is_flagged_with_both_exponents():
    counted = [1e6 * (s / 16) ** 2 for s in SIZES]           # grows like L^2
    observed = [0.001 * (s / 16) ** 4 for s in SIZES]         # 1, 16, 256 ms... 4096 ms: like L^4
    flag = tamper_flag("seq_len", SIZES, observed, counted)
    assert flag is not None
    # only sizes at >= 50 ms are fitted (64 and 128): log(16)/log(2) = 4 and log(4)/log(2) = 2
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
    observed = [0.0, 0.0, 0.06, 2 * 0.12]                     # L, the largest slowed down 2x
    flag = tamper_flag("seq_len", SIZES, observed, counted)
    assert flag is None and math.log(0.24 / 0.06) / math.log(2) <= 1.0 + SLOPE_MARGIN


def test_unobserved_or_tick_quantised_series_are_not_flagged():
    counted = [1e6 * s for s in SIZES]
    assert tamper_flag("seq_len", SIZES, [None, 0.01, 0.1, 1.0], counted) is None
    assert tamper_flag("seq_len", SIZES, [0.0, 0.0, 0.01, 0.9], counted) is None  # one fitted point
    # 40 ms is four clock ticks: too coarse to enter the fit, so L^5 growth is still not judged
    assert tamper_flag("seq_len", SIZES, [0.0, 0.0, 0.04, 0.04 * 32], counted) is None


MIB = 2 ** 20
MEM_SIZES = [128, 256, 512, 1024]


def test_observed_memory_far_above_the_count_at_both_largest_sizes_is_flagged():
    counted = [8e3 * s / 128 for s in MEM_SIZES]                # linear: 8 kB ... 64 kB
    observed = [8.0 * 8 * s * s for s in MEM_SIZES]             # (8, n, n) float64: 1 MB ... 67 MB
    flag = memory_tamper_flag("row length", MEM_SIZES, observed, counted)
    assert flag is not None
    assert flag["ratios"] == pytest.approx([8 * 8 * 512 * 512 / 32e3, 8 * 8 * 1024 * 1024 / 64e3])
    assert flag["observed_slope"] == pytest.approx(2.0) and flag["counted_slope"] == pytest.approx(1.0)
    assert "row length=1024 was 67.1 MB, 1049x the counted peak memory of 64 kB" in flag["message"]
    assert "row length^2.0" in flag["message"] and "tampered" in flag["message"]


def test_observed_memory_near_the_count_or_too_small_is_not_flagged():
    counted = [8.0 * 8 * s * s for s in MEM_SIZES]              # an honest quadratic temporary
    assert memory_tamper_flag("n", MEM_SIZES, [2.5 * c for c in counted], counted) is None
    small = [8e3 * s / 128 for s in MEM_SIZES]
    # far above the count, but under 16 MiB at the largest size: pages and heap reuse dominate
    assert memory_tamper_flag("n", MEM_SIZES, [0, 0, 2 * MIB, MEM_MEASURABLE_BYTES - 1], small) is None
    # a one-off at the largest size only (a library buffer first touched there) is not judged
    assert memory_tamper_flag("n", MEM_SIZES, [0, 0, 0.5 * MIB, 40 * MIB], small) is None
    assert memory_tamper_flag("n", MEM_SIZES, [0, 0, 3 * MIB, 40 * MIB], [0, 0, 3 * MIB / MEM_RATIO, 1]) is None
    assert memory_tamper_flag("n", MEM_SIZES, [0, 0, None, 40 * MIB], small) is None


def test_a_largest_size_missed_while_memory_was_readable_gets_a_note():
    observed = [0.4 * MIB, 2 * MIB, 8 * MIB, None]
    flag = memory_unobserved_flag("n", MEM_SIZES, observed, [False, False, False, True])
    assert flag["unobserved_sizes"] == [1024] and flag["observed_peak_bytes"] == observed
    assert flag["message"].startswith("the host could not observe the sandbox's peak memory at n=1024: ")
    both = memory_unobserved_flag("n", MEM_SIZES, [0.4 * MIB, 2 * MIB, None, None], [True] * 4)
    assert both["unobserved_sizes"] == [512, 1024] and "at n=512 and n=1024:" in both["message"]


def test_no_note_when_observed_or_when_the_memory_was_never_readable():
    assert memory_unobserved_flag("n", MEM_SIZES, [0.4 * MIB, 2 * MIB, 8 * MIB, 33 * MIB], [False] * 4) is None
    # no memory source on this host (or an in-process run): unobserved, but nothing was missed
    assert memory_unobserved_flag("n", MEM_SIZES, [None] * 4, [False] * 4) is None
    # a small size missed is not judged (the cross-check reads the two largest only)
    assert memory_unobserved_flag("n", MEM_SIZES, [None, 2 * MIB, 8 * MIB, 33 * MIB], [True, False, False, False]) is None


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


_MEMORY_PROBE = """
import sys
import numpy as np
sys.stdout.write("ready\\n"); sys.stdout.flush()
sys.stdin.readline()
a = np.ones(48 * 2 ** 20 // 8)        # 48 MiB written: resident, then freed (munmap)
del a
sys.stdout.write("freed\\n"); sys.stdout.flush()
sys.stdin.readline()
"""


def test_process_memory_watch_sees_a_freed_temporary_and_resets_between_marks():
    import subprocess  # noqa: PLC0415
    import sys  # noqa: PLC0415

    child = subprocess.Popen([sys.executable, "-c", _MEMORY_PROBE], stdin=subprocess.PIPE, stdout=subprocess.PIPE)
    try:
        assert child.stdout.readline() == b"ready\n"
        watch = process_memory_watch(child.pid)
        first = watch.mark()
        assert first is not None
        child.stdin.write(b"go\n")
        child.stdin.flush()
        assert child.stdout.readline() == b"freed\n"
        peak, current = watch.mark()
        assert peak - first[1] >= 46 * MIB                      # the 48 MiB seen after it was freed
        assert current - first[1] < 8 * MIB                     # and no longer in use
        again, _ = watch.mark()
        assert again - current < 4 * MIB                        # the reset forgot it
    finally:
        child.kill()
        child.wait()
    assert process_memory_watch(2 ** 22 + 12345).mark() is None


def test_cgroup_memory_watch_reads_and_resets_v1_and_reads_v2(tmp_path: Path):
    v1 = tmp_path / "v1" / "memory" / "docker" / "abc"
    watch = cgroup_memory_watch("abc", str(tmp_path / "v1"))
    assert watch.mark() is None                                 # not started yet: no cgroup
    v1.mkdir(parents=True)
    (v1 / "memory.max_usage_in_bytes").write_text("90000000\n")
    (v1 / "memory.usage_in_bytes").write_text("20000000\n")
    assert watch.mark() == (90000000, 20000000)
    assert (v1 / "memory.max_usage_in_bytes").read_text() == "0"   # reset (the kernel: to the usage)
    v2 = tmp_path / "v2" / "system.slice" / "docker-def.scope"
    v2.mkdir(parents=True)
    (v2 / "memory.peak").write_text("70000000\n")
    (v2 / "memory.current").write_text("30000000\n")
    assert cgroup_memory_watch("def", str(tmp_path / "v2")).mark() == (70000000, 30000000)


def test_each_step_gets_its_peak_above_the_usage_at_the_previous_frame():
    data, ends = _stream()
    marks = iter([(500, 100), (900, 150), (160, 120)])          # (peak since last mark, usage now)
    timeline = CpuTimeline(None, memory=MemoryWatch(lambda: None, lambda: True, lambda: None))
    timeline.memory.mark = lambda: next(marks)
    for end in ends:
        timeline.sample(end)
    results = decode_stream(data)
    attach_observed(results, timeline)
    assert results.steps["a"].observed_peak_bytes == 900 - 100
    assert results.steps["b"].observed_peak_bytes == 160 - 150  # its own window only, not a's peak


def test_a_chunk_running_past_a_frame_leaves_both_steps_unobserved_and_missed():
    data, ends = _stream()
    marks = iter([(500, 100), (900, 150)])
    timeline = CpuTimeline(None, memory=MemoryWatch(lambda: None, lambda: True, lambda: None))
    timeline.memory.mark = lambda: next(marks)
    timeline.sample(ends[0])
    timeline.sample(ends[2])                                    # frames a and b arrived in one chunk
    results = decode_stream(data)
    attach_observed(results, timeline)
    # a's mark also holds b's work (b ran before the host read a's frame), and b's ran before the reset
    assert results.steps["a"].observed_peak_bytes is None and results.steps["a"].observed_peak_missed
    assert results.steps["b"].observed_peak_bytes is None and results.steps["b"].observed_peak_missed


def _synced_stream(token_a: str | None) -> tuple[bytes, list[int]]:
    """``_stream`` with steps a and b measured, a echoing ``token_a`` (None: no token) and b the token
    ``"b0"`` (what the host acknowledged at a's frame in ``_synced_timeline``)."""
    buf, ends = io.BytesIO(), []
    write_frame(buf, "import", json.dumps({"ok": True}).encode())
    ends.append(buf.tell())
    for sid, token in (("a", token_a), ("b", "b0")):
        report = {"id": sid, "ok": True, "measure": {"peak_bytes": 1}}
        if token is not None:
            report["sync_token"] = token
        write_frame(buf, "step", encode_step_frame(report, {}))
        ends.append(buf.tell())
    return buf.getvalue(), ends


def _synced_timeline(ends: list[int]) -> CpuTimeline:
    """A timeline that marked the memory at each frame and acknowledged ``a0`` at the import frame
    and ``b0`` at a's frame."""
    marks = iter([(500, 100), (900, 150), (160, 120)])
    timeline = CpuTimeline(None, memory=MemoryWatch(lambda: None, lambda: True, lambda: None),
                           sync=FrameSync(lambda b: None))
    timeline.memory.mark = lambda: next(marks)
    for end in ends:
        timeline.sample(end)
    timeline.tokens.update({ends[0]: "a0", ends[1]: "b0"})
    return timeline


@pytest.mark.parametrize("token_a", [None, "forged", "b0"])
def test_a_measured_step_that_does_not_echo_the_token_acknowledged_before_it_is_missed(token_a):
    """A runner whose acknowledgements were forged, stolen or skipped still writes its frames one by
    one, so the host marks every boundary exactly; only the token proves it waited for the mark."""
    data, ends = _synced_stream(token_a)
    results = decode_stream(data)
    attach_observed(results, _synced_timeline(ends))
    assert results.steps["a"].observed_peak_bytes is None and results.steps["a"].observed_peak_missed
    assert results.steps["b"].observed_peak_bytes == 160 - 150  # echoed its token: observed


def test_a_measured_step_echoing_the_token_acknowledged_before_it_is_observed():
    data, ends = _synced_stream("a0")
    results = decode_stream(data)
    attach_observed(results, _synced_timeline(ends))
    assert results.steps["a"].observed_peak_bytes == 900 - 100 and not results.steps["a"].observed_peak_missed


def test_nothing_is_missed_when_the_memory_could_never_be_read():
    data, ends = _stream()
    timeline = CpuTimeline(None, memory=MemoryWatch(lambda: None, lambda: True, lambda: None))
    for end in ends:
        timeline.sample(end)                                    # every mark fails: the record ends
    results = decode_stream(data)
    attach_observed(results, timeline)
    assert [(s.observed_peak_bytes, s.observed_peak_missed) for s in results.steps.values()] == [(None, False)] * 2


def test_the_host_acknowledges_only_chunks_that_end_exactly_at_a_frame():
    data, ends = _stream()
    sent: list[int] = []
    sync = FrameSync(lambda b: sent.append(int.from_bytes(b[:runner.COUNT_BYTES], "big")))
    marks: list[int] = []
    timeline = CpuTimeline(lambda: 1.0, sync=sync)
    timeline.sample = lambda total: marks.append(total)        # the mark comes before the ack
    pieces = [data[:5], data[5:ends[0]], data[ends[0]:ends[0] + 20], data[ends[0] + 20:ends[2] - 3],
              data[ends[2] - 3:]]
    total, acked_at = 0, []
    for piece in pieces:
        total += len(piece)
        before = len(sent)
        timeline.arrived(piece, total)
        if len(sent) > before:
            acked_at.append(total)
    assert marks == [5, ends[0], ends[0] + 20, ends[2] - 3, ends[2]]   # every chunk is sampled
    assert acked_at == [ends[0], ends[2]] and sent == [1, 3]   # header split over two chunks: one frame
    assert not sync.broken and sync.frames == 3
    assert sorted(timeline.tokens) == [ends[0], ends[2]] and len(set(timeline.tokens.values())) == 2


def test_a_stream_that_is_not_frames_stops_the_acknowledgements():
    sent = []
    sync = FrameSync(sent.append)
    assert not sync.feed(b"@@GRADER-FRAME step 4\nabcd" + b"garbage that is no header\n")
    assert sync.broken and sync.frames == 1
    assert not sync.feed(b"@@GRADER-FRAME done 0\n")        # nothing after a break is trusted
    assert not FrameSync().feed(b"x" * (FrameSync.MAX_HEADER + 1))


def test_acknowledgements_to_a_runner_that_never_reads_never_block_the_host():
    import socket  # noqa: PLC0415

    from grader.sandbox.docker import SocketAcks  # noqa: PLC0415
    from grader.sandbox.process import AckPipe  # noqa: PLC0415

    read_fd, write_fd = os.pipe()
    pipe = AckPipe(os.fdopen(write_fd, "wb"))
    host, runner_end = socket.socketpair()
    acks = SocketAcks(host)
    for count in range(1, 200_001):                             # 1.6 MB: past any pipe or socket buffer
        pipe.send(count.to_bytes(8, "big"))
        acks.send(count.to_bytes(8, "big"))
    first = os.read(read_fd, 16)
    assert [int.from_bytes(first[i:i + 8], "big") for i in (0, 8)] == [1, 2]   # whole acks, in order
    pipe.close()
    acks.close()
    pipe.send(b"\0" * 8)                                       # after close: dropped, never raises
    acks.send(b"\0" * 8)
    os.close(read_fd)
    runner_end.close()


def _ack(count: int, token: bytes = b"\0" * 8) -> bytes:
    """One acknowledgement as the host sends it: the frame count, then the token."""
    return count.to_bytes(runner.COUNT_BYTES, "big") + token


def _runner_sync():
    read_fd, write_fd = os.pipe()
    return runner.FrameSync(io.BytesIO(), read_fd), write_fd


def test_the_runner_waits_until_every_frame_written_is_acknowledged():
    import threading  # noqa: PLC0415

    sync, host = _runner_sync()
    sync.write("import", b"{}")
    sync.write("step", b"x")
    answer = threading.Timer(0.2, lambda: (os.write(host, _ack(1, b"\1" * 8)),
                                           os.write(host, _ack(2, b"\2" * 8)[:5]),
                                           os.write(host, _ack(2, b"\2" * 8)[5:])))
    answer.start()
    sync.wait()
    answer.join()
    assert (sync.acked, sync.written, sync.fd is not None) == (2, 2, True)
    assert sync.token == (b"\2" * 8).hex()                     # the latest acknowledgement's token
    sync.wait()                                                 # nothing new written: returns at once
    os.close(host)
    sync.write("done", b"{}")
    sync.wait()                                                 # end of file: the host is gone
    assert sync.fd is None and sync.acked == 2
    sync.write("done", b"{}")
    sync.wait()                                                 # and it never waits again


def test_the_runner_stops_waiting_on_an_acknowledgement_of_frames_it_never_wrote():
    sync, host = _runner_sync()
    sync.write("import", b"{}")
    os.write(host, _ack(7))
    sync.wait()
    assert sync.fd is None and sync.acked == 0
    os.close(host)
    assert runner.FrameSync(io.BytesIO(), None).wait() is None  # no handshake asked for


def test_the_runner_never_blocks_on_acknowledgements_another_reader_took(monkeypatch):
    """A submission's thread reading the acknowledgement descriptor can take the bytes select saw
    before the runner reads them: the read must not block (for ever), the wait ends at its timeout."""
    import threading  # noqa: PLC0415

    sync, host = _runner_sync()
    sync.write("import", b"{}")
    monkeypatch.setattr(runner, "ACK_TIMEOUT_S", 0.3)
    monkeypatch.setattr(runner.select, "select", lambda r, w, x, t: (list(r), [], []))  # always "ready"
    waiter = threading.Thread(target=sync.wait, daemon=True)
    waiter.start()
    waiter.join(5.0)
    assert not waiter.is_alive(), "the runner blocked in a read of an empty acknowledgement pipe"
    assert sync.fd is None and sync.acked == 0
    os.close(host)


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


def _memory_check(card):
    return next(c for c in card.checks if c.id == "memory_scaling")


def _require_process_memory_source() -> None:
    """Skip on a host where a process's memory high-water mark cannot be read and reset at all
    (no ``/proc/<pid>/status`` ``VmHWM`` or no ``clear_refs``, Linux < 4.0): the host then observes
    nothing and makes no cross-check. Everywhere else the observation must be made, every time."""
    if process_memory_watch(os.getpid()).mark() is None:
        pytest.skip("this host cannot read and reset a process's memory high-water mark "
                    "(/proc/<pid>/status VmHWM and /proc/<pid>/clear_refs)")


def _graded(path: Path, sandbox: str = "process"):
    """Grade ``path`` (softmax, seed 7) once; the memory probe's check."""
    card = grade_submission(get_exercise("softmax"), path, sandbox=sandbox, seed=7)
    return card, _memory_check(card)


@pytest.mark.parametrize("kind", sorted(MEMORY_FORGERS))
def test_forged_low_peak_memory_is_flagged_for_the_interviewer_only(tmp_path: Path, kind: str):
    _require_process_memory_source()
    path = tmp_path / "forger.py"
    path.write_text(MEMORY_FORGERS[kind])
    card, check = _graded(path)
    assert None not in check.details["observed_peak_bytes"], check.details   # every size observed
    assert check.verdict == "passed", check.message            # the forged count passes the probe...
    flag = check.details["interviewer_flag"]                   # ...and the host saw what it hid
    assert min(flag["ratios"]) > MEM_RATIO and flag["observed_peak_bytes"][-1] > 30e6  # 4 x 1024^2 x 8 B
    assert check.message.startswith("Interviewer note: the sandbox's peak memory at row length=1024 was ")
    assert card.all_passed                                     # evidence, not a score change
    candidate = _memory_check(card.candidate_view())
    assert "interviewer_flag" not in candidate.details and candidate.message == ""
    shown = Console(record=True, width=200)
    render_scorecard(card.candidate_view(), shown)
    assert "Interviewer note" not in shown.export_text()


@pytest.mark.parametrize("sandbox", ["process", pytest.param("docker", marks=pytest.mark.docker)])
def test_honest_quadratic_memory_fails_the_probe_and_is_not_flagged(tmp_path: Path, sandbox: str):
    if sandbox == "process":
        _require_process_memory_source()
    path = tmp_path / "pairwise.py"
    path.write_text(HONEST_QUADRATIC)
    card, check = _graded(path, sandbox)
    if sandbox == "docker":
        _require_docker_memory_source(card, check)
    assert check.verdict == "failed" and "grows faster" in check.message
    assert "interviewer_flag" not in check.details
    counted, observed = check.details["candidate"], check.details["observed_peak_bytes"]
    # the host saw, at every size, the temporary that tracemalloc counted (33.5 MB at the largest)
    assert None not in observed, observed
    for c, o in zip(counted[-2:], observed[-2:]):
        assert 0.5 * c <= o <= 2 * c, (counted, observed)


@pytest.mark.parametrize("sandbox", ["process", pytest.param("docker", marks=pytest.mark.docker)])
def test_a_runner_patched_to_skip_the_handshake_gains_nothing(tmp_path: Path, sandbox: str):
    # Its frames and its exit race the host's reads: each grading either still observes the hidden
    # 33.5 MB (the tamper flag) or misses the largest sizes (the note): never a silent pass.
    if sandbox == "process":
        _require_process_memory_source()
    path = tmp_path / "skipper.py"
    path.write_text(HANDSHAKE_SKIPPER)
    card, check = _graded(path, sandbox)
    if sandbox == "docker":
        _require_docker_memory_source(card, check)
    assert check.verdict == "passed" and card.all_passed, check.message
    flag = check.details["interviewer_flag"]
    if "unobserved_sizes" in flag:
        assert check.message.startswith("Interviewer note: the host could not observe the sandbox's peak memory at "
                                        "row length="), check.message
        assert set(flag["unobserved_sizes"]) <= {512, 1024} and flag["unobserved_sizes"]
    else:
        assert min(flag["ratios"]) > MEM_RATIO and flag["observed_peak_bytes"][-1] > 30e6
    candidate = _memory_check(card.candidate_view())
    assert "interviewer_flag" not in candidate.details and candidate.message == ""


def _require_docker_memory_source(card, check) -> None:
    """Skip where the host cannot read the container's memory cgroup (no known cgroup v1/v2 layout,
    or cgroup v2 before Linux 6.12, whose ``memory.peak`` cannot be reset): nothing was observed and
    nothing was missed. Everywhere else the observation must be made."""
    assert card.sandbox.get("backend") == "docker"
    if all(v is None for v in check.details.get("observed_peak_bytes", [None])) and \
            "interviewer_flag" not in check.details:
        pytest.skip(f"the host could not read the container's memory cgroup under {CGROUP_ROOT}")


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


@pytest.mark.slow
@pytest.mark.parametrize("path", [p for ex in ("softmax", "causal_mask", "flash_attention")
                                  for p in sorted((SAMPLES / ex).glob("**/correct_*.py"))],
                         ids=lambda p: str(p.relative_to(SAMPLES)))
def test_correct_samples_peak_memory_is_never_flagged(path: Path):
    ex = path.relative_to(SAMPLES).parts[0]
    track = path.parent.name if path.parent.name in ("torch", "numpy") else None
    card = grade_submission(get_exercise(ex, track=track), path, sandbox="process", seed=3)
    check = _memory_check(card)
    assert check.verdict == "passed" and "interviewer_flag" not in check.details, (check.message, check.details)
    assert "observed_peak_bytes" in check.details


@pytest.mark.docker
def test_forged_peak_memory_is_flagged_under_docker(tmp_path: Path):
    path = tmp_path / "forger.py"
    path.write_text(MEMORY_FORGERS["mmap"])
    card, check = _graded(path, "docker")
    _require_docker_memory_source(card, check)
    assert None not in check.details["observed_peak_bytes"], check.details   # every size observed
    assert check.verdict == "passed" and min(check.details["interviewer_flag"]["ratios"]) > MEM_RATIO, check.details


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
