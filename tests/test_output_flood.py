"""A correct file that prints ~19 MB at import: graded (not ``crashed``), its output cut in the sandbox
to a head (the import-time part first) and a tail that starts at a line, around one marker line."""

from __future__ import annotations

from pathlib import Path

import pytest

from grader.grading.exercise import get_exercise
from grader.grading.grade import grade_submission
from grader.grading.render import clip
from grader.run.runner import FORWARD_HEAD_BYTES, FORWARD_TAIL_BYTES

FLOOD = '''
import numpy as np
print("import-time banner: hello from the top")
line = "".join(f"word{i} " for i in range(20)) + "\\n"
for i in range(19 * 1024 * 1024 // len(line)):
    print(f"{i:08d} {line}", end="")
print("the very last line")


def softmax(x, axis=-1):
    m = np.max(x, axis=axis, keepdims=True)
    m = np.where(np.isfinite(m), m, 0).astype(x.dtype)
    with np.errstate(over="ignore"):
        e = np.exp(x - m)
    s = e.sum(axis=axis, keepdims=True)
    return np.divide(e, s, out=np.zeros_like(e), where=s > 0)
'''


@pytest.mark.parametrize("sandbox", ["process", pytest.param("docker", marks=pytest.mark.docker)])
def test_nineteen_megabytes_at_import_are_cut_not_crashed(tmp_path: Path, sandbox: str):
    path = tmp_path / "flood.py"
    path.write_text(FLOOD)
    card = grade_submission(get_exercise("softmax"), path, sandbox=sandbox, seed=3)
    assert card.status == "graded" and card.all_passed, (card.status, card.status_message)
    # the public part's sandbox: the hidden part's fresh sandbox imports (and floods) again after the marker
    text = card.output["text"].partition("\n[the hidden cases ran in a fresh sandbox]\n")[0]
    assert card.output["truncated"] is True and card.candidate_view().output["truncated"] is True
    assert text.startswith("import-time banner: hello from the top\n00000000 word0")   # the import part kept
    assert len(text) <= FORWARD_HEAD_BYTES + FORWARD_TAIL_BYTES + 100
    head, marker, tail = text.partition("\n[grader: ")
    assert marker and tail.split("]\n", 1)[0].endswith(" bytes of output not kept")
    dropped = int(tail.split(" ", 1)[0])
    assert 19 * 1024 * 1024 - FORWARD_HEAD_BYTES - FORWARD_TAIL_BYTES < dropped < 22 * 1024 * 1024  # ~21 MB printed
    kept_tail = tail.split("]\n", 1)[1]
    first = kept_tail.splitlines()[0]
    assert first[:8].isdigit() and first.endswith("word19 ")                 # a whole line, not mid-word
    assert kept_tail.endswith("the very last line\n")
    assert card.candidate_view().output["text"].startswith("import-time banner")


def test_clip_keeps_head_and_tail_at_boundaries():
    text = "".join(f"line {i} alpha beta\n" for i in range(500))
    shown = clip(text, 400)
    head, _, tail = shown.partition("\n[... ")
    assert head.startswith("line 0 alpha") and head.endswith("beta")
    assert tail.split("...]\n", 1)[1].startswith("line ") and shown.endswith("line 499 alpha beta\n")
    assert len(shown) < 500 and clip("short", 400) == "short"


PATHS = '''
import os, tempfile, traceback
import numpy as np
print("file", __file__, "cwd", os.getcwd(), "tmp", tempfile.gettempdir())
try:
    raise ValueError("boom")
except ValueError:
    traceback.print_exc()


def softmax(x, axis=-1):
    m = np.max(x, axis=axis, keepdims=True)
    m = np.where(np.isfinite(m), m, 0).astype(x.dtype)
    e = np.exp(x - m)
    s = e.sum(axis=axis, keepdims=True)
    return np.divide(e, s, out=np.zeros_like(e), where=s > 0)
'''


def test_process_sandbox_output_names_no_host_temp_path(tmp_path: Path):
    """The process backend runs in a host temp folder (grade-process-XXXX); what the candidate printed
    names it as the docker sandbox's /sandbox, in both views."""
    import tempfile

    path = tmp_path / "paths.py"
    path.write_text(PATHS)
    card = grade_submission(get_exercise("softmax"), path, sandbox="process", seed=3)
    host_tmp = tempfile.gettempdir()
    for text in (card.output["text"], card.output["candidate_text"]):
        assert "file /sandbox/input/submission.py cwd /sandbox/scratch" in text
        assert 'File "/sandbox/input/submission.py", line 6' in text
        assert "grade-process-" not in text and f"{host_tmp}/" not in text


CHATTY = '''
import time
import numpy as np


def softmax(x, axis=-1):
    print("softmax called on", x.shape, "x" * 2000)
    time.sleep(0.02)  # the output capture's reader runs inside the step, whatever the load
    m = np.max(x, axis=axis, keepdims=True)
    m = np.where(np.isfinite(m), m, 0).astype(x.dtype)
    with np.errstate(over="ignore"):
        e = np.exp(x - m)
    s = e.sum(axis=axis, keepdims=True)
    return np.divide(e, s, out=np.zeros_like(e), where=s > 0)
'''


def test_printing_in_a_measured_step_adds_nothing_to_its_peak_memory(tmp_path: Path):
    """tracemalloc is process-wide: the output capture's reader thread, run inside a measured step,
    used to add a 64 KiB read buffer to the step's peak (5x the reference's at n = 128), so a NumPy
    memory probe of a correct file that prints depended on when the scheduler ran the reader. Now
    it holds what it reads in a buffer allocated once: the file that prints and sleeps in every call
    measures what the same file measures silently, and what it printed is still captured."""
    peaks = {}
    for name, source in (("chatty", CHATTY), ("silent", CHATTY.replace('print("softmax', '("softmax'))):
        path = tmp_path / f"{name}.py"
        path.write_text(source)
        card = grade_submission(get_exercise("softmax"), path, sandbox="process", seed=3)
        assert card.status == "graded" and card.all_passed, (name, card.status, card.status_message)
        probe = next(c for c in card.checks if c.id == "memory_scaling")
        peaks[name] = probe.details["candidate"]
        if name == "chatty":
            assert card.output["text"].count("softmax called on") > 10
    for chatty, silent in zip(peaks["chatty"], peaks["silent"]):
        assert abs(chatty - silent) <= 0.02 * silent + 2048, peaks
