"""Host-side checks for `softmax`: the plan of public and hidden cases, and how each is judged.

Every case calls ``softmax(x)`` or ``softmax(x, axis)`` (axis passed positionally, so the
parameter's name is the candidate's choice) and compares with the float64 golden answer under the
dtype-aware tolerance. Diagnoses name the usual mistakes: no max subtraction (overflow), 0/0 on an
all ``-inf`` slice, the wrong axis, a missing normalisation.

Two tracks build the same cases (``build_plan(..., track=...)``): ``numpy`` hands over arrays;
``torch`` hands over tensors of the same values and dtypes, and adds ``gradients`` (a backward pass
with a fixed upstream gradient, compared with the float64 reference's) and ``half_precision``
(float16 and bfloat16 inputs, judged against the float64 answer within a few times the error of a
plain softmax run in that dtype).
"""

from __future__ import annotations

import numpy as np

from grader.judge.judges import (JudgeContext, Outcome, Symptom, all_of, close, dtype_preserved, failure_from_exception,
                           gradients_close, holds_in_every_call, inputs_unchanged, output_array)
from grader.judge.verdicts import Verdict
from grader.run.plan import Plan, PlanBuilder
from grader.judge.tolerance import Tolerance
from grader.judge.compare import close_enough


def _softmax64(x: np.ndarray, axis: int) -> np.ndarray:
    x = x.astype(np.float64)
    m = np.max(x, axis=axis, keepdims=True)
    m = np.where(np.isfinite(m), m, 0.0)
    e = np.exp(x - m)
    s = e.sum(axis=axis, keepdims=True)
    return np.divide(e, s, out=np.zeros_like(e), where=s > 0)


def diagnose(ctx: JudgeContext, got: np.ndarray, tol: Tolerance) -> str | None:
    """Name the likely mistake behind a wrong softmax output, or None."""
    x = np.asarray(ctx.arg(0))
    axis = ctx.arg(1) if len(ctx.step.wire["args"]) > 1 else -1
    ax = axis % x.ndim
    if got.shape != x.shape:
        return None
    nan = np.isnan(got)
    if nan.any():
        with np.errstate(invalid="ignore"):
            all_neg_inf = np.all(np.isneginf(x), axis=ax, keepdims=True) & np.ones_like(x, dtype=bool)
        if (nan & all_neg_inf).any() and not (nan & ~all_neg_inf).any():
            # evidence: the NaN lie exactly in the slices that are entirely -inf, nowhere else
            # which pass made the NaN is not evidenced (x - max = -inf - (-inf), or 0/0 after a guarded
            # shift): the sentence names both (confuser max_shift_unguarded)
            return ("a slice that is entirely -inf gave NaN (its max is -inf, so x - max is -inf - (-inf) = NaN; "
                    "shifted by 0 instead, its exponentials sum to 0 and give 0/0); return zeros for such a slice, "
                    "e.g. by replacing a non-finite max with 0 and dividing only where the sum is > 0.")
    if nan.any() or np.isinf(got).any():
        return _nonfinite_hint(x, ax, axis, got, tol)
    for other in range(x.ndim):
        if other != ax and close_enough(got, _softmax64(x, other), tol):
            if other == x.ndim - 1 and holds_in_every_call(ctx, _last_axis_softmax):
                # evidence: every other call of the run (NaN/inf ones aside) gave the softmax over its
                # last axis, whatever axis it asked for: one cause, said once for every case that shows it
                return IGNORES_AXIS
            return f"normalised over axis {other} instead of axis {axis}."
    with np.errstate(invalid="ignore", over="ignore"):
        sums = got.astype(np.float64).sum(axis=ax)
    # a slice that is entirely -inf sums to 0, every other one to 1
    target = np.where(np.all(np.isneginf(x), axis=ax), 0.0, 1.0)
    finite_sums = np.isfinite(sums)
    if not np.allclose(sums[finite_sums], target[finite_sums], rtol=1e-3, atol=1e-3):
        with np.errstate(invalid="ignore", over="ignore"):
            e = np.exp(x.astype(np.float64) - np.max(x, axis=ax, keepdims=True))
        if close_enough(got, e, tol):
            return "the exponentials were not divided by their sum along the axis."
        return Symptom(f"The output does not sum to 1 along axis {axis}.")  # a symptom, no cause
    return None


IGNORES_AXIS = "the axis argument is ignored: the softmax is always taken over the last axis."


def _last_axis_softmax(sub: JudgeContext, out: np.ndarray) -> bool:
    """Another softmax call's output is the softmax over its input's last axis, whatever axis it asked
    for (within 1e-3 relative: where the axes differ the two differ by far more). A call that asked
    for another axis and got it right contradicts "always" (an axis ignored for 3-D inputs only); an
    output with NaN/inf is another mistake's and no evidence either way."""
    x = np.asarray(sub.arg(0))
    axis = sub.arg(1) if len(sub.step.wire["args"]) > 1 else -1
    if out.shape != x.shape or not isinstance(axis, int):
        return False
    if not np.isfinite(out).all():
        return True
    with np.errstate(invalid="ignore", over="ignore"):
        return bool(np.allclose(out.astype(np.float64), _softmax64(x, x.ndim - 1), rtol=1e-3, atol=1e-5))


def _unshifted(x: np.ndarray, ax: int, dtype: np.dtype) -> np.ndarray:
    """softmax without the max shift, computed in ``dtype``: exp(x) / sum(exp(x)) (what overflows)."""
    with np.errstate(over="ignore", invalid="ignore", divide="ignore"):
        e = np.exp(x.astype(dtype))
        return e / e.sum(axis=ax, keepdims=True)


def _confined_to_overflowing_slices(x: np.ndarray, ax: int, got: np.ndarray) -> bool:
    """Whether every NaN/inf of ``got`` lies in a slice (along ``ax``) holding a finite logit beyond the
    range of ``got``'s dtype (one that becomes inf when cast to it)."""
    with np.errstate(over="ignore"):
        beyond = np.isfinite(x) & np.isinf(x.astype(got.dtype))
    slices = np.any(beyond, axis=ax, keepdims=True) & np.ones_like(x, dtype=bool)
    bad = ~np.isfinite(got.astype(np.float64))
    return bool(bad.any() and not (bad & ~slices).any())


def _nonfinite_hint(x: np.ndarray, ax: int, axis, got: np.ndarray, tol: Tolerance) -> str:
    """The hint for NaN/inf in a softmax output: a cause only with evidence on the candidate's values
    (issue 24), else the symptom.

    * "computed in a narrower dtype": the output's dtype is narrower than the float64 input's, the
      input holds finite logits beyond that dtype's range, and every NaN/inf of the output lies in a
      slice holding such a logit (evidence: the two dtypes, the input, where the candidate's
      non-finite entries are);
    * "exp overflowed: subtract the maximum": the output is, NaN for NaN and inf for inf with the
      other entries within tolerance, the unshifted softmax computed in the output's own dtype (a
      stable softmax run in float32 on a float64 input has NaN where this has not, so it is not
      told to subtract the maximum);
    * otherwise the symptom: how many entries are NaN/inf and where the first is.
    """
    finite = x[np.isfinite(x)]
    if (finite.size and x.dtype == np.float64 and got.dtype.kind == "f" and got.dtype.itemsize < 8
            and np.abs(finite).max() > np.finfo(got.dtype).max
            and _confined_to_overflowing_slices(x, ax, got)):
        return (f"the float64 input came out as {got.dtype.name} with NaN/inf only in slices holding logits beyond "
                f"{got.dtype.name}'s range, as when it is computed in {got.dtype.name}, where they overflow to inf "
                "(inf - inf = NaN): compute in the input's dtype, subtracting the maximum.")
    dtype = got.dtype if got.dtype.kind == "f" else x.dtype
    naive = _unshifted(x, ax, dtype).astype(np.float64)
    g = got.astype(np.float64)
    same_bad = np.array_equal(np.isnan(g), np.isnan(naive)) and np.array_equal(np.isinf(g), np.isinf(naive)) \
        and np.array_equal(g[np.isinf(g)], naive[np.isinf(naive)])
    ok = np.isfinite(g) & np.isfinite(naive)
    if same_bad and (not ok.any() or close_enough(np.where(ok, g, 0.0), np.where(ok, naive, 0.0), tol)):
        return ("exp overflowed: the output is the softmax computed without subtracting the maximum; subtract the "
                "maximum along the axis before exponentiating, on every path (softmax(x) == softmax(x - max(x))).")
    bad = ~np.isfinite(g)
    first = tuple(int(i) for i in np.argwhere(bad)[0])
    return Symptom(f"The output has {int(bad.sum())} NaN/inf entries of {g.size} (first at index {first}) where "
                   "the reference's is finite.")


def exact_zero_at_neg_inf(ctx: JudgeContext) -> Outcome:
    """Judge: every ``-inf`` logit gets probability exactly 0 (the contract says 0, not about 0)."""
    failed = failure_from_exception(ctx)
    if failed:
        return failed
    x, got = np.asarray(ctx.arg(0)), output_array(ctx.got)
    if got is None or got.shape != x.shape:
        return Outcome(Verdict.FAILED, "the output should have the input's shape.")
    at_neg_inf = got[np.isneginf(x)]
    if np.any(at_neg_inf != 0):
        worst = float(np.nanmax(np.abs(at_neg_inf))) if not np.isnan(at_neg_inf).all() else float("nan")
        return Outcome(Verdict.FAILED, f"A -inf logit must get probability exactly 0; got up to {worst:.3g} "
                       "(e.g. from an epsilon added to the exponentials or a finite stand-in for -inf).",
                       {"largest_at_neg_inf": worst})
    return Outcome(Verdict.PASSED)


def _case(rng: np.random.Generator, shape, dtype=np.float32, scale: float = 3.0) -> np.ndarray:
    return (rng.standard_normal(shape) * scale).astype(dtype)


def _describe(x: np.ndarray, axis: int | None, note: str = "") -> str:
    ax = "default axis" if axis is None else f"axis={axis}"
    return f"x: shape {x.shape}, {x.dtype}, {ax}" + (f", {note}" if note else "")


def _input(b: PlanBuilder, name: str, x: np.ndarray, track: str, *, transpose=None, dtype: str | None = None,
           requires_grad: bool = False) -> dict:
    """``x`` as an argument of the track: an array (numpy) or a tensor of ``dtype`` (torch)."""
    if track == "torch":
        return b.tensor(name, x, dtype=dtype or x.dtype.name, transpose=transpose, requires_grad=requires_grad,
                        label="x")
    return b.array(name, x, transpose=transpose, label="x")


# The NaN's place is the evidence, not the pass that computes it: a NaN of the forward pass hidden with
# torch.where/nan_to_num and a custom backward that recomputes exp(x - max) / sum unguarded put it in the
# same entries (confuser backward_recomputes_unguarded), so the sentence names both.
ALL_NEG_INF_GRAD_NAN = ("the gradient is NaN in a slice that is entirely -inf: a NaN is computed for that slice "
                        "on the way to the gradient (exp(-inf - (-inf)), 0/0, or torch.logsumexp of the slice), "
                        "in the forward pass and hidden after it (torch.where, nan_to_num) or in a custom "
                        "backward; shift such a slice by a finite value (0) before exponentiating and divide "
                        "only where the sum is > 0, in the backward too")


def nonfinite_gradient(ctx: JudgeContext, label: str, got: np.ndarray) -> str | None:
    """Name the cause of NaN/inf in the gradient of ``x``: when every non-finite entry lies in a
    slice of the input that is entirely -inf (along the case's axis), the NaN of that slice's
    softmax was hidden in the forward pass but not in the backward one. None otherwise."""
    x = np.asarray(ctx.arg(0))
    axis = ctx.arg(1) if len(ctx.step.wire["args"]) > 1 else -1
    if x.shape != got.shape or not isinstance(axis, int):
        return None
    empty = np.broadcast_to(np.isneginf(x).all(axis=axis, keepdims=True), x.shape)
    bad = ~np.isfinite(got)
    if bad.any() and not (bad & ~empty).any():
        return ALL_NEG_INF_GRAD_NAN
    return None


def build_plan(public_seed: int, hidden_seed: int, track: str = "numpy") -> Plan:
    """Build the softmax plan of ``track`` (``numpy`` or ``torch``): public cases from ``public_seed``,
    hidden ones from ``hidden_seed``; the torch track adds ``gradients`` and ``half_precision``.

    Raises:
        ValueError: an unknown track.
    """
    if track not in ("numpy", "torch"):
        raise ValueError(f"softmax has no {track!r} track")
    b = PlanBuilder()
    rng = np.random.default_rng(public_seed)
    judge = close(diagnose=diagnose)
    n = 0

    def add(check: str, x: np.ndarray, axis: int | None = None, *, transpose=None, note: str = "",
            judge_fn=judge, dtype: str | None = None, grad: bool = False,
            stream: np.random.Generator | None = None) -> None:
        nonlocal n
        n += 1
        arg = _input(b, f"x{n}", x, track, transpose=transpose, dtype=dtype, requires_grad=grad)
        args = [arg] if axis is None else [arg, b.value(axis)]
        backward = None
        if grad:
            b.array(f"grad_out{n}", (stream or rng).standard_normal(x.shape).astype(x.dtype))
            backward = {"grad_output": f"grad_out{n}", "wrt": ["x"]}
        shown = x if dtype is None else x.astype(np.float32)
        describe = _describe(shown, axis, note)
        if dtype is not None:
            describe = describe.replace("float32", dtype, 1)
        b.call(check, "softmax", args, judge=judge_fn, describe=describe + (", gradient of x" if grad else ""),
               backward=backward)

    add("values_1d", _case(rng, (7,)))
    add("values_1d", _case(rng, (1,)))
    add("values_1d", _case(rng, (33,), scale=10.0))
    for shape in [(4, 9), (3, 5, 6), (2, 3, 4, 5)]:
        add("values_nd", _case(rng, shape))
    for shape, axes in [((4, 9), [0, 1, -1, -2]), ((3, 5, 6), [0, 1, 2, -1, -2, -3]),
                        ((2, 3, 4, 5), [0, 1, 2, 3, -1, -3, -4])]:
        for axis in axes:
            add("axes", _case(rng, shape), axis)
    for shape, axis in [((5, 8), -1), ((3, 4, 7), 1), ((64,), 0)]:
        add("float64", _case(rng, shape, np.float64), axis)
    for shape, perm, axis in [((6, 5), [1, 0], -1), ((3, 4, 5), [2, 0, 1], 1), ((4, 7, 3), [1, 2, 0], -1)]:
        add("non_contiguous", _case(rng, shape), axis, transpose=perm, note=f"non-contiguous view (transpose {perm})")
    for dtype in (np.float32, np.float64):
        x = _case(rng, (4, 16), dtype, scale=1e4)
        add("large_logits", x, -1, note="logits around +-1e4")
        add("large_logits", np.full((3, 5), 1e4, dtype=dtype) + _case(rng, (3, 5), dtype, 1.0), 0,
            note="every logit near +1e4")
        add("large_logits", -np.full((2, 6), 1e4, dtype=dtype) - _case(rng, (2, 6), dtype, 1.0).__abs__(), -1,
            note="every logit near -1e4")
    for dtype in (np.float32, np.float64):
        big = np.finfo(dtype).max
        x = np.array([[big, big / 2, 0.0, -big], [-big, -big / 2, -big / 4, -big]], dtype=dtype)
        add("dtype_max", x, -1, note="logits near the dtype's largest value")
        add("dtype_max", np.array([[big, big * 0.999, big * 0.5]], dtype=dtype), -1,
            note="several logits near the dtype's largest value")
    x = _case(rng, (4, 6))
    x[0, 1] = x[2, 0] = x[2, 5] = x[3, 3] = -np.inf
    neg_inf_judge = all_of(judge, exact_zero_at_neg_inf)
    add("neg_inf_entries", x, -1, note="some -inf entries", judge_fn=neg_inf_judge)
    x64 = _case(rng, (3, 5), np.float64)
    x64[[0, 2], 2] = -np.inf
    x64[1, 4] = -np.inf
    add("neg_inf_entries", x64, 0, note="-inf entries, no slice entirely -inf", judge_fn=neg_inf_judge)
    x1 = _case(rng, (9,), scale=2.0)
    x1[[2, 7]] = -np.inf
    add("neg_inf_entries", x1, note="1-D, two -inf entries", judge_fn=neg_inf_judge)
    x = _case(rng, (4, 5))
    x[1, :] = -np.inf
    add("all_neg_inf", x, -1, note="row 1 is all -inf")
    x = _case(rng, (3, 4, 5), np.float64)
    x[:, 2, :] = -np.inf
    x[1, :, 3] = -np.inf
    add("all_neg_inf", x, 1, note="slices along axis 1 that are all -inf")
    # An all -inf row beside rows near +1000 and -1000, on its own stream (later cases keep their
    # inputs): no max shift (exp overflows) or one global maximum (the low row underflows to 0/0) puts
    # NaN outside the all -inf row too, so those mistakes are told apart from the all -inf one here.
    lvl_rng = np.random.default_rng([public_seed, 16])
    x = _case(lvl_rng, (3, 5), np.float64)
    x[0, :] = -np.inf
    x[1] += 1000.0
    x[2] -= 1000.0
    add("all_neg_inf", x, -1, note="row 0 is all -inf, row 1 near +1000, row 2 near -1000")
    for dtype in (np.float32, np.float64):
        add("dtype_preserved", _case(rng, (3, 7), dtype), -1, judge_fn=dtype_preserved())
        add("dtype_preserved", _case(rng, (6,), dtype), judge_fn=dtype_preserved())
    add("input_unchanged", _case(rng, (5, 8), scale=5.0), -1, judge_fn=inputs_unchanged())
    xu = _case(rng, (3, 6), scale=5.0)
    xu[0, 2] = xu[2, :] = -np.inf
    add("input_unchanged", xu, -1, note="with -inf entries", judge_fn=inputs_unchanged())
    add("input_unchanged", _case(rng, (4, 3, 6), np.float64, scale=5.0), 1,
        judge_fn=inputs_unchanged())

    if track == "torch":
        grad_judge = gradients_close(["x"])
        for shape, axis, dtype in [((4, 9), -1, np.float32), ((3, 5, 6), 1, np.float64), ((7,), None, np.float32),
                                   ((2, 3, 8), 0, np.float64)]:
            add("gradients", _case(rng, shape, dtype), axis, judge_fn=grad_judge, grad=True)
        xg = _case(rng, (3, 6), np.float64, scale=1e3)
        add("gradients", xg, -1, judge_fn=grad_judge, grad=True, note="logits around +-1e3")
        # -inf entries and slices that are entirely -inf, on their own stream (later cases keep
        # their inputs): the gradient there is 0 (exp(-inf) = 0 feeds nothing), and a solution that
        # zeroes the NaN of an all -inf slice with torch.where after the fact has a NaN gradient.
        inf_rng = np.random.default_rng([public_seed, 15])
        grad_inf_judge = gradients_close(["x"], nonfinite=nonfinite_gradient)
        xg = _case(inf_rng, (4, 6))
        xg[0, 1] = xg[3, 4] = -np.inf
        xg[2, :] = -np.inf
        add("gradients", xg, -1, judge_fn=grad_inf_judge, grad=True, stream=inf_rng,
            note="-inf entries; row 2 is all -inf")
        xg = _case(inf_rng, (3, 4, 5), np.float64)
        xg[:, 1, :] = -np.inf
        xg[2, :, 3] = -np.inf
        add("gradients", xg, 1, judge_fn=grad_inf_judge, grad=True, stream=inf_rng,
            note="slices along axis 1 that are all -inf")
        for half in ("float16", "bfloat16"):
            add("half_precision", _case(rng, (4, 12)), -1, dtype=half)
            add("half_precision", _case(rng, (3, 5, 7), scale=30.0), 1, dtype=half, note="logits around +-30")
            xh = _case(rng, (3, 6))
            xh[1, 2] = -np.inf
            add("half_precision", xh, -1, dtype=half, note="one -inf entry")
            # the dtype of half input is dtype_preserved's to judge (one mistake, one deduction)
            add("dtype_preserved", _case(rng, (2, 6)), -1, dtype=half, judge_fn=dtype_preserved())

    # Hidden cases: the same kinds at every seed (shape class, axis, dtype, value scale); the seed
    # only draws the sizes (2 to 8, never 1, so every axis matters) and the values.
    hidden = np.random.default_rng(hidden_seed)
    kinds = [(1, None, np.float32, "normal", 1.0), (2, 0, np.float64, "normal", 0.01),
             (3, 1, np.float32, "normal", 10.0), (4, -3, np.float64, "normal", 100.0),
             (2, -1, np.float32, "large", 0.0), (3, -1, np.float64, "levels", 0.0)]
    for ndim, axis, dtype, how, scale in kinds:
        shape = tuple(int(d) for d in hidden.integers(2, 9, size=ndim))
        if how == "normal":
            x, note = _case(hidden, shape, dtype, scale), f"scale {scale:g}"
        elif how == "large":
            # Row 0 holds one logit at 1000 and the rest in [800, 810]: its max is at least 95 above
            # its mean or median, so a shift by anything but the max overflows float32 there at every
            # seed (with the whole row uniform, a mean shift overflowed only when the draw spread wide).
            x = hidden.uniform(800.0, 1000.0, shape)
            x[0] = hidden.uniform(800.0, 810.0, shape[1])
            x[0, hidden.integers(shape[1])] = 1000.0
            x, note = x.astype(dtype), "logits between 800 and 1000, row 0 one peak at 1000 above [800, 810]"
        else:  # each slice at its own level, from -3000 to 3000: one global maximum underflows the low ones
            levels = np.linspace(-3000.0, 3000.0, int(np.prod(shape[:-1]))).reshape(*shape[:-1], 1)
            x, note = (levels + _case(hidden, shape, np.float64, 3.0)).astype(dtype), "slices at levels -3000 to 3000"
        add("hidden_values", x, axis, note=note)
    return b.plan


def probe_steps(b: PlanBuilder, probe, size: int, rng: np.random.Generator, track: str = "numpy") -> None:
    """Steps measured by a complexity probe at one size: ``softmax`` of a ``(4, size)`` float64 array
    (a tensor in the torch track)."""
    x = rng.standard_normal((4, size)) * 3.0
    arg = b.tensor(f"probe_x{size}", x, dtype="float64") if track == "torch" else b.array(f"probe_x{size}", x)
    b.call(probe.check, "softmax", [arg, b.value(-1)], measure=probe.measure(),
           meta={"probe": probe.check, "size": size}, describe=f"x: shape (4, {size}), float64, axis=-1")
