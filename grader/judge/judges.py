"""Host-side judges: turn one step's candidate result into a verdict, a message and numbers.

A judge is a callable ``judge(ctx: JudgeContext) -> Outcome``. Exercises pick the standard ones
here (``close``, ``raises``, ``dtype_preserved``, ``inputs_unchanged``) or write their own in
their ``checks.py``. Judges only read results; they never run candidate code.
"""

from __future__ import annotations

import threading
import weakref
from dataclasses import dataclass, field
from typing import Any, Callable, Sequence

import numpy as np

from grader.run.channel import StepResult
from grader.judge.compare import close_enough, compare_arrays, shape_message
from grader.run.plan import Plan, Step
from grader.judge.tolerance import DEFAULT_FACTOR, Tolerance, floor_for, tolerance_for
from grader.judge.verdicts import Verdict


@dataclass(frozen=True)
class Outcome:
    """A judge's finding for one step."""

    verdict: Verdict
    message: str = ""
    details: dict = field(default_factory=dict)


class GraderBug(RuntimeError):
    """A judge found the *reference* side inconsistent: an infrastructure fault, never the candidate's."""


@dataclass
class JudgeContext:
    """Everything a judge may look at for one step.

    Attributes:
        step: the step being judged.
        plan: the whole plan (inputs by name).
        got: the candidate's result for this step (None: the step never reported).
        expected: the reference's result for the same inputs and dtypes.
        golden: the reference's result with floating inputs promoted to float64.
        candidate_steps / expected_steps / golden_steps: all results, for stateful judgments.
        not_run_reason: why the candidate's step has no result (crash, timeout), if known.
        baselines: results of other plain correct implementations (the exercise's ``baselines/``)
            for this step, in the case's dtype; they widen the tolerance (``grader.judge.tolerance``).
        float32: the reference's result with float64 inputs rounded to float32 (``Plan.float32``),
            given for steps outside the exercise's float64-precision check; float64 values of this
            step are then judged at float32 tolerance (``tolerance``). None: the case's own dtype.
    """

    step: Step
    plan: Plan
    got: StepResult | None
    expected: StepResult
    golden: StepResult
    candidate_steps: dict[str, StepResult] = field(default_factory=dict)
    expected_steps: dict[str, StepResult] = field(default_factory=dict)
    golden_steps: dict[str, StepResult] = field(default_factory=dict)
    not_run_reason: str = "the submission stopped before this step ran"
    baselines: list[StepResult] = field(default_factory=list)
    float32: StepResult | None = None

    def tolerance(self, exp_desc: dict, plain: list[np.ndarray | None], golden: np.ndarray,
                  factor: float = DEFAULT_FACTOR, float32_array: Callable[[StepResult], np.ndarray | None] = None,
                  ) -> Tolerance:
        """The tolerance of one compared array whose reference descriptor is ``exp_desc``.

        Normally the tolerance of the case's dtype, set by the ``plain`` implementations' error
        (``grader.judge.tolerance.tolerance_for``). A float64 array of a step given ``float32``
        answers (outside the exercise's precision check) is judged at float32 tolerance, set by the
        error the reference makes computing that case in float32: one mistake, one deduction, a
        float64 input computed in float32 fails only the check about float64 precision, while a wrong
        answer, far beyond float32 rounding, still fails here.

        Args:
            float32_array: picks the same array out of the ``float32`` result (None: not available).
        """
        if self.float32 is not None and float32_array is not None and dtype_name(exp_desc) == "float64":
            low = float32_array(self.float32)
            if low is not None and low.shape == golden.shape:
                return tolerance_for("float32", [low], golden, factor)
        return tolerance_for(dtype_name(exp_desc), plain, golden, factor)

    def arg(self, which: int | str) -> Any:
        """The host's copy of an argument of this step, by position or keyword (arrays as NumPy)."""
        wire = self.step.wire
        arg = wire["args"][which] if isinstance(which, int) else wire["kwargs"][which]
        return self._value(arg)

    def _value(self, arg: dict) -> Any:
        if "dict" in arg:
            return {k: self._value(v) for k, v in arg["dict"].items()}
        if "array" in arg:
            value = self.plan.arrays[arg["array"]]
            return np.transpose(np.ascontiguousarray(np.transpose(value, np.argsort(arg["transpose"]))),
                                arg["transpose"]) if "transpose" in arg else value
        if "tensor" in arg:
            return self.plan.arrays[arg["tensor"]]
        return arg.get("value")


# -- reading results -------------------------------------------------------------------------------

def output_descriptor(result: StepResult, path: Sequence[int] = ()) -> dict | None:
    """The descriptor of the step's output at ``path`` (indices into tuples), or None if absent."""
    desc = result.report.get("output")
    for i in path:
        if not desc or desc.get("kind") != "tuple" or i >= len(desc.get("items", [])):
            return None
        desc = desc["items"][i]
    return desc


def output_array(result: StepResult, path: Sequence[int] = ()) -> np.ndarray | None:
    """The step's output array at ``path``, or None when it is not an array."""
    desc = output_descriptor(result, path)
    if not desc or desc.get("kind") != "array":
        return None
    return result.arrays.get(desc["key"])


def dtype_name(desc: dict) -> str:
    """The dtype a result was produced in (a torch dtype name where the runner recorded one)."""
    return desc.get("torch_dtype") or desc["dtype"]


def describe_value(desc: dict | None) -> str:
    """Say what a result descriptor is, for messages: ``an array of shape (2, 3) and dtype float32``."""
    if desc is None:
        return "nothing"
    kind = desc.get("kind")
    if kind == "array":
        return f"an array of shape {tuple(desc['shape'])} and dtype {dtype_name(desc)}"
    if kind == "none":
        return "None"
    if kind == "scalar":
        return f"a Python {desc.get('type')} ({desc.get('value')!r})"
    if kind == "tuple":
        return f"a {desc.get('type', 'tuple')} of {len(desc.get('items', []))} items"
    if kind == "object":
        return f"an object of type {desc.get('type')}"
    return f"an object of type {desc.get('type')}"


def failure_from_exception(ctx: JudgeContext) -> Outcome | None:
    """The outcome when the candidate's step did not return normally; None when it did."""
    got = ctx.got
    if got is None:
        return Outcome(Verdict.ERROR, f"Not run: {ctx.not_run_reason}.")
    if got.report.get("runner_error"):
        raise GraderBug(f"the runner failed in step {ctx.step.id}: {got.report['runner_error']}")
    exc = got.report.get("exception")
    if got.report.get("ok") and not exc:
        return None
    exc = exc or {"type": "Unknown", "message": "", "traceback": ""}
    kind, message = exc.get("type", "Exception"), exc.get("message", "")
    details = {"exception": exc}
    if kind in ("MemoryError", "OutOfMemoryError") or (kind == "RuntimeError" and "can't allocate memory" in message):
        # torch's CPU allocator raises RuntimeError ("DefaultCPUAllocator: can't allocate memory")
        return Outcome(Verdict.MEMORY_LIMIT, f"Ran out of memory ({kind}: {message}).", details)
    if kind == "StepTimeout":
        return Outcome(Verdict.TIMEOUT, f"Timed out: {message}.", details)
    if kind == "ForbiddenImport":
        return Outcome(Verdict.FORBIDDEN, message, details)
    if kind == "MissingEntryPoint":
        return Outcome(Verdict.ERROR, message[:1].upper() + message[1:] + ".", details)
    if kind == "NotImplementedError":
        return Outcome(Verdict.ERROR, "Not implemented yet (NotImplementedError).", details)
    tb = exc.get("traceback", "").rstrip()
    return Outcome(Verdict.ERROR, f"Raised {kind}: {message}" + (f"\n{tb}" if tb else ""), details)


# -- standard judges -------------------------------------------------------------------------------

Diagnose = Callable[[JudgeContext, np.ndarray, Tolerance], "str | None"]


class Symptom(str):
    """What a wrong result shows (what differs, where), for a hint that has no evidence of a cause.

    A ``diagnose`` (or ``nonfinite``) function returns a plain ``str`` only when it checked the cause
    it names on the candidate's own values (the output equals the named mistake's, recomputed on the
    host; the NaN lie exactly on the rows that see no key); otherwise it returns a ``Symptom``, which
    the judge appends to the message without the "Likely mistake:" label and records in
    ``details["symptom"]`` (issue 24: a named diagnosis is never the wrong one).
    """


def nan_rows_fully_masked(got: np.ndarray, mask: np.ndarray | None) -> bool:
    """Evidence for "a fully masked query row gave NaN": ``got`` has NaN, and every query row holding
    a NaN is fully masked in ``mask`` (in some head, where the mask has a head axis).

    Args:
        got: the candidate's output, ``(..., L_q, width)``: attention weights ``(B, H, L_q, L_k)``, a
            per-head output ``(B, H, L_q, d)`` or a merged one ``(B, L_q, D)``.
        mask: broadcastable to ``(B, H, L_q, L_k)`` (or ``(L_q, L_k)``), nonzero = may attend; None: no
            row is masked (False).

    A NaN on a row that does see a key has another cause (an overflow, a mask built as 0 * -inf, a
    max taken where it should not be): no cause is named then.
    """
    nan_rows = np.isnan(got).any(axis=-1)                                   # (..., L_q)
    if mask is None or not nan_rows.any():
        return False
    keep = np.asarray(mask) != 0
    empty = ~keep.any(axis=-1)                                              # (..., L_q) fully masked rows
    if got.ndim == 3 and empty.ndim == 3:                                   # heads merged: (B, L_q, D)
        empty = empty.any(axis=1)                                           # (B|1, H|1, L_q|1) -> (B|1, L_q|1)
    try:
        empty = np.broadcast_to(empty, nan_rows.shape)
    except ValueError:
        return False
    return bool(not (nan_rows & ~empty).any())


def _output_arrays(result: StepResult) -> list[np.ndarray]:
    """The arrays a step returned: its output, or each array item of a returned tuple."""
    desc = result.report.get("output") or {}
    descs = desc.get("items", []) if desc.get("kind") == "tuple" else [desc]
    return [result.arrays[d["key"]] for d in descs
            if d and d.get("kind") == "array" and d.get("key") in result.arrays]


def holds_in_every_call(ctx: "JudgeContext", holds: Callable[["JudgeContext", np.ndarray], bool],
                        targets: Sequence[str] | None = None,
                        which: Callable[[np.ndarray], bool] = lambda arr: arr.dtype.kind in "fc") -> bool:
    """Evidence that spans the run, not one case: ``holds(its context, output)`` for every floating
    output (``which``) of every other call of the judged function (``wire["target"]``, or one of
    ``targets``) that ran. A cause named from one case can be a part of another: a softmax shifted by
    a max taken before the mask is 0/0 on fully masked rows and also on rows whose masked scores sit
    far above their kept ones (attention_scores confuser ``max_before_mask``); a fixed base of 100 has,
    at the default base, the frequencies of base^(-i/d) (rope confuser ``base_fixed_at_100``).

    Args:
        ctx: the judged case.
        holds: what must hold of each other call; an argument it cannot read (``IndexError``,
            ``KeyError``, ``TypeError``, ``ValueError``) counts as no evidence (False).
        targets: the functions whose calls count (default: the judged case's own), where several
            share the computation (attention_scores' weights and its attention output).
        which: the output arrays to test (default: every floating one).
    """
    targets = tuple(targets or (ctx.step.wire.get("target"),))
    for step in ctx.plan.steps:
        if step.id == ctx.step.id or step.wire.get("target") not in targets or step.wire.get("op") != ctx.step.wire.get("op"):
            continue
        got = ctx.candidate_steps.get(step.id)
        if got is None or not got.report.get("ok") or got.report.get("exception"):
            continue
        arrays = [a for a in _output_arrays(got) if which(a)]
        if not arrays:
            continue
        sub = JudgeContext(step=step, plan=ctx.plan, got=got, expected=ctx.expected_steps.get(step.id),
                           golden=ctx.golden_steps.get(step.id), candidate_steps=ctx.candidate_steps,
                           expected_steps=ctx.expected_steps, golden_steps=ctx.golden_steps)
        try:
            if not all(holds(sub, a) for a in arrays):
                return False
        except (IndexError, KeyError, TypeError, ValueError):
            return False  # a call this reader cannot follow: no evidence, so no cause
    return True


def nan_confined_in_every_call(ctx: "JudgeContext", confined: Callable[["JudgeContext", np.ndarray], bool],
                               targets: Sequence[str] | None = None) -> bool:
    """``holds_in_every_call`` for the outputs that hold NaN: in every other call that gave NaN,
    ``confined(its context, that output)`` (the NaN lie where the named cause puts them)."""
    return holds_in_every_call(ctx, confined, targets,
                               which=lambda a: a.dtype.kind in "fc" and a.ndim >= 2 and bool(np.isnan(a).any()))


#: Per candidate result (by id, dropped when the result is collected): what
#: ``right_or_variant_in_every_call`` found for each variant ``key``, so a run whose every case fails
#: replays each variant on each call once, not once per failed case (flash_attention's tiled replays).
_VARIANT_HOLDS: dict[int, tuple[Any, dict]] = {}
_VARIANT_LOCK = threading.Lock()


def _variant_memo(result: StepResult) -> dict:
    """The memo of ``right_or_variant_in_every_call`` for one candidate step result."""
    with _VARIANT_LOCK:
        entry = _VARIANT_HOLDS.get(id(result))
        if entry is not None and entry[0]() is result:
            return entry[1]
        ref = weakref.ref(result, lambda _r, k=id(result): _VARIANT_HOLDS.pop(k, None))
        memo: dict = {}
        _VARIANT_HOLDS[id(result)] = (ref, memo)
        return memo


def right_or_variant_in_every_call(ctx: "JudgeContext",
                                   variant: Callable[["JudgeContext"], np.ndarray | Sequence[np.ndarray] | None],
                                   targets: Sequence[str] | None = None, key: Any = None) -> bool:
    """``holds_in_every_call`` for a hint that replays one mistake: every other call's output array is
    that mistake's, ``variant(its context)`` (the float64 replay on that call's arguments), or right
    where the mistake is right too (or cannot be replayed there), each within the case's tolerance, ten times the floor of the output's dtype and 1e-4,
    whichever is widest (or, for the mistake, ten times closer to it than it lies to the answer). One
    mistake explains the run; a cause that only coincides with it on some calls does not (a fixed base
    of 100 is rope's base^(-i/d) at the default base 10000, neither at base=500). An output of another
    shape than the answer's, or not finite where the mistake is, is no evidence of the mistake: the
    name is refused.

    Args:
        ctx: the judged case.
        variant: the named mistake's output on another call (a sequence, item for item, where the
            function returns a tuple, e.g. attention_scores' (output, weights)), or None where it
            cannot be replayed.
        targets: as for ``holds_in_every_call``.
        key: a hashable name of the variant, or its switches as a dict: each call's finding is then
            kept with the candidate's result and reused by the run's other cases.
    """
    name = tuple(sorted(key.items())) if isinstance(key, dict) else key

    def holds(sub: "JudgeContext", out: np.ndarray) -> bool:
        path = _path_of(sub.got, out)
        if name is None:
            return _holds(sub, out, path)
        memo = _variant_memo(sub.got)
        if (name, path) not in memo:
            memo[(name, path)] = _holds(sub, out, path)
        return memo[(name, path)]

    def _path_of(result: StepResult, out: np.ndarray) -> tuple[int, ...] | None:
        desc = result.report.get("output") or {}
        paths = [(i,) for i in range(len(desc.get("items", [])))] if desc.get("kind") == "tuple" else [()]
        return next((p for p in paths if output_array(result, p) is out), None)

    def _holds(sub: "JudgeContext", out: np.ndarray, path: tuple[int, ...] | None) -> bool:
        if path is None or sub.golden is None:
            return False
        desc = output_descriptor(sub.got, path)
        golden = output_array(sub.golden, path)
        if desc is None or desc.get("kind") != "array" or golden is None or out.shape != golden.shape:
            return False
        rtol, atol = floor_for(dtype_name(desc))
        loose = Tolerance(rtol=max(10 * rtol, 1e-4), atol=max(10 * atol, 1e-4), dtype="float64")
        exp_desc = output_descriptor(sub.expected, path) if sub.expected is not None else None
        if exp_desc is not None and exp_desc.get("kind") == "array":
            case = _output_tolerance(sub, path, exp_desc, golden, DEFAULT_FACTOR)  # the case's own, wider in half precision
            loose = Tolerance(rtol=max(loose.rtol, case.rtol), atol=max(loose.atol, case.atol), dtype="float64")
        alt = variant(sub)
        if isinstance(alt, (tuple, list)):
            alt = alt[path[0]] if path and path[0] < len(alt) else None
        if close_enough(out, golden, loose):
            # a right call is no evidence against the mistake only where the mistake would be right
            # too (or cannot show): a program right on some calls and wrong on others is not that
            # mistake (a sign flipped in place at every call: rope confuser cached_sign_flipped), as
            # the bank refuses a mutant wrong on a call of the same function the candidate got right
            return alt is None or alt.shape != out.shape or close_enough(alt, golden, loose)
        if alt is None or alt.shape != out.shape:
            return False
        if close_enough(out, alt, loose):
            return True
        # a coarse dtype amplifies a mistake's rounding (float16 scores left unscaled): the call is
        # that mistake's when it lies ten times closer to it than the mistake lies to the answer
        with np.errstate(invalid="ignore", over="ignore"):
            off = float(np.max(np.abs(out.astype(np.float64) - alt), initial=0.0))
            wrong = float(np.max(np.abs(alt - golden.astype(np.float64)), initial=0.0))
        return bool(np.isfinite(off)) and off <= 0.1 * wrong

    return holds_in_every_call(ctx, holds, targets)


def replayed_mistakes(ctx: "JudgeContext", got: np.ndarray, golden: np.ndarray, tol: Tolerance,
                      mistakes: Sequence[tuple[Any, str]],
                      replay: Callable[["JudgeContext", Any], np.ndarray]) -> list[str]:
    """The sentences of the hand-written replays that explain the whole run: each ``(variant, sentence)``
    of ``mistakes`` whose float64 replay gives ``got`` on this case while the right answer is not that
    replay (both within the case's tolerance widened to 1e-4), and whose replay every other call of the
    function is right or equal to (``right_or_variant_in_every_call``, the variant as its memo key).
    The caller names a mistake only when exactly one is returned (several: the case cannot tell them
    apart).

    Args:
        got, golden: this call's output array and the float64 answer (same shape).
        tol: the case's tolerance.
        mistakes: ``(variant, sentence)``: the variant is what ``replay`` takes (switches as a dict, or
            a name), hashable or a dict.
        replay: ``replay(ctx, variant)``: the mistake's output recomputed in float64 on the arguments
            of the call of ``ctx`` (this one or another).
    """
    loose = Tolerance(rtol=max(tol.rtol, 1e-4), atol=max(tol.atol, 1e-4), dtype=tol.dtype)
    found = []
    for variant, sentence in mistakes:
        alt = replay(ctx, variant)
        if close_enough(got, alt, loose) and not close_enough(golden, alt, loose) and right_or_variant_in_every_call(
                ctx, lambda sub, variant=variant: replay(sub, variant), key=variant):
            found.append(sentence)
    return found


def nan_rows_fully_masked_everywhere(ctx: "JudgeContext", mask_of: Callable[["JudgeContext"], Any],
                                     targets: Sequence[str] | None = None) -> bool:
    """``nan_rows_fully_masked`` in every call of the function whose output holds NaN
    (``nan_confined_in_every_call``), each with its own mask, ``mask_of(its context)`` (None: none)."""
    return nan_confined_in_every_call(ctx, lambda sub, arr: nan_rows_fully_masked(arr, mask_of(sub)), targets)


def nan_symptom(got: np.ndarray) -> Symptom:
    """The symptom of NaN in an output ``(..., rows, width)``: how many rows hold NaN and the first one."""
    rows = np.isnan(got).any(axis=-1)
    first = tuple(int(i) for i in np.argwhere(rows)[0])
    return Symptom(f"The result contains NaN in {int(rows.sum())} of {rows.size} rows (first at {first}).")


#: The label of a line that names a cause in a check's message. Messages are built with ``with_hint``
#: and read with ``hint_of``, ``hints_in`` and ``strip_hint`` only (the headline, the bank's replay and
#: selfcheck all read them), so the label is spelled here once.
HINT_LABEL = "Likely mistake:"


def with_hint(message: str, hint: str | None) -> tuple[str, dict]:
    """``message`` with ``hint``: a cause as a leading "Likely mistake: ..." line (``details["diagnosis"]``),
    a ``Symptom`` as a trailing line with no label (``details["symptom"]``), nothing for None."""
    if not hint:
        return message, {}
    if isinstance(hint, Symptom):
        text = hint[:1].upper() + hint[1:]
        return f"{message}\n{text}", {"symptom": text}
    return f"{HINT_LABEL} {hint}\n{message}", {"diagnosis": hint}


def hint_of(message: str) -> str:
    """The cause a check's message leads with (the text after ``HINT_LABEL`` on its first line), or ""."""
    first = message.split("\n", 1)[0]
    return first[len(HINT_LABEL):].strip() if first.startswith(HINT_LABEL) else ""


def hints_in(message: str) -> list[str]:
    """Every cause a message names (each line that starts with ``HINT_LABEL``, the label removed), in order."""
    return [line[len(HINT_LABEL):].strip() for line in message.splitlines() if line.startswith(HINT_LABEL)]


def strip_hint(message: str) -> str:
    """``message`` without its leading "Likely mistake: ..." line (what ``with_hint`` added), if any."""
    if message.startswith(HINT_LABEL):
        return message.split("\n", 1)[1] if "\n" in message else ""
    return message


def close(paths: Sequence[Sequence[int]] = ((),), names: Sequence[str] = ("output",), *,
          diagnose: Diagnose | None = None, factor: float = DEFAULT_FACTOR) -> Callable[[JudgeContext], Outcome]:
    """Judge: each output at ``paths`` equals golden within the dtype-aware tolerance.

    Args:
        paths: where the compared arrays are in the return value (``()`` the value itself,
            ``(0,)`` and ``(1,)`` the items of a returned tuple).
        names: what each compared array is called in messages.
        diagnose: ``diagnose(ctx, got, tol) -> sentence | None`` naming the likely mistake when the
            first compared array is wrong.
        factor: multiple of the same-dtype reference's error allowed (see ``grader.judge.tolerance``).

    One mistake, one deduction: values are compared under the tolerance of the *input's* dtype
    (the reference's output dtype) whatever dtype the candidate returned, so a right answer in the
    wrong dtype fails ``dtype_preserved`` only, and an input modified in place fails
    ``inputs_unchanged`` only; float64 cases outside the float64 check are judged at float32
    tolerance (``JudgeContext.tolerance``), so float64 computed in float32 fails that check only.
    """

    def judge(ctx: JudgeContext) -> Outcome:
        failed = failure_from_exception(ctx)
        if failed:
            return failed
        per_output = {}
        for path, name in zip(paths, names):
            exp_desc = output_descriptor(ctx.expected, path)
            golden = output_array(ctx.golden, path)
            if exp_desc is None or golden is None or exp_desc.get("kind") != "array":
                raise GraderBug(f"reference produced no array for {name!r} in step {ctx.step.id}")
            got_desc = output_descriptor(ctx.got, path)
            if got_desc is None and path:
                top = output_descriptor(ctx.got)
                return Outcome(Verdict.FAILED, f"Returned {describe_value(top)}; expected a tuple of "
                               f"{len(paths)} arrays ({', '.join(names)}).")
            if not got_desc or got_desc.get("kind") != "array":
                return Outcome(Verdict.FAILED, f"'{name}' should be an array of shape "
                               f"{tuple(exp_desc['shape'])}, got {describe_value(got_desc)}.")
            got = ctx.got.arrays[got_desc["key"]]
            if tuple(got.shape) != tuple(golden.shape):
                return Outcome(Verdict.FAILED, shape_message(name, got.shape, golden.shape) + ".",
                               {"output": name, "got_shape": list(got.shape),
                                "expected_shape": list(golden.shape)})
            tol = _output_tolerance(ctx, path, exp_desc, golden, factor)
            cmp = compare_arrays(name, got, golden, tol)
            per_output[name] = cmp.details
            if not cmp.ok:
                message = cmp.message
                hint = diagnose(ctx, got, tol) if diagnose and path == tuple(paths[0]) else None
                message, noted = with_hint(message, hint)
                return Outcome(Verdict.FAILED, message, {**cmp.details, "output": name, **noted})
        return Outcome(Verdict.PASSED, "", per_output)

    return judge


def _output_tolerance(ctx: JudgeContext, path: Sequence[int], exp_desc: dict, golden: np.ndarray,
                      factor: float) -> Tolerance:
    """The tolerance of the output at ``path``: set by the reference and the baselines in the case's
    dtype, or by float32 internals for a float64 case outside the float64 check (``JudgeContext.tolerance``)."""
    plain = [output_array(ctx.expected, path)] + [output_array(b, path) for b in ctx.baselines]
    return ctx.tolerance(exp_desc, plain, golden, factor, lambda r: output_array(r, path))


def inputs_modified(ctx: JudgeContext) -> Outcome | None:
    """FAILED when the candidate's step changed an input array in place, else None."""
    modified = ctx.got.report.get("modified_inputs") or []
    if not modified:
        return None
    return Outcome(Verdict.FAILED, "Modified its input in place: " + ", ".join(map(str, modified))
                   + ". Work on a copy (e.g. `x = x - x.max(...)`, not `x -= ...`).",
                   {"modified_inputs": list(modified)})


def raises(*exception_names: str, when: str) -> Callable[[JudgeContext], Outcome]:
    """Judge: the call raises one of ``exception_names`` (by class name), e.g. ``ValueError``.

    Args:
        exception_names: accepted exception class names.
        when: the condition, for messages ("D % num_heads != 0").
    """

    def judge(ctx: JudgeContext) -> Outcome:
        if ctx.got is None:
            return Outcome(Verdict.ERROR, f"Not run: {ctx.not_run_reason}.")
        exc = ctx.got.report.get("exception")
        wanted = " or ".join(exception_names)
        if not exc:
            return Outcome(Verdict.FAILED, f"Expected {wanted} when {when}, but the call returned "
                           f"{describe_value(ctx.got.report.get('output'))}.")
        if exc.get("type") in ("StepTimeout", "MemoryError", "MissingEntryPoint", "NotImplementedError",
                               "ForbiddenImport"):
            return failure_from_exception(ctx)
        if exc.get("type") not in exception_names:
            return Outcome(Verdict.FAILED, f"Expected {wanted} when {when}, got "
                           f"{exc.get('type')}: {exc.get('message')}", {"exception": exc})
        return Outcome(Verdict.PASSED, "", {"exception": {"type": exc.get("type"), "message": exc.get("message")}})

    return judge


def dtype_preserved(path: Sequence[int] = (), name: str = "output") -> Callable[[JudgeContext], Outcome]:
    """Judge: the output at ``path`` has the dtype the reference returns (the input's dtype), and is
    of the track's kind: a ``torch.Tensor`` where the reference returns one (the PyTorch track), a
    NumPy array where it returns one (the NumPy track). Value checks judge neither (one mistake, one
    deduction)."""

    def judge(ctx: JudgeContext) -> Outcome:
        failed = failure_from_exception(ctx)
        if failed:
            return failed
        exp_desc = output_descriptor(ctx.expected, path)
        got_desc = output_descriptor(ctx.got, path)
        if not got_desc or got_desc.get("kind") != "array":
            return Outcome(Verdict.FAILED, f"'{name}' should be an array, got {describe_value(got_desc)}.")
        if exp_desc and ("torch_dtype" in exp_desc) != ("torch_dtype" in got_desc):
            want_kind, have_kind = (("a torch.Tensor (this is the PyTorch track)", "a NumPy array")
                                    if "torch_dtype" in exp_desc else
                                    ("a NumPy array (this is the NumPy track)", "a torch.Tensor"))
            return Outcome(Verdict.FAILED, f"'{name}' should be {want_kind}, got {have_kind}.",
                           {"got_kind": have_kind, "expected_kind": want_kind})
        want, have = dtype_name(exp_desc), dtype_name(got_desc)
        if want != have:
            return Outcome(Verdict.FAILED, f"'{name}' has the wrong dtype: got {have}, expected {want} "
                           "(outputs keep the input's dtype).", {"got_dtype": have, "expected_dtype": want})
        return Outcome(Verdict.PASSED, "", {"dtype": have})

    return judge


def inputs_unchanged() -> Callable[[JudgeContext], Outcome]:
    """Judge: the call returned normally and left every input array as it was.

    Judged whether or not the answer is right (one mistake, one deduction): a wrong answer is
    charged to the value checks, not here.
    """

    def judge(ctx: JudgeContext) -> Outcome:
        failed = failure_from_exception(ctx) or inputs_modified(ctx)
        if failed:
            return failed
        return Outcome(Verdict.PASSED)

    return judge


def all_of(*judges: Callable[[JudgeContext], Outcome]) -> Callable[[JudgeContext], Outcome]:
    """Judge: every judge passes; the first that does not decides."""

    def judge(ctx: JudgeContext) -> Outcome:
        details = {}
        for j in judges:
            out = j(ctx)
            if out.verdict != Verdict.PASSED:
                return out
            details.update(out.details)
        return Outcome(Verdict.PASSED, "", details)

    return judge


def _forward_wrong(ctx: JudgeContext, factor: float) -> Outcome | None:
    """SKIPPED, not charged, when the forward output a gradient case differentiated (the returned
    array, or the first item of a returned tuple) is NaN or inf where the answer is finite.

    One mistake, one deduction: NaN in the forward pass (fully masked rows, an all -inf slice) makes
    the gradient NaN only because the output is, and the value checks charge it already. Only a
    non-finite forward is excused, never one that is merely off: how far off a subtly wrong forward is
    (eps outside a square root) varies from case to case, so excusing it would make the gradient
    checks' verdict depend on the hidden seed; a finite wrong forward is judged, and a wrong function
    has a wrong gradient. None when the forward is finite (or not an array: the gradient judgment
    says what is missing).
    """
    path = (0,) if (output_descriptor(ctx.golden) or {}).get("kind") == "tuple" else ()
    exp_desc, golden = output_descriptor(ctx.expected, path), output_array(ctx.golden, path)
    got = output_array(ctx.got, path)
    if exp_desc is None or golden is None or got is None or _nonfinite_where_finite(got, golden) is None:
        return None
    cmp = compare_arrays("output", got, golden, _output_tolerance(ctx, path, exp_desc, golden, factor))
    return Outcome(Verdict.SKIPPED, "Gradient not judged: the forward output of this case is NaN or inf where "
                   "the answer is finite (charged to the value checks); the gradient is judged where the "
                   "forward is finite.", {"charged": False, "forward": cmp.details})


def _gradient_array(result: StepResult, label: str) -> np.ndarray | None:
    """The gradient of ``label`` a step's result holds, or None."""
    desc = (result.report.get("gradients") or {}).get(label) or {}
    return result.arrays.get(desc["key"]) if desc.get("kind") == "array" else None


def _nonfinite_where_finite(got: np.ndarray, golden: np.ndarray) -> tuple[int, tuple[int, ...]] | None:
    """(count, first index) of NaN/inf entries of ``got`` where ``golden`` is finite, or None."""
    if got.dtype.kind not in "fc" or got.shape != golden.shape:
        return None
    bad = ~np.isfinite(got) & np.isfinite(golden)
    if not bad.any():
        return None
    return int(bad.sum()), tuple(int(i) for i in np.argwhere(bad)[0])


def gradients_close(labels: Sequence[str], *, factor: float = DEFAULT_FACTOR,
                    nonfinite: Callable[[JudgeContext, str, np.ndarray], str | None] | None = None,
                    ) -> Callable[[JudgeContext], Outcome]:
    """Judge: the gradients the runner returned for ``labels`` (a step with ``backward``) equal
    golden's within the dtype-aware tolerance, compared like ``close`` compares outputs.

    A gradient with NaN/inf entries where golden's is finite fails with its own message (how many
    entries, where the first is) before any tolerance comparison; ``details["nonfinite"]`` counts
    them. A case whose forward output is NaN/inf where golden's is finite is ``skipped`` and not
    charged (``_forward_wrong``): its NaN gradient is the forward's mistake, charged by the value checks.

    Args:
        labels: the labelled tensor arguments whose gradients are compared, in order.
        factor: multiple of the same-dtype reference's gradient error allowed.
        nonfinite: optional ``(ctx, label, got) -> sentence | None`` naming the likely cause of
            non-finite entries in that gradient (e.g. a fully masked query row); None names nothing.
    """

    def judge(ctx: JudgeContext) -> Outcome:
        failed = failure_from_exception(ctx)
        if failed:
            return failed
        wrong_forward = _forward_wrong(ctx, factor)
        if wrong_forward is not None:
            return wrong_forward
        got_grads = ctx.got.report.get("gradients") or {}
        exp_grads = ctx.expected.report.get("gradients") or {}
        gold_grads = ctx.golden.report.get("gradients") or {}
        per_label = {}
        for label in labels:
            name = f"gradient of {label}"
            exp_desc, gold_desc = exp_grads.get(label) or {}, gold_grads.get(label) or {}
            if exp_desc.get("kind") != "array" or gold_desc.get("kind") != "array":
                raise GraderBug(f"reference produced no {name} in step {ctx.step.id}")
            golden = ctx.golden.arrays[gold_desc["key"]]
            got_desc = got_grads.get(label) or {}
            if got_desc.get("kind") != "array":
                note = got_desc.get("note", "no gradient was computed")
                return Outcome(Verdict.FAILED, f"No {name}: {note}. Keep the whole computation in torch "
                               "operations on the given tensors (no .detach(), .numpy()/NumPy, .item(), "
                               "torch.no_grad() or re-wrapping with torch.tensor(...)).", {"gradient": label})
            got = ctx.got.arrays[got_desc["key"]]
            if tuple(got.shape) != tuple(golden.shape):
                return Outcome(Verdict.FAILED, shape_message(name, got.shape, golden.shape) + ".",
                               {"gradient": label, "got_shape": list(got.shape),
                                "expected_shape": list(golden.shape)})
            bad = _nonfinite_where_finite(got, golden)
            if bad is not None:
                count, first = bad
                message = (f"The {name} has {count} NaN/inf entries of {got.size} (first at index {first}); "
                           "the reference's is finite everywhere.")
                hint = nonfinite(ctx, label, got) if nonfinite else None
                message, noted = with_hint(message, hint)
                return Outcome(Verdict.FAILED, message, {"gradient": label, "nonfinite": count, **noted})
            tol = ctx.tolerance(exp_desc, [ctx.expected.arrays[exp_desc["key"]]], golden, factor,
                                lambda r, lb=label: _gradient_array(r, lb))
            cmp = compare_arrays(name, got, golden, tol)
            per_label[label] = cmp.details
            if not cmp.ok:
                return Outcome(Verdict.FAILED, cmp.message, {**cmp.details, "gradient": label})
        return Outcome(Verdict.PASSED, "", {"gradients": per_label})

    return judge
