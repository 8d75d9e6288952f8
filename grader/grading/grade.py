"""Grade one submission: build the plan, run the reference on the host and the submission in a
sandbox, judge every step on the host, and assemble the scorecard.

``grade_submission`` is the one library function behind ``grade submit``; the CLI only parses
arguments and renders what it returns.
"""

from __future__ import annotations

import hashlib
import importlib.metadata
import json
import os
import platform
import secrets
import sys
import threading
import time
from collections import OrderedDict
from concurrent.futures import ThreadPoolExecutor
import warnings
from dataclasses import dataclass, replace as dc_replace
from datetime import datetime, timezone
from pathlib import Path
from typing import Callable

import numpy as np

from grader import __version__
from grader.judge import op_audit
from grader.grading import reference_cache
from grader.grading.api_rules import GRADER_MODULES, TORCH_PRIVATE_DISPATCH, scan_source
from grader.grading.artifacts import collect_artifacts
from grader.run.channel import RunResults, StepResult
from grader.grading.restart import HIDDEN_RESERVE_FRACTION, Budget, after_hang_limits, run_with_restarts
from grader.grading.split import split_plan
from grader.grading import diagnosis
from grader.grading.exercise import Exercise, _import_file
from grader.grading.notebook import NotebookInvalid, NotebookSource, is_notebook_name, read_notebook
from grader.judge.judges import GraderBug, JudgeContext, Outcome, strip_hint, with_hint
from grader.run.plan import Plan, PlanBuilder, Step
from grader.judge.probes import series_judge
from grader.run.runner import PlanExecutor, step_args
from grader.sandbox import select_sandbox
from grader.sandbox.base import Limits, SandboxJob, SandboxRun, SandboxUnavailable
from grader.sandbox.early import claim as claim_early_sandbox
from grader.sandbox.pool import runtime_of
from grader.sandbox.process import gpu_host
from grader.grading.scorecard import CheckResult, Scorecard
from grader.judge.verdicts import VERDICT_DISPLAY_ORDER, Status, Verdict

#: Public cases always use this seed, so a candidate can reproduce them; hidden cases use the run's.
PUBLIC_SEED = 0
#: The probes' inputs are drawn from this seed at every run's seed (``build_plan``): a probe step is
#: the same at any seed, so the measured cost of a bank mutant is kept under this seed, not the run's
#: (a service grading each attempt at a fresh seed measured the whole bank again for every attempt).
PROBE_SEED = PUBLIC_SEED + 1


class SubmissionUnreadable(OSError):
    """The submission file is missing or cannot be read (a usage error, exit code 2)."""


def decode_submission(source: bytes) -> str:
    """Decode a submission's bytes as Python does (PEP 263 and PEP 3120): a UTF-8 byte-order mark is
    dropped, a ``# -*- coding: NAME -*-`` line in the first two lines names the encoding, UTF-8
    otherwise (``importlib.util.decode_source``, which uses ``tokenize.detect_encoding``). The sandbox
    imports the file with the same rule (``SourceFileLoader``), so the host scan and the run agree.

    Returns:
        The source text (universal newlines).

    Raises:
        SyntaxError: an unknown encoding is named, or a BOM and a coding line disagree.
        UnicodeDecodeError: the bytes are not valid in the file's encoding (e.g. a binary file).
    """
    import importlib.util  # noqa: PLC0415

    return importlib.util.decode_source(source)


def _output(exercise: Exercise, plan: Plan | None, run: SandboxRun | None, cap: int,
            recorded: dict | None = None) -> dict:
    """The scorecard's ``output``: ``text`` is everything the submission printed (the interviewer
    view), ``candidate_text`` only what it printed while being imported and during steps of public
    checks (issue #13: output printed during hidden steps can hold hidden inputs). The runner tags
    output by step (``printed`` in each frame); a step of no declared check counts as hidden, and
    with no plan or no tags nothing is shown to the candidate.

    With ``recorded`` (the public part's record, issue #20) ``candidate_text`` is what the public
    part's sandbox printed, which never held a hidden input.

    Returns:
        ``{"text", "truncated", "candidate_text"}`` (text capped at ``cap`` bytes by the backend;
        ``candidate_text`` at ``cap`` characters).
    """
    if run is None:
        return {"text": "", "truncated": False, "candidate_text": ""}
    if recorded is not None:
        return {"text": run.output, "truncated": bool(run.output_truncated) or _elided(run),
                "candidate_text": recorded["output"]["text"]}
    from grader.run.channel import display_text  # noqa: PLC0415

    public = {c.id for c in exercise.checks if c.visibility == "public"}
    parts, withheld = [], 0
    printed = (run.results.import_report or {}).get("printed")
    if printed:
        parts.append(printed["text"])
    for step in (plan.steps if plan is not None else ()):
        got = run.results.steps.get(step.id)
        printed = got.report.get("printed") if got is not None else None
        if not printed or not printed.get("bytes"):
            continue
        if step.check in public:
            parts.append(printed["text"])
        else:
            withheld += 1
    shown = display_text("".join(parts).encode("utf-8", errors="replace"))[:cap]
    if withheld:
        shown += HIDDEN_OUTPUT_NOTE  # one fixed sentence: how many hidden steps printed is not shown
    return {"text": run.output, "truncated": bool(run.output_truncated) or _elided(run), "candidate_text": shown}


def _elided(run: SandboxRun) -> bool:
    """Whether the runner cut a flood of output itself, keeping head and tail around one line
    (``runner.ELIDED_LINE``)."""
    return "[grader: " in run.output and " bytes of output not kept]" in run.output


def _compile_problem(exc: BaseException) -> str:
    """The status sentence for a file that cannot be compiled (syntax, encoding, NUL bytes)."""
    hint = "save it as UTF-8, or declare its encoding in a `# -*- coding: NAME -*-` line (PEP 263)"
    if isinstance(exc, UnicodeDecodeError):
        return (f"The file does not compile: it is not valid {exc.encoding.replace('-sig', '')} text "
                f"(byte {exc.start}: {exc.reason}); {hint}")
    if isinstance(exc, SyntaxError) and "encoding" in str(exc.msg):  # from tokenize.detect_encoding
        return (f"The file does not compile: it is not valid utf-8 text and declares no other encoding "
                f"({exc.msg}); {hint}")
    where = f" (line {exc.lineno})" if getattr(exc, "lineno", None) else ""
    reason = exc.msg if isinstance(exc, SyntaxError) else str(exc)
    return f"The file does not compile: {type(exc).__name__}{where}: {reason}" + _caret(exc)


def _caret(exc: BaseException) -> str:
    """The offending source line and a caret under the column a ``SyntaxError`` names (as Python's own
    traceback shows it), on two lines after a newline; "" when the error carries no line."""
    text = getattr(exc, "text", None) if isinstance(exc, SyntaxError) else None
    if not text or not text.strip():
        return ""
    line = text.rstrip("\r\n").expandtabs(4)
    stripped = line.lstrip()
    indent = len(line) - len(stripped)
    offset = max(1, min(int(exc.offset or 1), len(line) + 1)) - indent
    caret = " " * max(0, offset - 1) + "^"
    return f"\n    {stripped[:200]}\n    {caret}"


def _short_checks(exercise: Exercise, verdict: Verdict, why: str) -> tuple[CheckResult, ...]:
    """Every check with one short message pointing at the status, where the full reason is said once."""
    return _same_verdict_everywhere(exercise, verdict, f"Not run: {why} (see the status).")


def _missing_entry_points(results: RunResults) -> list[str]:
    """Sentences of the runner's ``MissingEntryPoint`` reports that name a missing function or class
    (e.g. "the submission defines no function 'softmax'"), in plan order, without repeats."""
    found: list[str] = []
    for step in results.steps.values():
        exc = step.report.get("exception") or {}
        message = str(exc.get("message", ""))
        if exc.get("type") == "MissingEntryPoint" and message.startswith("the submission defines no"):
            if message not in found:
                found.append(message)
    return found


def _say_missing_once(checks: tuple[CheckResult, ...], missing: list[str]) -> tuple[CheckResult, ...]:
    """Checks whose message repeats a missing entry point get a short pointer to the status instead."""
    short = []
    for c in checks:
        hit = next((m for m in missing if m.lower() in c.message.lower()), None)
        if hit is not None and c.verdict != Verdict.PASSED:
            c = CheckResult(**{**c.__dict__, "message": f"Not run: {hit} (see the status)."})
        short.append(c)
    return tuple(short)


@dataclass
class _Context:
    exercise: Exercise
    path: Path
    source: bytes
    seed: int
    started: float
    started_at: str


def run_in_process(wire: dict, arrays: dict[str, np.ndarray], module, module_file: str | None = None) -> RunResults:
    """Run a plan against an already imported module in this process (used for the reference).

    Returns:
        ``RunResults`` shaped exactly like the ones decoded from a sandbox.
    """
    results = RunResults(import_report={"ok": True, "exception": None})
    executor = PlanExecutor(wire, arrays, module, module_file=module_file, use_alarm=False)

    def emit(report: dict, out: dict[str, np.ndarray]) -> None:
        results.steps[report["id"]] = StepResult(report=report, arrays=out)

    with warnings.catch_warnings(), np.errstate(all="ignore"):
        warnings.simplefilter("ignore")
        executor.run(emit)
    results.done = True
    return results


_ANSWERS: "OrderedDict[tuple, tuple]" = OrderedDict()
_ANSWERS_LOCK = threading.Lock()
_ANSWERS_MAX = 8
_MEASURE_LOCK = threading.Lock()


def _cache_key(exercise: Exercise, seed: int, device: str = "cpu") -> tuple:
    files = [exercise.reference_path, exercise.folder / "checks.py", exercise.folder / "exercise.toml",
             *exercise.baseline_paths]
    stamps = tuple((str(p), p.stat().st_mtime_ns, p.stat().st_size) for p in files)
    return (exercise.id, exercise.track, exercise.version, seed, device, stamps)


def _reference_answers(exercise: Exercise, seed: int, device: str = "cpu") -> tuple[Plan, tuple | None]:
    """The plan for ``seed`` and, when this process or the on-disk cache (``reference_cache``) has them,
    the reference's answers.

    Selfcheck, batch and the test suite grade many files against one exercise and seed: the plan
    and the reference's runs are computed once per (exercise files, seed) and reused.
    """
    key = _cache_key(exercise, seed, device)
    with _ANSWERS_LOCK:
        hit = _ANSWERS.get(key)
        if hit is not None:
            _ANSWERS.move_to_end(key)
            return hit
    plan = build_plan(exercise, seed, device)
    answers = reference_cache.load(exercise, seed, device)  # another process computed them: no torch here
    if answers is not None and not _answers_cover(plan, answers):
        # written by a process whose plan came from exercise files it had imported before they changed
        # on disk (the entry is named by the files' current bytes): a miss, recomputed and replaced
        answers = None
    if answers is not None:
        _remember(key, plan, answers)
    return plan, answers


def _answers_cover(plan: Plan, answers: tuple) -> bool:
    """Whether cached ``(expected, golden, baselines)`` hold a result for every judged step of ``plan``."""
    expected, golden = answers[0], answers[1]
    return all(step.id in expected.steps and step.id in golden.steps
               for step in plan.steps if step.judge is not None)


def _remember(key: tuple, plan: Plan, answers: tuple) -> None:
    _keep(_ANSWERS, key, (plan, answers))


def _keep(cache: OrderedDict, key: tuple, value) -> None:
    """``cache[key] = value`` as the newest entry, the oldest dropped past ``_ANSWERS_MAX``."""
    with _ANSWERS_LOCK:
        cache[key] = value
        cache.move_to_end(key)
        while len(cache) > _ANSWERS_MAX:
            cache.popitem(last=False)


def _reference_in_parts(exercise: Exercise, plan: Plan, wire: dict, ref_file: str) -> RunResults:
    """The reference on ``plan`` as the sandbox runs a submission: the public part alone, then the
    hidden part (``grader.grading.split``), so that what the reference measured on public steps (the
    probes' peak bytes, FLOPs and times, shown to the candidate) never depends on the hidden cases
    that ran before them in the same process."""
    public, hidden = split_plan(plan, {c.id for c in exercise.checks if c.visibility == "hidden"})
    expected = run_in_process({**wire, "steps": public.wire["steps"]}, plan.arrays, exercise.load_reference(),
                              ref_file)
    if hidden.steps:
        rest = run_in_process({**wire, "steps": hidden.wire["steps"]}, plan.arrays, exercise.load_reference(),
                              ref_file)
        for step_id in hidden.steps:
            expected.steps[step_id] = rest.steps[step_id]
        # plan order, as a single run reports them
        expected.steps = {s.id: expected.steps[s.id] for s in plan.steps if s.id in expected.steps}
    return expected


def answers_for(exercise: Exercise, seed: int, plan: Plan,
                device: str = "cpu") -> tuple[RunResults, RunResults, list[RunResults], RunResults]:
    """Run the reference on ``plan`` four ways and remember the answers for this (exercise, seed),
    in this process and on disk (``grader.grading.reference_cache``).

    Returns:
        ``(expected, golden, baselines, float32)``: the reference in the plan's dtypes (with
        measurements), the reference with floating inputs promoted to float64 (unmeasured), each of
        the exercise's ``baselines/`` in the plan's dtypes (unmeasured), and the reference with float64
        inputs rounded to float32 (``Plan.float32``, unmeasured; no steps when no input is float64):
        the float32 tolerance of float64 cases outside the exercise's precision check (``_judge_all``).
    """
    ref_file = str(exercise.reference_path)
    if plan.uses_torch():
        import torch  # noqa: PLC0415 - torch plans only

        # Small tensors: one intra-op thread is several times faster than a pool contending with the
        # sandbox for the same cores (measured: 1.8 s -> 0.5 s for the mha plan on 2 cores).
        torch.set_num_threads(1)
    # The probes come last and are the same at every seed (PROBE_SEED): their answers, once computed
    # at some seed, are reused at every other (most of the reference's time on a probed exercise:
    # sliding_window_attention torch, 1.18 s -> 0.21 s per new seed)
    start = _probe_tail(exercise, plan)
    probe_ids = [s.id for s in plan.steps[start:]]
    tag = _probe_tag(plan, start) if probe_ids else ""
    kept = _kept_probe_answers(exercise, device, tag, probe_ids) if probe_ids else None
    part = dc_replace(plan, steps=plan.steps[:start]) if kept is not None else plan
    if kept is not None and part.has_float64() != plan.has_float64():
        kept, part = None, plan  # the float32 run would cover other steps: computed whole
    wire = {**part.wire(), "audit_ops": False}  # the reference is trusted: no op audit on the host
    with _MEASURE_LOCK:  # tracemalloc and the NumPy work counter are process-wide: one measured run at a time
        expected = _reference_in_parts(exercise, part, wire, ref_file)
    golden_wire, golden_arrays = part.golden()
    golden = run_in_process(_unmeasured({**golden_wire, "audit_ops": False}), golden_arrays,
                            exercise.load_reference(), ref_file)
    baselines = [run_in_process(_unmeasured(wire), part.arrays,
                                _import_file(p, f"grader_baseline_{p.stem}"), str(p))
                 for p in exercise.baseline_paths]
    float32 = RunResults()
    if part.has_float64():
        f32_wire, f32_arrays = part.float32()
        float32 = run_in_process(_unmeasured({**f32_wire, "audit_ops": False}), f32_arrays,
                                 exercise.load_reference(), ref_file)
    answers = (expected, golden, baselines, float32)
    if kept is not None:
        answers = _with_probe_answers(answers, kept)
    elif probe_ids:
        _keep_probe_answers(exercise, device, tag, _probe_answers(answers, probe_ids))
    _remember(_cache_key(exercise, seed, device), plan, answers)
    reference_cache.store(exercise, seed, device, answers)
    return answers


#: The reference's answers on the probe steps, by ``_cache_key(exercise, PROBE_SEED, device)`` and the
#: steps' tag (``_probe_tag``): the ``(expected, golden, baselines, float32)`` of ``answers_for``
#: restricted to those steps.
_PROBE_ANSWERS: "OrderedDict[tuple, tuple]" = OrderedDict()


def _probe_tag(plan: Plan, start: int) -> str:
    """A digest of the probe steps ``plan.steps[start:]``: their wire form and the bytes of the arrays
    they read (a plan whose probes were changed in memory, not on disk, is another entry)."""
    h = hashlib.sha256()
    wires = [s.wire for s in plan.steps[start:]]
    h.update(json.dumps(wires, sort_keys=True, default=str).encode())
    for name in sorted(_array_names(wires, plan.arrays)):
        arr = np.ascontiguousarray(plan.arrays[name])
        h.update(f"{name}:{arr.dtype}:{arr.shape}".encode())
        h.update(arr.tobytes())
    return h.hexdigest()[:16]


def _array_names(wire, names) -> set[str]:
    if isinstance(wire, dict):
        return set().union(set(), *(_array_names(v, names) for v in wire.values()))
    if isinstance(wire, list):
        return set().union(set(), *(_array_names(v, names) for v in wire))
    return {wire} if isinstance(wire, str) and wire in names else set()


def probe_block(exercise: Exercise, plan: Plan) -> list[Step]:
    """The probe steps of ``plan`` (warm-ups, constructors and prefills included): the trailing block
    whose steps all belong to a check that ``exercise.probes`` sweeps (``build_plan`` appends the
    probes after every case). They are the same at every seed (``PROBE_SEED``)."""
    return plan.steps[_probe_tail(exercise, plan):]


def _probe_tail(exercise: Exercise, plan: Plan) -> int:
    """Index of the first step of ``probe_block``."""
    probes = {p.check for p in exercise.probes}
    start = len(plan.steps)
    while start > 0 and plan.steps[start - 1].check in probes:
        start -= 1
    return start


def _restricted(run: RunResults, ids: list[str]) -> RunResults:
    return dc_replace(run, steps={i: run.steps[i] for i in ids if i in run.steps})


def _probe_answers(answers: tuple, ids: list[str]) -> tuple:
    expected, golden, baselines, float32 = answers
    return (_restricted(expected, ids), _restricted(golden, ids), [_restricted(b, ids) for b in baselines],
            _restricted(float32, ids))


def _with_probe_answers(answers: tuple, kept: tuple) -> tuple:
    """``answers`` (computed without the probe steps) with the kept probe answers after their steps."""
    def merged(run: RunResults, extra: RunResults) -> RunResults:
        return dc_replace(run, steps={**run.steps, **extra.steps})
    expected, golden, baselines, float32 = answers
    k_expected, k_golden, k_baselines, k_float32 = kept
    return (merged(expected, k_expected), merged(golden, k_golden),
            [merged(b, k) for b, k in zip(baselines, k_baselines)], merged(float32, k_float32))


def _kept_probe_answers(exercise: Exercise, device: str, tag: str, ids: list[str]) -> tuple | None:
    """The probe answers kept in this process or on disk, when they cover every id of ``ids``."""
    key = (*_cache_key(exercise, PROBE_SEED, device), tag)
    with _ANSWERS_LOCK:
        kept = _PROBE_ANSWERS.get(key)
    if kept is None:
        kept = reference_cache.load(exercise, PROBE_SEED, device, part=f"probes-{tag}-")
    if kept is None or len(kept[2]) != len(exercise.baseline_paths):
        return None
    if not all(i in kept[0].steps and i in kept[1].steps for i in ids):
        return None
    _keep(_PROBE_ANSWERS, key, kept)
    return kept


def _keep_probe_answers(exercise: Exercise, device: str, tag: str, kept: tuple) -> None:
    _keep(_PROBE_ANSWERS, (*_cache_key(exercise, PROBE_SEED, device), tag), kept)
    reference_cache.store(exercise, PROBE_SEED, device, kept, part=f"probes-{tag}-")


def _unmeasured(wire: dict) -> dict:
    """A copy of a plan's wire form without measurement requests (for runs whose cost is not compared)."""
    return {**wire, "steps": [{k: v for k, v in step.items() if k != "measure"} for step in wire["steps"]]}


#: Set to ``cuda`` to measure torch probes on the GPU (process backend, a GPU present); default CPU.
PROBE_DEVICE_ENV = "GRADER_PROBE_DEVICE"


def cuda_probes_requested() -> bool:
    """Whether ``$GRADER_PROBE_DEVICE`` asks for torch probes on the GPU (see ``probe_device``)."""
    return os.environ.get(PROBE_DEVICE_ENV, "cpu").strip().lower() == "cuda"


def probe_device(exercise: Exercise, backend_name: str) -> str:
    """Where the probes of a run measure: ``cuda`` for a torch exercise graded by the process backend
    on a host with a GPU when ``$GRADER_PROBE_DEVICE`` is ``cuda`` (the docker sandbox is given no
    GPU), else ``cpu``.

    CPU by default: the contracts do not ask for device-agnostic code, and a correct solution that
    builds its mask or running maximum with ``torch.zeros(...)`` (on the CPU) raises a device mismatch
    when its inputs are on the GPU (seen on an H200 with four of the references); the probes count
    FLOPs and bytes the same on either device. A cohort whose statement requires device-agnostic
    code may opt in; a probe step that still fails on a device mismatch is skipped, not charged
    (``grader.judge.probes``)."""
    if exercise.track != "torch" or backend_name != "process" or not exercise.probes:
        return "cpu"
    if not cuda_probes_requested():
        return "cpu"
    if not gpu_host():
        return "cpu"  # no GPU driver on this host: known without importing torch (a cached reference needs none)
    import torch  # noqa: PLC0415 - torch exercises only; the reference needs it anyway

    return "cuda" if torch.cuda.is_available() else "cpu"


def build_plan(exercise: Exercise, seed: int, device: str = "cpu") -> Plan:
    """Build the plan of the exercise's track (public cases from ``PUBLIC_SEED``, hidden ones from ``seed``).

    Raises:
        GraderBug: the plan does not cover every declared check, or names an undeclared one.
    """
    plan = exercise.build_plan(public_seed=PUBLIC_SEED, hidden_seed=seed)
    if exercise.probes:
        builder = PlanBuilder.extend(plan)
        rng = np.random.default_rng(PROBE_SEED)
        for probe in exercise.probes:
            for i, size in enumerate(probe.sizes):
                start = len(plan.steps)
                exercise.probe_steps(builder, probe, size, rng)
                if i == 0:  # the same shapes once, unmeasured: one-time set-up never lands in a size
                    builder.warm_up(start)
            measured = [s for s in plan.steps if s.meta.get("probe") == probe.check and "measure" in s.wire]
            if {s.meta.get("size") for s in measured} != set(probe.sizes):
                raise GraderBug(f"probe {probe.check!r} of {exercise.id!r} did not measure every size")
            measured[-1].judge = series_judge(probe)
            warm = [s for s in plan.steps if s.meta.get("probe") == probe.check and s.meta.get("warm_up")]
            for step in measured + warm:  # the warm-up runs where the measured steps do (CUDA's set-up too)
                for arg in step_args(step.wire):
                    if "tensor" in arg and device != "cpu":
                        arg["device"] = device
    plan.forbidden_modules = list(exercise.forbidden_modules)
    plan.step_timeout_s = exercise.limits.step_seconds
    plan.forbidden_ops = list(exercise.forbidden_ops)
    plan.audit_ops = plan.uses_torch()
    declared = {c.id for c in exercise.checks}
    judged = {s.check for s in plan.steps if s.judge is not None}
    if judged != declared or not {s.check for s in plan.steps} <= declared:
        raise GraderBug(f"plan of {exercise.id!r} does not match exercise.toml: "
                        f"unjudged {sorted(declared - judged)}, undeclared {sorted(judged - declared)}")
    return plan


def environment() -> dict:
    """Versions on the host, read without importing torch (NumPy exercises never pay for it)."""
    try:
        torch_version = importlib.metadata.version("torch")
    except importlib.metadata.PackageNotFoundError:
        torch_version = None
    device = "cpu"
    torch = sys.modules.get("torch")
    if torch is not None and torch.cuda.is_available():
        device = f"cuda ({torch.cuda.get_device_name(0)})"
    return {"python": platform.python_version(), "numpy": np.__version__, "torch": torch_version,
            "platform": platform.platform(), "device": device}


def _worst(outcomes: list[Outcome]) -> Outcome:
    for verdict in VERDICT_DISPLAY_ORDER:
        for o in outcomes:
            if o.verdict == verdict:
                return o
    return outcomes[0]


#: ``details["mistake"]`` of a submission that used a forbidden API (one name for every exercise).
FORBIDDEN_MISTAKE = "forbidden_api"


def name_forbidden(checks: tuple[CheckResult, ...], seen: str) -> tuple[CheckResult, ...]:
    """The checks of a submission caught using a forbidden API, each with ``details["mistake"] =
    "forbidden_api"`` and a ``details["diagnosis"]`` naming the call seen and the rule that forbids it.

    Only called where the evidence is direct: the static scan (``api_rules.scan_source``) found the
    name in the source, the runner's import guard saw the import, or the op audit saw the aten op run.
    Every check is forbidden (0 points) by design: the exercise is to write the computation, and the
    values a library call returns say nothing about whether the candidate can (docs/mistakes.md, "How
    partial credit maps to mistakes").

    Args:
        seen: what was seen and the rule, e.g. ``the source uses scipy.special.softmax at line 3
            (rule: scipy)``.
    """
    text = f"a forbidden API was used: {seen}; the exercise asks for the computation written by hand."
    return tuple(CheckResult(**{**c.__dict__, "details": {**c.details, "mistake": FORBIDDEN_MISTAKE,
                                                          "diagnosis": text}}) for c in checks)


def _check_results(exercise: Exercise, outcomes: dict[str, list[tuple[str, Outcome]]]) -> tuple[CheckResult, ...]:
    checks = []
    for spec in exercise.checks:
        items = outcomes.get(spec.id, [])
        if not items:
            verdict, message, details = Verdict.SKIPPED, "Not run.", {}
        else:
            worst = _worst([o for _, o in items])
            verdict = worst.verdict
            n_bad = sum(1 for _, o in items if o.verdict != Verdict.PASSED)
            message = worst.message
            if n_bad and len(items) > 1:
                message = f"{message}\n({n_bad} of {len(items)} cases did not pass)"
            details = {"cases": len(items), "cases_passed": len(items) - n_bad}
            bad_case = next((c for c, o in items if o is worst), None)
            if verdict != Verdict.PASSED and bad_case:
                details["case"] = bad_case
            details.update(worst.details)
        checks.append(CheckResult(
            id=spec.id, title=spec.title, category=spec.category, visibility=spec.visibility,
            verdict=str(verdict),
            # a probe that could not judge (timed without a clear margin) is not charged
            points=spec.points if verdict == Verdict.PASSED or (
                verdict == Verdict.SKIPPED and details.get("charged") is False) else 0.0,
            max_points=spec.points, message=message, details=details))
    return tuple(checks)


def _same_verdict_everywhere(exercise: Exercise, verdict: Verdict, message: str) -> tuple[CheckResult, ...]:
    return _check_results(exercise, {c.id: [("", Outcome(verdict, message))] for c in exercise.checks})


#: The check that alone demands float64 accuracy of float64 inputs (every exercise with float64
#: inputs names it so); float64 cases of other checks are judged at float32 tolerance.
PRECISION_CHECK = "float64"


def at_float32(exercise: Exercise, plan: Plan, float32: RunResults) -> dict[str, StepResult]:
    """The float32-internals answers (``Plan.float32``) of the steps whose float64 cases are judged at
    float32 tolerance: every step outside the exercise's precision check (``PRECISION_CHECK``).

    One mistake, one deduction: a float64 input computed in float32 and cast back is wrong only in
    precision, so only the check about float64 precision fails it; every other check still fails a
    wrong answer, whose error is far beyond float32 rounding. Exercises without that check have no
    float64-precision clause and keep float64 tolerance everywhere (an empty result).
    """
    if PRECISION_CHECK not in {c.id for c in exercise.checks}:
        return {}
    return {s.id: float32.steps[s.id] for s in plan.steps
            if s.check != PRECISION_CHECK and s.id in float32.steps and float32.steps[s.id].report.get("ok")}


def _judge_all(plan: Plan, run: SandboxRun, expected: RunResults, golden: RunResults,
               not_run_reason: str, baselines: list[RunResults] = (),
               step_verdicts: dict[str, list[tuple[str, Verdict]]] | None = None,
               float32: dict[str, StepResult] | None = None,
               ) -> dict[str, list[tuple[str, Outcome]]]:
    outcomes: dict[str, list[tuple[str, Outcome]]] = {}
    for step in plan.steps:
        if step.judge is None:
            continue
        ctx = JudgeContext(step=step, plan=plan, got=run.results.steps.get(step.id),
                           expected=expected.steps[step.id], golden=golden.steps[step.id],
                           candidate_steps=run.results.steps, expected_steps=expected.steps,
                           golden_steps=golden.steps, not_run_reason=not_run_reason,
                           baselines=[b.steps[step.id] for b in baselines
                                      if step.id in b.steps and b.steps[step.id].report.get("ok")],
                           float32=(float32 or {}).get(step.id))
        outcome = step.judge(ctx)
        outcomes.setdefault(step.check, []).append((step.describe or step.id, outcome))
        if step_verdicts is not None:
            step_verdicts.setdefault(step.check, []).append((step.id, outcome.verdict))
    return outcomes


def apply_bank(exercise: Exercise, plan: Plan, seed: int, device: str, checks: tuple[CheckResult, ...],
               step_verdicts: dict[str, list[tuple[str, Verdict]]], results: RunResults,
               expected: RunResults, golden: RunResults,
               float32: dict[str, StepResult] | None = None) -> tuple[CheckResult, ...]:
    """Name the mistake behind each failed (or errored) check by replaying the exercise's mistake bank
    (``grader.grading.diagnosis``): exactly one mutant explaining the check gives
    ``Likely mistake: <its diagnosis>`` and ``details["mistake"]`` (several explaining a value check are
    narrowed to the one that is the candidate everywhere, ``diagnosis.narrowed``); several give no name and drop any
    hand-written hint (``details["mistakes_matching"]`` lists them for the interviewer).

    A value check is explained by mutants that reproduce the candidate's outputs on its failed cases
    and pass its passed ones, each case at the tolerance its judge used (``float32``: the
    float32-internals answers of float64 cases judged at float32 tolerance, from ``at_float32``); a
    lone one is not named when it gets right the values of a case the candidate failed, or raises on a
    case the candidate passed, in any check
    (``diagnosis.contradicted``). A complexity check is explained by mutants whose ``Must fail:`` names
    it (and whose other named checks the candidate failed too) and whose measured series, replayed on
    the probe's steps, reproduces the candidate's on the larger half of the sweep
    (``diagnosis.explaining_cost``), and a lone one is not named when the same contradiction holds
    (``_cost_contradicted``); a series judged by timing is never replayed.

    Raises:
        grader.judge.mistakes.MistakeInvalid: the bank is malformed (a grader fault).
    """
    if not exercise.mistakes:
        return checks
    bank = tuple((m.name, hashlib.sha256(m.source.encode("utf-8")).hexdigest()) for m in exercise.mistakes)
    by_name = {m.name: m for m in exercise.mistakes}
    # the tolerance of each case is set by the answer its judge used: float32-internals for the float64
    # cases judged at float32 tolerance (diagnosis reads an answer's dtype and error, nothing else)
    basis = RunResults(steps={**expected.steps, **(float32 or {})})
    checks = _apply_value_bank(exercise, plan, seed, device, checks, step_verdicts, results, basis, golden, bank,
                               strict=expected)
    replayed: set[str] = set()
    failed_ids = {c.id for c in checks if c.verdict != str(Verdict.PASSED)}
    out = []
    for check in checks:
        # self-check proves a mutant fails every check its ``Must fail:`` names, so one naming a check
        # the candidate passed is not the candidate's mistake (e.g. K/V repeated along the sequence
        # costs the same kv FLOPs as expanded weights, but also fails ``values``)
        suspects = [m for m in exercise.mistakes if check.id in m.must_fail and set(m.must_fail) <= failed_ids]
        quantity = check.details.get("quantity")
        if (check.category != "complexity" or check.verdict != str(Verdict.FAILED) or not suspects
                or check.details.get("method") != "count" and quantity != "peak_bytes" or not quantity):
            out.append(check)
            continue
        replayed.add(check.id)
        # a probe's steps do not depend on the run's seed (PROBE_SEED): one measurement serves every seed
        measured = diagnosis.measured_answers((*_cache_key(exercise, PROBE_SEED, device), "cost", check.id, bank),
                                              suspects, plan, check.id, _MEASURE_LOCK,
                                              disk=_mutant_keys(exercise, PROBE_SEED, device))
        spec = next((p for p in exercise.probes if p.check == check.id), None)
        names = diagnosis.explaining_cost(plan, check.id, quantity, results.steps, measured, expected.steps, spec)
        paths: list[str] = []
        if not names:  # wasteful on some paths only (a batch, the causal path): replayed on those paths
            names, paths = diagnosis.explaining_cost_on_paths(plan, check.id, quantity, results.steps, measured,
                                                              expected.steps, spec)
        if len(names) == 1 and _cost_contradicted(exercise, plan, seed, device, names[0], step_verdicts,
                                                  results, basis, golden, bank):
            names = []  # the mutant's values are right where the candidate's are wrong: another mistake
        if len(names) != 1:
            paths = []
        base = {k: v for k, v in check.details.items() if k not in ("diagnosis", "mistake")}
        out.append(_named(check, names, by_name, {**base, "wasteful_paths": paths} if paths else base,
                          "cost_on_paths" if paths else "cost"))
    # A complexity check that no mutant of the bank names in its ``Must fail:`` cannot be replayed;
    # when the values name exactly one mistake and self-check proves that mistake fails this
    # complexity check too, it is the likely cause, and a hint chosen from the measurement alone is
    # replaced by it.
    named = {c.details.get("mistake") for c in out if c.details.get("mistake")}
    if len(named) == 1:
        mistake = by_name[named.pop()]
        out = [_named(c, [mistake.name], by_name, c.details, "named")
               if c.category == "complexity" and c.verdict == str(Verdict.FAILED) and c.id in mistake.must_fail
               and c.id not in replayed else c for c in out]
    return tuple(out)


def _cost_contradicted(exercise: Exercise, plan: Plan, seed: int, device: str, name: str,
                       step_verdicts: dict[str, list[tuple[str, Verdict]]], results: RunResults,
                       expected: RunResults, golden: RunResults, bank: tuple) -> bool:
    """Whether the mutant ``name``, which explains a complexity check by its measured cost, gets right
    the values of a case the candidate got wrong (or raises where the candidate passed), in any value
    check (``diagnosis.contradicted``, as for a value check's lone mutant). Two mistakes can cost the
    same: a sliding window skipped on the unmasked path costs what full L x L scores masked to the
    window cost, but only the first is wrong in its values, so the second is not named."""
    failed_anywhere, passed_anywhere = _value_cases(plan, step_verdicts)
    if not failed_anywhere:
        return False  # the values are right everywhere: the measurement alone is the evidence
    mutants = diagnosis.mutant_answers((*_cache_key(exercise, seed, device), "mistakes", bank),
                                       exercise.mistakes, plan, disk=_mutant_keys(exercise, seed, device))
    ratio = next((m.error_ratio for m in exercise.mistakes if m.name == name), None)
    return diagnosis.contradicted(name, failed_anywhere, results.steps, mutants, expected.steps, golden.steps,
                                  passed_anywhere, ratio)


def _value_cases(plan: Plan, step_verdicts: dict[str, list[tuple[str, Verdict]]]) -> tuple[list[str], list[str]]:
    """``(failed_anywhere, passed_anywhere)``: the value steps (``diagnosis.value_steps``) the candidate
    failed or errored, and those it passed, in every check."""
    keep = set(diagnosis.value_steps(plan))
    cases = [(sid, v) for judged in step_verdicts.values() for sid, v in judged if sid in keep]
    return ([sid for sid, v in cases if v in (Verdict.FAILED, Verdict.ERROR)],
            [sid for sid, v in cases if v == Verdict.PASSED])


def _same_function(plan: Plan, failed: list[str], passed: list[str]) -> list[str]:
    """The ``passed`` steps that call a function (or method, or attribute) some ``failed`` step calls
    too: the same ``op``, ``target`` and ``name`` on the wire."""
    by_id = {s.id: s for s in plan.steps}

    def key(sid: str) -> tuple:
        wire = by_id[sid].wire
        return wire.get("op"), wire.get("target"), wire.get("name")

    failing = {key(sid) for sid in failed if sid in by_id}
    return [sid for sid in passed if sid in by_id and key(sid) in failing]


def _mutant_keys(exercise: Exercise, seed: int, device: str) -> "reference_cache.MutantKeys | None":
    """The on-disk cache's names for this exercise's mutants at (seed, device), or None when the
    cache is off or the exercise's files cannot be read (then mutants are run, as without a cache)."""
    if not reference_cache.enabled():
        return None
    try:
        return reference_cache.MutantKeys(exercise, seed, device)
    except OSError:
        return None


#: What each way of naming a bank mistake proves, said after its sentence (issue 24: a bank message
#: states only what its replay proves).
EVIDENCE = {
    "values": "your results equal this mistake's on every case of this check that failed",
    "cost": "your measured cost equals this mistake's at the larger sizes",
    "named": "named from the values; this mistake fails this check too",
    "cost_on_paths": "on the paths where your cost grows too fast, your measured cost equals this mistake's at "
                     "the larger sizes",
}

#: How a name found by a cost replay (``evidence == "cost"``) leads: what the replay proves, then the
#: mistake's sentence as a structure that has that cost.
COST_LEAD = ("your measured cost equals, at the larger sizes, that of this mistake (a different structure of "
             "the same size costs the same):")


def _named(check: CheckResult, names: list[str], by_name: dict, details: dict,
           evidence: str = "values") -> CheckResult:
    """``check`` with the diagnosis that replay found: exactly one explaining mutant names its mistake
    ("Likely mistake: <sentence> (<what the replay proved>)" before the message, ``details["mistake"]``
    and ``details["evidence"]``, a key of ``EVIDENCE``); several name none (the check's own hint is
    removed too: the cases cannot tell them apart) and are listed in ``details["mistakes_matching"]``;
    none leaves the message as it is. ``details`` is the base of the new details (the caller decides
    which of the check's own keys it keeps)."""
    message = check.message
    if len(names) == 1:
        mistake = by_name[names[0]]
        if evidence == "cost_on_paths":
            # the mutant is wasteful on every path, the candidate on some: the replay proves the cost
            # on those paths only (``diagnosis.explaining_cost_on_paths``), and the lead says which
            said = sentence = (f"on {'the paths' if len(details['wasteful_paths']) > 1 else 'the path'} where your "
                               f"cost grows too fast ({'; '.join(details['wasteful_paths'])}), "
                               f"{COST_LEAD[0].lower()}{COST_LEAD[1:]} {mistake.diagnosis}")
        elif evidence == "cost":
            # a cost replay proves a cost, not a structure: another structure of the same size (the
            # whole weights @ V per query row instead of the whole q @ k^T, a 0/1 keep mask instead of an
            # additive bias) measures the same, so the sentence leads with the cost (helper hunt, issue 24)
            said = sentence = f"{COST_LEAD} {mistake.diagnosis}"
        else:
            said, sentence = mistake.diagnosis, f"{mistake.diagnosis} ({EVIDENCE[evidence]})"
        message, _ = with_hint(strip_hint(message), sentence)
        details = {**details, "mistake": mistake.name, "diagnosis": said, "evidence": evidence}
    elif len(names) > 1:
        message = strip_hint(message)
        details = {**details, "mistakes_matching": names}
    return CheckResult(**{**check.__dict__, "message": message, "details": details})


def _apply_value_bank(exercise: Exercise, plan: Plan, seed: int, device: str, checks: tuple[CheckResult, ...],
                      step_verdicts: dict[str, list[tuple[str, Verdict]]], results: RunResults,
                      expected: RunResults, golden: RunResults, bank: tuple,
                      strict: RunResults | None = None) -> tuple[CheckResult, ...]:
    """The value-check half of ``apply_bank`` (replay of outputs on the failed cases).

    ``expected`` sets each case's tolerance as its judge did (float32 internals for relaxed float64
    cases); ``strict`` (default: ``expected``) is the reference's own answer in the case's dtype: it
    decides whether a mutant is the reference on a failed case, and breaks ties between several
    explaining mutants, where the finer tolerance tells two float32 mistakes apart on float64 cases."""
    # a check that errored (the candidate raised) is replayed too: a mutant raising the same exception
    # type on the same cases, and passing the others, explains it
    wrong = (str(Verdict.FAILED), str(Verdict.ERROR))
    failing = [c for c in checks if c.verdict in wrong and c.category != "complexity"]
    if not failing:
        return checks
    keep = set(diagnosis.value_steps(plan))
    mutants = diagnosis.mutant_answers((*_cache_key(exercise, seed, device), "mistakes", bank),
                                       exercise.mistakes, plan, disk=_mutant_keys(exercise, seed, device))
    by_name = {m.name: m for m in exercise.mistakes}
    failed_anywhere, passed_anywhere = _value_cases(plan, step_verdicts)
    right_in_same_function = _same_function(plan, failed_anywhere, passed_anywhere)
    passed_checks = {c.id for c in checks if c.verdict == str(Verdict.PASSED)}
    all_judged = [sid for cases in step_verdicts.values() for sid, _v in cases if sid in keep]
    out = []
    for check in checks:
        if check not in failing:
            out.append(check)
            continue
        cases = [(sid, v) for sid, v in step_verdicts.get(check.id, []) if sid in keep]
        failed = [sid for sid, v in cases if v in (Verdict.FAILED, Verdict.ERROR)]
        passed = [sid for sid, v in cases if v == Verdict.PASSED]
        if not failed or len(failed) + len(passed) != len(cases):
            out.append(check)
            continue
        ratios = {m.name: m.error_ratio for m in exercise.mistakes if m.error_ratio}
        names = diagnosis.explaining(failed, passed, results.steps, mutants, expected.steps, golden.steps, ratios,
                                     reference=(strict or expected).steps)
        if len(names) > 1:  # tie-break: the one that is the candidate on every case, in any check
            names = diagnosis.narrowed(names, passed_anywhere, all_judged, results.steps, mutants,
                                       (strict or expected).steps, golden.steps, ratios) or names
        if len(names) == 1 and diagnosis.contradicted(names[0], failed_anywhere, results.steps, mutants,
                                                      expected.steps, golden.steps, passed_anywhere,
                                                      ratios.get(names[0]), right_in_same_function):
            names = []  # the candidate is wrong where this mutant is right: another mistake may explain it
        if len(names) == 1 and set(by_name[names[0]].must_fail) & passed_checks:
            # the mutant fails a check (declared, and proven by grade selfcheck at every seed) that the
            # candidate passed: its behaviour is not the candidate's, so neither is its mechanism (K/V
            # repeated along the sequence after the projection, not before it, passes kv_flops; -inf
            # replaced by the dtype's minimum passes neg_inf_entries, which a clamp at -80 fails)
            names = []
        out.append(_named(check, names, by_name, {k: v for k, v in check.details.items() if k != "diagnosis"}
                          if names else check.details))
    return tuple(out)


#: What the candidate view says in place of anything printed during hidden cases (a fixed sentence,
#: the same whatever the hidden part printed).
HIDDEN_OUTPUT_NOTE = "\n[output printed during hidden cases is never shown]\n"


def _part_job(part, annotate, source: bytes, plan: Plan, budget) -> SandboxJob:
    """The sandbox job of one part of a split plan (``grader.grading.split``): its steps, the arrays
    they use, nothing else; ``"hung": true`` when an earlier run of this grading already hung (the
    runner then applies the limits after a hang from the first step).

    ``annotate`` (None for the public part) gives each step its limit after a hang, scaled from the
    reference's measured time. The public part gets the flat ``DEFAULT_AFTER_HANG_S`` instead: its
    ``plan.json`` is readable by the submission, and what the candidate sees must be the same bytes
    at every grading, so it carries no measured figure."""
    steps = annotate(part.wire["steps"]) if annotate is not None else part.wire["steps"]
    wire = {**part.wire, "steps": steps, "after_hang_s": DEFAULT_AFTER_HANG_S}
    if budget.first_hang is not None:
        wire["hung"] = True
    return SandboxJob(plan=wire, arrays=part.arrays, submission=source, needs_torch=plan.uses_torch())


#: The limit after a hang of a step whose reference time is not known yet (CPU seconds).
DEFAULT_AFTER_HANG_S = 2.0


class _Prestarted:
    """The backend, with one sandbox started ahead for the hidden part (issue 20): a waiting runner
    (``start_warm``: its runtime imported, no submission, no input) that starts while the public part
    runs, so the second sandbox costs little more than its job. Its first ``run`` with the limits it
    was started with goes to that runner (``run_warm``); any other run, or a runner that died
    waiting, runs cold. ``close`` discards it if it was never used."""

    def __init__(self, backend, future):
        self.backend, self.future, self.name = backend, future, backend.name
        self.warm = None
        self.used = False

    def info(self):  # noqa: D102 - the backend's
        return self.backend.info()

    def _take(self):
        if self.future is not None:
            try:
                self.warm = self.future.result()
            except Exception:  # noqa: BLE001 - no warm sandbox: the run starts cold
                self.warm = None
            self.future = None
        return self.warm

    def run(self, job: SandboxJob, limits: Limits) -> SandboxRun:  # noqa: D102 - Sandbox.run
        warm = None if self.used else self._take()
        self.used = True
        if warm is None or warm.limits != limits or warm.runtime != runtime_of(job) or not warm.alive():
            self.close()
            return self.backend.run(job, limits)
        self.warm = None
        run = self.backend.run_warm(warm, job)
        if run.infrastructure_error and run.results.started is None:  # it died waiting: run it cold
            return self.backend.run(job, limits)
        return run

    def close(self) -> None:
        """Discard the waiting runner if it was never given its job, and wait until a used one is gone
        (docker removes a used container in the background: nothing of the grading outlives it)."""
        warm, self.warm = self._take(), None
        if warm is not None:
            warm.discard()
        wait = getattr(self.backend, "wait_removals", None)
        if callable(wait):
            wait()


def _prestart(backend, plan: Plan, limits: Limits, pool: ThreadPoolExecutor):
    """A ``_Prestarted`` around ``backend`` whose waiting runner starts now in ``pool``; the plain
    backend where it cannot keep one (a warm pool already does, a trusted in-process runner)."""
    from grader.sandbox.pool import PooledSandbox, supports_warm  # noqa: PLC0415

    if isinstance(backend, PooledSandbox) or not supports_warm(backend):
        return backend
    return _Prestarted(backend, pool.submit(backend.start_warm, "torch" if plan.uses_torch() else "numpy", limits))


def _run_parts(backend, hidden_backend, public_part, hidden_part, plan: Plan, source: bytes, limits: Limits,
               say: Callable[[str], None], budget: Budget, annotate):
    """Step 3 of ``grade_submission``: the public part alone in its sandbox (the candidate view is built
    from it), then, when it imported cleanly, the hidden part in a fresh one; both draw on ``budget``.

    Returns:
        ``(public_run, restarted, public_at, public_budget, hidden_run, hidden_restarted)``: the public
        part's run, the steps a restart charged there, when it ended (``time.monotonic``), the budget
        as it stood then, and the same for the hidden part (None, [] when it did not run).
    """
    if hidden_part.steps:  # a public stall must leave the hidden cases some time of their own
        budget.reserved_s = HIDDEN_RESERVE_FRACTION * float(limits.wall_seconds)
    public_run, restarted = run_with_restarts(
        backend, _part_job(public_part, None, source, plan, budget), limits, say, budget)
    budget.reserved_s = 0.0
    public_at = time.monotonic()
    public_budget = budget.to_json()
    hidden_run, hidden_restarted = None, []
    if hidden_part.steps and _hidden_part_may_run(public_run, public_part, plan):
        say("running the hidden cases in a fresh sandbox")
        hidden_run, hidden_restarted = run_with_restarts(
            hidden_backend, _part_job(hidden_part, annotate, source, plan, budget), limits, say, budget, annotate)
    return public_run, restarted, public_at, public_budget, hidden_run, hidden_restarted


def _hidden_part_may_run(public_run: SandboxRun, public_part, plan: Plan) -> bool:
    """Whether the hidden part is worth a sandbox: the submission imported cleanly in the public part
    and nothing there already decides every check (a forbidden import or op, a grader fault)."""
    results = public_run.results
    if public_run.infrastructure_error or not (results.import_report or {}).get("ok"):
        return False
    if results.forbidden_imports:
        return False
    return not op_audit.forbidden_ops(plan, results)


def _merge_parts(public: SandboxRun, hidden: SandboxRun | None) -> SandboxRun:
    """One run of the whole plan (the interviewer's) from the public part's run and the hidden part's:
    the public part's import and step results, the hidden part's step results (its replays of public
    steps ignored), both outputs; timed out, killed or stopped when either was. The hidden part's own
    import failing is one more reason its steps were not run (``problems``)."""
    if hidden is None:
        return public
    mine, theirs = public.results, hidden.results
    steps = dict(mine.steps)
    for sid, result in theirs.steps.items():
        steps.setdefault(sid, result)
    problems = list(mine.problems) + [f"hidden part: {p}" for p in theirs.problems]
    report = theirs.import_report or {}
    if theirs.import_report is not None and not report.get("ok"):
        exc = report.get("exception") or {}
        problems.append(f"hidden part: the submission failed while being imported again "
                        f"({exc.get('type')}: {exc.get('message')})")
    results = RunResults(started=mine.started, import_report=mine.import_report, steps=steps,
                         done=mine.done and theirs.done, problems=problems,
                         forbidden_imports=[*mine.forbidden_imports,
                                            *(m for m in theirs.forbidden_imports if m not in mine.forbidden_imports)],
                         frame_ends=mine.frame_ends)
    finished = hidden if not theirs.done else public
    return SandboxRun(
        results=results, exit_code=finished.exit_code, timed_out=public.timed_out or hidden.timed_out,
        oom_killed=public.oom_killed or hidden.oom_killed,
        output=public.output + "\n[the hidden cases ran in a fresh sandbox]\n" + hidden.output,
        output_truncated=public.output_truncated or hidden.output_truncated,
        wall_seconds=public.wall_seconds + hidden.wall_seconds,
        infrastructure_error=public.infrastructure_error or hidden.infrastructure_error,
        stopped=public.stopped or hidden.stopped)

@dataclass
class _Judged:
    """What judging one run gave: the scorecard's status, checks, status message, the run whose
    output the card shows, and the interviewer's artifacts."""

    status: Status
    checks: tuple
    message: str = ""
    run: SandboxRun | None = None
    artifacts: dict | None = None


def _judge(exercise: Exercise, plan: Plan, bank_plan: Plan, run: SandboxRun, restarted: list[str],
           answers: tuple, seed: int, device: str, limits: Limits, budget: dict,
           say: Callable[[str], None], artifacts: bool = True) -> _Judged:
    """Judge ``run`` on ``plan``'s steps (the whole plan for the interviewer, its public part for the
    candidate view): import and API verdicts, every judged step, the mistake bank, the status.

    Args:
        plan: the steps judged (a step not in it is not judged: its check reads "Not run.").
        bank_plan: the whole plan, on which the mistake bank's answers are computed and cached (the
            same cache entry serves both judgings).
        answers: ``(expected, golden, baselines, float32)`` of the reference (``answers_for``).
        budget: ``Budget.to_json()`` as it stood when ``run`` ended (what the status may say of it).
        artifacts: collect the interviewer's artifacts.
    """
    expected, golden, baselines, float32 = answers
    results = run.results
    if results.import_report is None:
        if run.timed_out or run.oom_killed:
            why = "timed out" if run.timed_out else "ran out of memory"
            return _Judged(Status.TIMEOUT if run.timed_out else Status.CRASHED,
                        _same_verdict_everywhere(exercise, Verdict.TIMEOUT if run.timed_out else Verdict.MEMORY_LIMIT,
                                                 f"Not run: the sandbox {why} before the submission was imported."),
                        f"The sandbox {why} while importing the submission.", run)
        if run.stopped:
            return _Judged(Status.CRASHED, _same_verdict_everywhere(exercise, Verdict.ERROR, f"Not run: {run.stopped}."),
                        f"The sandbox was stopped while importing the submission: {run.stopped}.", run)
        detail = "; ".join(results.problems) or f"exit code {run.exit_code}"
        if results.started is None:  # the runner never got as far as importing the submission
            raise SandboxUnavailable(f"the runner reported nothing ({detail}); output: {run.output[-500:]!r}")
        # The runner was ready and importing the submission when the process ended (os._exit, a
        # signal) or its result channel was corrupted: the submission's doing. It compiled (the
        # host parsed it), so this is a crash, never a compile error.
        message = f"The submission ended the process while being imported ({detail})."
        return _Judged(Status.CRASHED, _short_checks(exercise, Verdict.ERROR,
                                                  "the submission ended the process while being imported"),
                    message, run)
    if results.forbidden_imports:
        names = ", ".join(sorted(set(results.forbidden_imports)))
        message = f"The submission tried to import {names}, which this exercise forbids."
        checks = name_forbidden(_same_verdict_everywhere(exercise, Verdict.FORBIDDEN, message),
                                f"the runner's import guard saw an import of {names} (rule: forbidden_modules)")
        return _Judged(Status.GRADED, checks, message, run)
    if not results.import_report.get("ok"):
        exc = results.import_report.get("exception") or {}
        message = (f"The submission failed while being imported: {exc.get('type')}: {exc.get('message')}\n"
                   f"{exc.get('traceback', '')}").rstrip()
        return _Judged(Status.COMPILE_ERROR, _short_checks(exercise, Verdict.ERROR,
                                                        "the submission failed while being imported"),
                    message, run)

    flagged = op_audit.forbidden_ops(plan, results)
    if flagged:
        message = op_audit.message(flagged)
        checks = tuple(CheckResult(**{**c.__dict__, "details": {"forbidden_ops": [f.__dict__ for f in flagged]}})
                       for c in _same_verdict_everywhere(exercise, Verdict.FORBIDDEN, message))
        seen = "; ".join(f"{f.op} in step {f.step} (rule: forbidden_ops)" for f in flagged)
        checks = name_forbidden(checks, f"the op audit saw {seen}")
        return _Judged(Status.GRADED, op_audit.with_ops_seen(checks, plan, results), message, run)

    status, status_message = Status.GRADED, ""
    not_run = "the submission stopped before this step ran"
    if not results.done:
        if run.timed_out and budget.get("exhausted"):
            status = Status.TIMEOUT
            status_message = (f"The grading's time budget ({budget['total_s']:g} s in all, twice the run limit of "
                              f"{limits.wall_seconds:g} s, restarts included) was spent; steps that finished were "
                              f"graded, the others were not run.")
            not_run = "the grading's time budget was spent before this step ran"
        elif run.timed_out:
            status = Status.TIMEOUT
            status_message = (f"The submission ran past the time limit ({limits.wall_seconds:g} s wall, "
                              f"{limits.cpu_seconds} s CPU); steps that finished were graded.")
            not_run = "the submission ran out of time before this step ran"
        elif run.oom_killed:
            status = Status.CRASHED
            status_message = "The sandbox was killed for exceeding its memory limit."
            not_run = "the submission was killed for exceeding its memory limit"
        else:
            status = Status.CRASHED
            why = results.problems + ([run.stopped] if run.stopped else [])
            extra = f" ({'; '.join(why)})" if why else ""
            status_message = (f"The submission's process ended before grading finished (exit code "
                              f"{run.exit_code}){extra}; steps that finished were graded.")
            not_run = f"the submission's process ended early (exit code {run.exit_code})"
    step_verdicts: dict[str, list[tuple[str, Verdict]]] = {}
    float32 = at_float32(exercise, plan, float32)
    outcomes = _judge_all(plan, run, expected, golden, not_run, baselines, step_verdicts, float32)
    if run.oom_killed:
        outcomes = {cid: [(c, Outcome(Verdict.MEMORY_LIMIT, o.message, o.details)
                           if o.verdict == Verdict.ERROR and "memory" in o.message else o) for c, o in items]
                    for cid, items in outcomes.items()}
    checks = _check_results(exercise, outcomes)
    if restarted:
        status_message = (f"{len(restarted)} step(s) ran out of time; the runner was restarted after each, "
                          f"so the checks after them were still graded." + (f" {status_message}" if status_message
                                                                             else ""))
    hang = budget.get("first_hang")
    if hang and (restarted or status == Status.TIMEOUT):
        try:
            where = plan.step(hang["step"])
            what = f"step {where.id} (check {where.check}{': ' + where.describe if where.describe else ''})"
        except KeyError:
            what = f"step {hang['step']}"
        status_message += f" The first call that hung was {what}: {hang['why']}."
        status_message = status_message.strip()
    say("diagnosing")
    checks = apply_bank(exercise, bank_plan, seed, device, checks, step_verdicts, results, expected, golden,
                        float32)
    missing = _missing_entry_points(results)
    if missing:  # said once, at the status; the checks point there
        checks = _say_missing_once(checks, missing)
        said = "; ".join(m[0].upper() + m[1:] for m in missing)
        status_message = f"{said}; the checks that need it were not run." + (
            f" {status_message}" if status_message else "")
    if plan.audit_ops:
        checks = op_audit.with_ops_seen(checks, plan, results)
    return _Judged(status, checks, status_message, run,
                   collect_artifacts(exercise, plan, checks, results, golden) if artifacts else None)


def grade_submission(exercise: Exercise, path: Path | str, *, sandbox: str = "auto",
                     seed: int | None = None, limits: Limits | None = None,
                     require_isolation: bool = False,
                     progress: Callable[[str], None] | None = None, source: bytes | None = None,
                     trusted_runner=None) -> Scorecard:
    """Grade the file at ``path`` against ``exercise``.

    Args:
        exercise: the loaded exercise.
        path: the candidate's Python file, or a Jupyter notebook (a name ending in ``.ipynb``): its
            code cells are graded as one file (``grader.grading.notebook``), a notebook that cannot
            be read is a ``compile_error``, and messages that point at a line say which cell.
        sandbox: ``auto``, ``process`` or ``docker`` (see ``grader.sandbox.select_sandbox``).
        seed: seed of the hidden cases (None: a fresh random one, recorded in the scorecard).
        limits: override the exercise's sandbox limits.
        require_isolation: refuse any backend weaker than docker (infrastructure_error).
        progress: called with a short line at each phase (for the CLI's progress display).
        source: the file's bytes when the caller already holds them (a Ray task on another node, a
            service worker); ``path`` is then only recorded in the scorecard, never read.
        trusted_runner: a ``grader.grading.trusted.TrustedInProcess`` to run the file in this
            process instead of a sandbox; only for files of the repository (reference, samples,
            mutants), never for a candidate's file. ``sandbox`` is then ignored.

    Returns:
        The interviewer-view scorecard (``Scorecard.candidate_view()`` derives the other).

    Raises:
        SubmissionUnreadable: the file is missing or unreadable (nothing was graded).
    """
    say = progress or (lambda _msg: None)
    path = Path(path)
    try:
        source = path.read_bytes() if source is None else bytes(source)
    except OSError as exc:
        raise SubmissionUnreadable(f"cannot read submission {path}: {exc.strerror or exc}") from exc
    notebook = None
    if is_notebook_name(path.name):  # the code cells become the submission (grader.grading.notebook)
        try:
            notebook = read_notebook(source)
        except NotebookInvalid as exc:
            notebook = exc
    seed = secrets.randbelow(2**31) if seed is None else int(seed)
    ctx = _Context(exercise, path, source, seed, time.monotonic(),
                   datetime.now(timezone.utc).isoformat(timespec="seconds"))
    limits = limits or exercise.limits
    sandbox_info = {"backend": "none", "image": None, "isolation": {}, "limits": limits.to_json()}
    state: dict = {"plan": None}  # the plan, once built: which steps were hidden (for the candidate view)

    def card(status: Status, checks, message: str = "", run: SandboxRun | None = None,
             artifacts: dict | None = None) -> Scorecard:
        submission = {"path": str(path), "sha256": hashlib.sha256(source).hexdigest()}
        if isinstance(notebook, NotebookSource):  # messages point at cells; the note says what was left out
            submission["notebook"] = notebook.to_json()
            message = notebook.relocate(message)
            checks = tuple(CheckResult(**{**c.__dict__, "message": notebook.relocate(c.message)}) for c in checks)
        return Scorecard(
            exercise={"id": exercise.id, "version": exercise.version, "title": exercise.title,
                      "track": exercise.track},
            submission=submission,
            sandbox=sandbox_info, environment=environment(), started_at=ctx.started_at,
            duration_s=round(time.monotonic() - ctx.started, 3), status=str(status), status_message=message,
            score=float(sum(c.points for c in checks)), max_score=exercise.max_score, checks=tuple(checks),
            output=_output(exercise, state["plan"], run, limits.output_bytes, state.get("public")),
            seed=seed, grader_version=__version__, artifacts=artifacts, public=state.get("public"))

    if isinstance(notebook, NotebookInvalid):
        return card(Status.COMPILE_ERROR, _short_checks(exercise, Verdict.ERROR, "the notebook cannot be read"),
                    f"The notebook cannot be read: {notebook}.")
    code = source if notebook is None else notebook.text.encode("utf-8")  # what the sandbox runs

    # 1. Static checks on the host: syntax, then API rules.
    say("checking syntax and API rules")
    try:
        text = decode_submission(code)
        violations = scan_source(text, (*exercise.forbidden_modules, *GRADER_MODULES),
                                 (*exercise.forbidden_names, *TORCH_PRIVATE_DISPATCH))
    except (SyntaxError, UnicodeDecodeError, ValueError) as exc:
        message = _compile_problem(exc)
        return card(Status.COMPILE_ERROR, _short_checks(exercise, Verdict.ERROR, "the file does not compile"),
                    message)
    if violations:
        message = "The submission " + "; ".join(v.sentence() for v in violations) + "."
        checks = _same_verdict_everywhere(exercise, Verdict.FORBIDDEN, message)
        checks = tuple(CheckResult(**{**c.__dict__, "details": {"violations": [v.__dict__ for v in violations]}})
                       for c in checks)
        seen = "; ".join(f"{v.used_as} at line {v.line} (rule: {v.name})" for v in violations)
        return card(Status.GRADED, name_forbidden(checks, f"the source uses {seen}"), message)

    try:
        # 2. The plan, then the submission in the sandbox while the reference answers the same plan
        #    here (the sandbox is another process, so the two overlap).
        early = None
        if trusted_runner is not None:
            backend, selection = trusted_runner, "in-process (a trusted file of the repository)"
        else:
            early = claim_early_sandbox(sandbox, require_isolation)  # started by the `grade` script, if at all
            backend, selection = early[:2] if early else select_sandbox(sandbox, require_isolation=require_isolation)
        info = backend.info()
        sandbox_info.update({"backend": info.backend, "image": info.image, "isolation": info.isolation,
                             "selection": selection})
        if info.backend == "process" and info.isolation.get("user", "").startswith("root"):
            say("warning: the process sandbox runs this submission as root (the interpreter is not reachable "
                "by an unprivileged user here); grade untrusted code with --sandbox docker")
        say("building the plan")
        device = probe_device(exercise, info.backend)
        plan, answers = _reference_answers(exercise, seed, device)
        state["plan"] = plan
        hidden_checks = {c.id for c in exercise.checks if c.visibility == "hidden"}
        public_part, hidden_part = split_plan(plan, hidden_checks)
        budget = Budget.for_limits(limits)
        if answers is None and not plan.uses_torch():
            # NumPy plans measure the reference's peak bytes with tracemalloc, which is process-wide:
            # that run goes first and alone, before the sandbox's reader threads start allocating.
            say("running the reference")
            answers = answers_for(exercise, seed, plan, device)
        say(f"running the submission ({selection})" if sandbox == "auto" else
            f"running the submission ({info.backend} sandbox)")
        # The sandbox runs in this thread, so Ctrl-C/SIGTERM reach the backend's own clean-up; the
        # reference computes in a worker thread meanwhile (torch's dispatch modes are thread-local).
        with ThreadPoolExecutor(max_workers=2, thread_name_prefix="reference") as pool:
            pending = pool.submit(answers_for, exercise, seed, plan, device) if answers is None else None

            def annotate(steps: list[dict]) -> list[dict]:
                # limits after a hang, from the reference's own time per step once it is known
                ready = answers if pending is None else (pending.result() if pending.done() else None)
                seconds = {} if ready is None else {sid: r.report.get("seconds")
                                                    for sid, r in ready[0].steps.items()}
                return after_hang_limits(steps, seconds, plan.step_timeout_s)

            public_backend = _Prestarted(backend, early[2]) if early else backend
            hidden_backend = _prestart(backend, plan, limits, pool) if hidden_part.steps else backend
            try:
                public_run, restarted, public_at, public_budget, hidden_run, hidden_restarted = _run_parts(
                    public_backend, hidden_backend, public_part, hidden_part, plan, code, limits, say, budget,
                    annotate)
            finally:
                for prestarted in (public_backend, hidden_backend):
                    if isinstance(prestarted, _Prestarted):
                        prestarted.close()
            answers = pending.result() if pending is not None else answers
        if public_run.infrastructure_error:
            raise SandboxUnavailable(public_run.infrastructure_error)
        public_plan = dc_replace(plan, steps=[s for s in plan.steps if s.check not in hidden_checks])
        say("judging")
        public = _judge(exercise, public_plan, plan, public_run, restarted, answers, seed, device, limits,
                        public_budget, say, artifacts=False)
        public_output = _output(exercise, public_plan, public_run, limits.output_bytes)["candidate_text"]
        if hidden_part.steps and public_output:
            public_output += HIDDEN_OUTPUT_NOTE
        state["public"] = {
            "status": str(public.status), "status_message": public.message,
            "duration_s": round(public_at - ctx.started, 3),
            "checks": [c.__dict__ for c in public.checks if c.visibility != "hidden"],
            "output": {"text": public_output, "truncated": bool(public_run.output_truncated) or _elided(public_run)},
            "budget": public_budget,
        }
        run = _merge_parts(public_run, hidden_run)
        if run.infrastructure_error:
            raise SandboxUnavailable(run.infrastructure_error)
        sandbox_info["budget"] = budget.to_json()
        full = _judge(exercise, plan, plan, run, restarted + hidden_restarted, answers, seed, device, limits,
                      sandbox_info["budget"], say)
        return card(full.status, full.checks, full.message, full.run, full.artifacts)
    except (GraderBug, SandboxUnavailable, Exception) as exc:  # noqa: BLE001 - never charge the candidate
        message = f"Grader fault ({type(exc).__name__}): {exc}"
        state["public"] = None  # a grader fault in either part is one in both views (graded again later)
        return card(Status.INFRASTRUCTURE_ERROR,
                    _same_verdict_everywhere(exercise, Verdict.SKIPPED, "Not graded: " + message), message)

