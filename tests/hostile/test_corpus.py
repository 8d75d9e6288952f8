"""The hostile corpus: every submission in ``cases/`` ends with the status and verdicts its docstring
states, under docker and (where meaningful) the process backend, and the host stays untouched.

Each case file's docstring carries ``key: value`` lines (parsed by ``Expectation.parse``):

``expect``        the scorecard status under docker (``a|b``: either)
``process``       the status under the process backend (default: ``expect``), or ``skip: why``
``needs``         ``box``: the process backend holds the case only in a full box (its own uid, PID, IPC,
                  mount and network namespaces: ``ProcessSandbox.missing`` empty); skipped there otherwise
``passes``        the checks that must pass, every other must not: ``none``, ``all`` or ``id,id``;
                  ``|`` separates acceptable alternatives. ``input_unchanged`` is judged whether or
                  not the answer is right (one mistake, one deduction), so a hostile case that
                  returns garbage without touching its input passes it: its point is worth no more
                  than what an honest non-mutating wrong answer earns.
``verdicts``      verdicts that must appear among the checks
``limits``        ``Limits`` overrides (``wall_seconds=5 memory_bytes=...``)
``exercise``      the exercise (default ``softmax``)
``output-has`` / ``output-lacks``   text the captured output must (not) hold (``|`` separates several)
``host``          extra host invariants: ``memory`` (peak RSS flat), ``exports`` (table, HTML report
                  and exports render), ``no-unpickle`` (a pickle's side effect never happened),
                  ``hidden-inputs`` (issue 20: the case printed or raised a sha256 of a hidden input,
                  which the interviewer's view shows, and not one reaches the candidate view)

Invariants checked for every case: the scorecard validates; the candidate view shows each hidden
check as one bit (passed, or ``failed`` with the one fixed message and no details); the status is never
``infrastructure_error``; the run ends within its wall limit plus a grace; the captured output is
capped and holds no raw control character; no container (``conftest``), child process or temporary
folder is left; the runner, the references, NumPy and ``/etc`` on the host are unchanged.
"""

from __future__ import annotations

import dataclasses
import hashlib
import io
import json
import os
import re
import resource
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import pytest
from rich.console import Console

from grader.grading.exercise import get_exercise
from grader.cohort.exports import export_text
from grader.grading.grade import grade_submission
from grader.grading.render import render_scorecard
from grader.cohort.report import render_report
from grader.grading.restart import MAX_RUNS
from grader.sandbox.base import Limits
from grader.sandbox.deadline import BACKSTOP_FACTOR
from grader.grading.scorecard import validate

ROOT = Path(__file__).resolve().parents[2]
CASES = Path(__file__).resolve().parent / "cases"
#: Allowed beyond a wall limit for starting, killing and removing a sandbox (seconds); generous.
GRACE_S = 25.0
UNPICKLE_MARKER = Path("/tmp/attention-grader-unpickled-marker")
RAW_CONTROL = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069]")
FAST = {"wall_seconds": 20.0}  # every case: a hung one must not cost the default 60 s


@dataclass(frozen=True)
class Expectation:
    """What one case must end with (see the module docstring)."""

    name: str
    path: Path
    status: tuple[str, ...]
    process: tuple[str, ...] | str  # statuses, or the reason it is skipped there
    passes: tuple[str, ...] = ("none",)
    verdicts: tuple[str, ...] = ()
    limits: dict = field(default_factory=dict)
    exercise: str = "softmax"
    output_has: tuple[str, ...] = ()
    output_lacks: tuple[str, ...] = ()
    host: tuple[str, ...] = ()
    needs_box: bool = False

    @classmethod
    def parse(cls, path: Path) -> "Expectation":
        import ast  # noqa: PLC0415

        doc = ast.get_docstring(ast.parse(path.read_text())) or ""
        fields = {}
        for line in doc.splitlines():
            key, sep, value = line.partition(":")
            if sep and key.strip() in ("expect", "process", "passes", "verdicts", "limits", "exercise",
                                       "output-has", "output-lacks", "host", "needs"):
                fields[key.strip()] = value.strip()
        if "expect" not in fields:
            raise ValueError(f"{path.name}: no 'expect:' line in its docstring")
        split = lambda text, sep="|": tuple(p.strip() for p in text.split(sep) if p.strip())  # noqa: E731
        status = split(fields["expect"])
        process = fields.get("process", fields["expect"])
        limits = {}
        for item in fields.get("limits", "").split():
            key, _, value = item.partition("=")
            limits[key] = float(value) if "." in value or key.endswith("seconds") and key != "cpu_seconds" else int(value)
        return cls(name=path.stem, path=path, status=status,
                   process=process.strip() if process.startswith("skip") else split(process),
                   passes=split(fields.get("passes", "none")), verdicts=split(fields.get("verdicts", ""), ","),
                   limits=limits, exercise=fields.get("exercise", "softmax"),
                   output_has=split(fields.get("output-has", "")), output_lacks=split(fields.get("output-lacks", "")),
                   host=split(fields.get("host", ""), ","), needs_box=fields.get("needs") == "box")

    def make_limits(self) -> Limits:
        base = get_exercise(self.exercise).limits
        return dataclasses.replace(base, **{**FAST, **self.limits})


EXPECTATIONS = [Expectation.parse(p) for p in sorted(CASES.glob("*.py"))]


def _params():
    for exp in EXPECTATIONS:
        yield pytest.param(exp, "docker", id=f"{exp.name}-docker", marks=pytest.mark.docker)
        if isinstance(exp.process, str):
            continue
        yield pytest.param(exp, "process", id=f"{exp.name}-process")


def _fingerprint() -> dict[str, str]:
    """Digests of host files a submission must never change."""
    paths = [ROOT / "grader" / "run" / "runner.py", ROOT / "grader" / "run" / "instruments.py", Path(np.__file__),
             Path("/etc/passwd"), Path("/etc/hosts"), *sorted((ROOT / "reference").glob("*.py"))]
    # every path must exist: a moved runner would otherwise drop out of the check in silence
    return {str(p): hashlib.sha256(p.read_bytes()).hexdigest() for p in paths}


def _children() -> set[int]:
    mine = str(os.getpid())
    found = set()
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                with open(f"/proc/{entry}/stat") as fh:
                    if fh.read().rsplit(")", 1)[1].split()[1] == mine:
                        found.add(int(entry))
            except (OSError, IndexError):
                pass
    return found


def _passes_ok(exp: Expectation, card) -> tuple[bool, set[str]]:
    passed = {c.id for c in card.checks if c.verdict == "passed"}
    every = {c.id for c in card.checks}
    for alternative in exp.passes:
        wanted = set() if alternative == "none" else every if alternative == "all" else set(alternative.split(","))
        if passed == wanted:
            return True, passed
    return False, passed


def _check_exports(card) -> None:
    console = Console(file=io.StringIO(), width=120)
    render_scorecard(card, console)
    assert "\x1b]52" not in console.file.getvalue()
    for fmt in ("gradescope", "junit", "csv", "json"):
        text = export_text(fmt, [("hostile", card)])
        assert text and "\x00" not in text
    html = render_report([("hostile", card)])
    assert "\x1b" not in html and "\x00" not in html


def test_the_corpus_is_complete():
    """Each kind of attack the issue lists has a case, and every case states what it expects."""
    names = {e.name for e in EXPECTATIONS}
    for needed in ("cpu_spin", "sleep_forever", "ignore_signals", "daemon_double_fork", "memory_bomb",
                   "huge_numpy_alloc", "huge_torch_alloc", "fill_tmpfs", "fork_bomb", "thread_bomb", "stdout_flood",
                   "nasty_line", "write_escape", "snoop_files", "snoop_env_proc", "network", "privilege",
                   "sys_exit_at_import", "os_exit_at_import", "os_exit_mid_plan", "exit_mid_plan", "fake_pass_output",
                   "channel_close", "channel_devnull", "channel_forged_run", "returns_liar", "returns_ndarray_subclass",
                   "returns_object_dtype", "returns_nan", "returns_zero_d", "shadow_modules", "bait_npy_shape",
                   "bait_zip_inflate", "bait_nested_json", "returns_enormous",
                   # the frame handshake (runner --sync): acknowledgements read, closed, forged; the wait
                   # patched; stdout and the output capture broken; exits, sleeps and threads in measured steps
                   "sync_stdin_read", "sync_ack_steal", "sync_ack_close", "sync_ack_forge", "sync_dup2_devnull",
                   "sync_fake_frames_stdout", "sync_capture_close", "sync_patch_wait_skip", "sync_patch_wait_block",
                   "sync_exit_measured", "sync_sleep_measured", "sync_thread_alloc",
                   # interview mode's secrets (issue 20): hidden inputs printed at import, carried by a
                   # public exception, read through the verdict kinds
                   "secret_import_print", "secret_public_exception", "secret_verdict_kinds"):
        assert needed in names
    for exp in EXPECTATIONS:
        assert "infrastructure_error" not in exp.status and exp.status


@pytest.mark.parametrize("exp,backend", list(_params()))
def test_hostile_submission(exp: Expectation, backend: str, tmp_path, monkeypatch):
    if backend == "process" and exp.name in ("network",):
        from grader.sandbox.process import ProcessSandbox  # noqa: PLC0415

        if "own namespace" not in ProcessSandbox().info().isolation["network"]:
            pytest.skip("the process backend cannot unshare the network here")
    if backend == "process" and exp.needs_box:
        from grader.sandbox.process import ProcessSandbox  # noqa: PLC0415

        missing = ProcessSandbox().missing
        if missing:
            pytest.skip(f"the process backend's box lacks {', '.join(missing)} here")
    scratch = tmp_path / "tmp"
    scratch.mkdir()
    monkeypatch.setattr(tempfile, "tempdir", str(scratch))  # the sandbox's temporary folders land here
    UNPICKLE_MARKER.unlink(missing_ok=True)
    limits = exp.make_limits()
    before, children = _fingerprint(), _children()
    rss_before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    started = time.monotonic()
    card = grade_submission(get_exercise(exp.exercise), exp.path, sandbox=backend, seed=7, limits=limits)
    elapsed = time.monotonic() - started
    text = card.output["text"]
    context = f"{exp.name} under {backend}: {card.status} {card.status_message[:600]!r}\noutput tail: {text[-1500:]!r}"

    # the verdicts the case states
    validate(card.to_json())
    assert card.sandbox["backend"] == backend
    assert card.status != "infrastructure_error", context
    statuses = exp.status if backend == "docker" else exp.process
    assert card.status in statuses, context
    ok, passed = _passes_ok(exp, card)
    assert ok, f"passed {sorted(passed)}, expected {exp.passes}; {context}"
    seen = {c.verdict for c in card.checks}
    for verdict in exp.verdicts:
        assert verdict in seen, f"no {verdict} among {seen}; {context}"
    for needle in exp.output_has:
        assert needle in text, f"{needle!r} missing; {context}"
    for needle in exp.output_lacks:
        assert needle not in text, f"{needle!r} present; {context}"

    # the host invariants
    # runs get the loaded-host allowance on both backends (grader/sandbox/deadline.py: a starved run may
    # go on until it had wall_seconds of CPU, never past the backstop), and a hang restarts the runner
    # up to MAX_RUNS times; on an idle host a spinner still stops at the plain limit of each run
    runs_bound = MAX_RUNS * BACKSTOP_FACTOR
    assert elapsed < limits.wall_seconds * runs_bound + GRACE_S, context
    assert len(text) <= 4 * limits.output_bytes + 4096
    assert not RAW_CONTROL.search(text), "raw control characters in the captured output"
    assert list(scratch.iterdir()) == [], "temporary folders left behind"
    assert _children() <= children, "processes left behind"
    assert _fingerprint() == before, "host files changed"
    if "memory" in exp.host:
        grown = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - rss_before
        assert grown < 300 * 1024, f"host peak memory grew by {grown} KiB"
    if "no-unpickle" in exp.host:
        assert not UNPICKLE_MARKER.exists(), "the host unpickled what the sandbox sent"
    if "exports" in exp.host:
        _check_exports(card)
    _check_one_bit(card)
    if "hidden-inputs" in exp.host:
        hidden = _hidden_digests(exp.exercise, 7)
        seen = set(DIGEST.findall(json.dumps(card.to_json())))  # the interviewer's view: output and messages
        assert hidden & seen, f"no hidden input was read: the case proves nothing; {context}"
        shown = json.dumps(card.candidate_view().to_json())
        assert not hidden & set(DIGEST.findall(shown)), f"a hidden input reached the candidate view; {context}"


DIGEST = re.compile(r"[0-9a-f]{64}")


def _hidden_digests(exercise_id: str, seed: int) -> set[str]:
    """sha256 of the input arrays that only hidden steps of the plan read (from the plan on the host)."""
    from grader.grading.grade import build_plan  # noqa: PLC0415
    from grader.grading.split import split_plan  # noqa: PLC0415

    exercise = get_exercise(exercise_id)
    public, hidden = split_plan(build_plan(exercise, seed),
                                {c.id for c in exercise.checks if c.visibility == "hidden"})
    digest = lambda a: hashlib.sha256(np.ascontiguousarray(a).tobytes()).hexdigest()  # noqa: E731
    return {digest(a) for a in hidden.arrays.values()} - {digest(a) for a in public.arrays.values()}


def _check_one_bit(card) -> None:
    """Every hidden check of the candidate view is one bit: passed, or failed with the fixed message."""
    from grader.grading.scorecard import HIDDEN_NOT_PASSED  # noqa: PLC0415

    for c in card.candidate_view().checks:
        if c.visibility == "hidden":
            assert (c.verdict, c.details) == ("passed", {}) and c.message == "" or \
                (c.verdict, c.message, c.points, c.details) == ("failed", HIDDEN_NOT_PASSED, 0.0, {}), c
