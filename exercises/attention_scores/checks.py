"""Host-side checks for `attention_scores`: the plan of public and hidden cases, and diagnoses.

Arguments are passed positionally (``query, key[, value][, mask]``) so parameter names are the
candidate's choice. ``scaled_dot_product_attention`` returns ``(output, weights)``: both are
compared with the float64 golden answer. When weights are wrong, the diagnosis recomputes the
usual mistakes on the host (no scaling, ``1/d_k``, reversed mask, mask ignored, softmax over the
query axis, ``key @ query^T``) and names the one the candidate's weights match.

Two tracks build the same cases (``build_plan(..., track=...)``): ``numpy`` hands over arrays,
``torch`` tensors of the same values and dtypes (masks as bool/float/int tensors), and adds
``gradients``: backward passes through ``scaled_dot_product_attention``'s output (with respect to
query, key and value) and through ``compute_attention_scores``' weights (query and key), compared
with the float64 reference's gradients.
"""

from __future__ import annotations

import math

import numpy as np

from grader.judge.compare import close_enough
from grader.judge.judges import (JudgeContext, all_of, close, dtype_preserved, gradients_close, inputs_unchanged,
                                 nan_rows_fully_masked, nan_rows_fully_masked_everywhere, nan_symptom,
                                 right_or_variant_in_every_call)
from grader.run.plan import NUMERIC_MASK_KINDS, Plan, PlanBuilder, numeric_mask
from grader.judge.tolerance import Tolerance


def _softmax(s: np.ndarray, axis: int = -1) -> np.ndarray:
    m = np.max(s, axis=axis, keepdims=True)
    m = np.where(np.isfinite(m), m, 0.0)
    e = np.exp(s - m)
    t = e.sum(axis=axis, keepdims=True)
    return np.divide(e, t, out=np.zeros_like(e), where=t > 0)


def _weights(q, k, mask, *, scale=None, invert=False, use_mask=True, axis=-1, swap=False):
    q, k = q.astype(np.float64), k.astype(np.float64)
    scale = 1.0 / math.sqrt(q.shape[-1]) if scale is None else scale
    s = (k @ np.swapaxes(q, -1, -2) if swap else q @ np.swapaxes(k, -1, -2)) * scale
    if mask is not None and use_mask:
        allowed = np.asarray(mask) != 0
        if invert:
            allowed = ~allowed
        try:
            s = np.where(allowed, s, -np.inf)
        except ValueError:
            return None
    return _softmax(s, axis)


#: The two functions of the exercise: a mistake in the weights shows in the calls of both.
TARGETS = ("compute_attention_scores", "scaled_dot_product_attention")


def _mask(ctx: JudgeContext) -> np.ndarray | None:
    """The mask argument of a call of either function (None when it has none)."""
    wire = ctx.step.wire
    n = 3 if wire["target"] == "scaled_dot_product_attention" else 2
    if len(wire["args"]) > n:
        return np.asarray(ctx.arg(n))
    return np.asarray(ctx.arg("mask")) if "mask" in wire.get("kwargs", {}) else None


def _variants(d_k: int) -> list[tuple[str, dict]]:
    """The mistakes ``diagnose`` replays, as ``_weights`` switches for a call with key width ``d_k``."""
    return [
        ("scores were not scaled by 1/sqrt(d_k): the result matches softmax(Q K^T).", dict(scale=1.0)),
        ("scores were scaled by 1/d_k instead of 1/sqrt(d_k).", dict(scale=1.0 / d_k)),
        ("scores were multiplied by sqrt(d_k) instead of divided by it.", dict(scale=math.sqrt(d_k))),
        ("the mask was applied with the opposite polarity: nonzero/True means 'may attend', "
         "but masked-in positions were the ones removed.", dict(invert=True)),
        ("the mask was ignored: masked keys still received weight.", dict(use_mask=False)),
        ("the softmax was taken over the query axis (-2) instead of the key axis (-1).", dict(axis=-2)),
        ("the scores were computed as key @ query^T instead of query @ key^T.", dict(swap=True)),
    ]


def _replay(ctx: JudgeContext, sentence: str):
    """The mistake ``sentence``'s results on the call of ``ctx``: the weights (compute_attention_scores)
    or (output, weights) (scaled_dot_product_attention), in float64; None where it cannot be replayed."""
    q, k = np.asarray(ctx.arg(0)), np.asarray(ctx.arg(1))
    kwargs = next(kw for s, kw in _variants(q.shape[-1]) if s == sentence)
    w = _weights(q, k, _mask(ctx), **kwargs)
    if w is None or ctx.step.wire["target"] != "scaled_dot_product_attention":
        return w
    v = np.asarray(ctx.arg(2)).astype(np.float64)
    return (w @ v, w) if w.shape[-1] == v.shape[-2] else None


def diagnose(ctx: JudgeContext, got: np.ndarray, tol: Tolerance) -> str | None:
    """Name the likely mistake behind wrong attention weights (or an output built from them): a
    replayed mistake when exactly one gives ``got`` on this case and every other call of either
    function is right or that mistake's (``right_or_variant_in_every_call``)."""
    wire = ctx.step.wire
    is_sdpa = wire["target"] == "scaled_dot_product_attention"
    q, k = np.asarray(ctx.arg(0)), np.asarray(ctx.arg(1))
    v = np.asarray(ctx.arg(2)) if is_sdpa else None
    mask = _mask(ctx)
    found = []  # evidence: the output is that mistake's, recomputed on this case; named when exactly one is
    for sentence, kwargs in _variants(q.shape[-1]):
        if kwargs.get("swap") and q.shape[-2] != k.shape[-2]:
            continue
        if mask is None and ("invert" in kwargs or "use_mask" in kwargs):
            continue
        w = _weights(q, k, mask, **kwargs)
        if w is None:
            continue
        target = w @ v.astype(np.float64) if is_sdpa and got.shape[-1] == v.shape[-1] and w.shape[-1] == v.shape[-2] else w
        if target.shape == got.shape and close_enough(got, target, tol):
            found.append(sentence)
    if len(found) == 1:
        return found[0] if right_or_variant_in_every_call(
            ctx, lambda sub: _replay(sub, found[0]), TARGETS, key=found[0]) else None
    if found:
        return None  # several mistakes give this output on this case: it cannot tell them apart
    if np.isnan(got).any():
        # evidence: every row holding NaN is fully masked, in this case and in every other call
        if nan_rows_fully_masked(got, mask) and nan_rows_fully_masked_everywhere(
                ctx, _mask, TARGETS):
            return ("NaN in the result: a query row whose keys are all masked must give zero weights "
                    "(and a zero output row), not NaN (exp(-inf - (-inf)) with its max as is, or 0/0 "
                    "shifted by 0).")
        return nan_symptom(got)  # an overflow, a mask built as 0 * -inf, ...: no evidence of which
    if is_sdpa:
        w = _weights(q, k, mask)
        if w is not None and got.shape == w.shape and close_enough(got, w, tol):
            return "the function returned the weights where the output was expected: return (output, weights)."
    return None


def _rand(rng, shape, dtype=np.float32, scale=1.0):
    return (rng.standard_normal(shape) * scale).astype(dtype)


def _shape_text(*arrays) -> str:
    return ", ".join(f"{name} {a.shape}" for name, a in arrays)


def build_plan(public_seed: int, hidden_seed: int, track: str = "numpy") -> Plan:
    """Build the attention_scores plan of ``track`` (``numpy`` or ``torch``): public cases from
    ``public_seed``, hidden ones from ``hidden_seed``; the torch track adds ``gradients``.

    Raises:
        ValueError: an unknown track.
    """
    if track not in ("numpy", "torch"):
        raise ValueError(f"attention_scores has no {track!r} track")
    b = PlanBuilder()
    rng = np.random.default_rng(public_seed)
    weights_judge = close(diagnose=diagnose, names=("weights",))
    sdpa_judge = close(paths=((0,), (1,)), names=("output", "weights"), diagnose=diagnose)
    n = 0

    def inputs(named, mask, grad: bool) -> list[dict]:
        args = [b.input(f"{label[0]}{n}", a, track=track, label=label, requires_grad=grad) for label, a in named]
        if mask is not None:
            args.append(b.input(f"m{n}", mask, track=track, label="mask"))
        return args

    def backward(shape, dtype, labels):
        b.array(f"grad_out{n}", rng.standard_normal(shape).astype(dtype))
        return {"grad_output": f"grad_out{n}", "wrt": list(labels)}

    def scores(check, q, k, mask=None, *, note="", judge=weights_judge, grad=False):
        nonlocal n
        n += 1
        args = inputs((("query", q), ("key", k)), mask, grad)
        text = _shape_text(("query", q), ("key", k)) + (f", mask {mask.shape} {mask.dtype}" if mask is not None else "")
        shape = np.broadcast_shapes(q.shape[:-2], k.shape[:-2]) + (q.shape[-2], k.shape[-2])
        b.call(check, "compute_attention_scores", args, judge=judge,
               backward=backward(shape, q.dtype, ("query", "key")) if grad else None,
               describe=f"compute_attention_scores: {text}, {q.dtype}" + (f", {note}" if note else "")
               + (", gradients of query, key" if grad else ""))

    def sdpa(check, q, k, v, mask=None, *, note="", judge=sdpa_judge, grad=False):
        nonlocal n
        n += 1
        args = inputs((("query", q), ("key", k), ("value", v)), mask, grad)
        text = _shape_text(("query", q), ("key", k), ("value", v)) + (
            f", mask {mask.shape} {mask.dtype}" if mask is not None else "")
        shape = np.broadcast_shapes(q.shape[:-2], k.shape[:-2], v.shape[:-2]) + (q.shape[-2], v.shape[-1])
        b.call(check, "scaled_dot_product_attention", args, judge=judge,
               backward=backward(shape, q.dtype, ("query", "key", "value")) if grad else None,
               describe=f"scaled_dot_product_attention: {text}, {q.dtype}" + (f", {note}" if note else "")
               + (", gradients of query, key, value" if grad else ""))

    # weights_basic / output_basic
    for shape in [(2, 5, 8), (1, 7, 16)]:
        scores("weights_basic", _rand(rng, shape), _rand(rng, shape))
    for shape in [(2, 3, 6, 8), (1, 2, 4, 16)]:
        sdpa("output_basic", _rand(rng, shape), _rand(rng, shape), _rand(rng, shape))
    # scaling: d_k large enough that 1, 1/d_k, sqrt(d_k) all differ clearly
    for d_k in (64, 128):
        q, k = _rand(rng, (2, 6, d_k)), _rand(rng, (2, 6, d_k))
        scores("scaling", q, k, note=f"d_k={d_k}")
    # cross_lengths
    sdpa("cross_lengths", _rand(rng, (2, 3, 16)), _rand(rng, (2, 9, 16)), _rand(rng, (2, 9, 5)))
    sdpa("cross_lengths", _rand(rng, (1, 2, 7, 8)), _rand(rng, (1, 2, 4, 8)), _rand(rng, (1, 2, 4, 12)))
    scores("cross_lengths", _rand(rng, (3, 1, 8)), _rand(rng, (3, 10, 8)), note="a single query")
    # leading_dims
    scores("leading_dims", _rand(rng, (5, 8)), _rand(rng, (6, 8)), note="2-D inputs")
    sdpa("leading_dims", _rand(rng, (7, 4)), _rand(rng, (7, 4)), _rand(rng, (7, 3)), note="2-D inputs")
    sdpa("leading_dims", _rand(rng, (2, 3, 5, 8)), _rand(rng, (1, 3, 6, 8)), _rand(rng, (1, 3, 6, 8)),
         note="key/value broadcast over the batch")
    # float64
    sdpa("float64", _rand(rng, (2, 2, 5, 8), np.float64), _rand(rng, (2, 2, 5, 8), np.float64),
         _rand(rng, (2, 2, 5, 8), np.float64))
    scores("float64", _rand(rng, (3, 6, 32), np.float64), _rand(rng, (3, 9, 32), np.float64))
    # masks
    causal = np.tril(np.ones((6, 6), dtype=bool))
    scores("mask_2d", _rand(rng, (2, 6, 8)), _rand(rng, (2, 6, 8)), causal, note="causal (L_q, L_k) mask")
    m2 = rng.random((4, 7)) < 0.6
    m2[:, 0] = True
    sdpa("mask_2d", _rand(rng, (2, 4, 8)), _rand(rng, (2, 7, 8)), _rand(rng, (2, 7, 8)), m2,
         note="random (L_q, L_k) mask")
    pad = np.ones((3, 1, 1, 7), dtype=bool)
    pad[0, ..., 5:] = False
    pad[2, ..., 3:] = False
    sdpa("mask_padding", _rand(rng, (3, 2, 7, 8)), _rand(rng, (3, 2, 7, 8)), _rand(rng, (3, 2, 7, 8)), pad,
         note="padding mask, batch rows of different lengths")
    scores("mask_padding", _rand(rng, (3, 2, 5, 8)), _rand(rng, (3, 2, 7, 8)), pad)
    m4 = np.tril(np.ones((5, 8), dtype=bool), k=3)[None, None]
    sdpa("mask_4d", _rand(rng, (2, 2, 5, 8)), _rand(rng, (2, 2, 8, 8)), _rand(rng, (2, 2, 8, 4)), m4,
         note="bottom-right causal (1, 1, L_q, L_k) mask")
    scores("mask_4d", _rand(rng, (1, 3, 5, 8)), _rand(rng, (1, 3, 8, 8)), m4)
    sdpa("mask_numeric", _rand(rng, (2, 6, 8)), _rand(rng, (2, 6, 8)), _rand(rng, (2, 6, 8)),
         causal.astype(np.float32), note="float 0/1 mask")
    scores("mask_numeric", _rand(rng, (2, 2, 5, 8)), _rand(rng, (2, 2, 7, 8)), pad[:2].astype(np.int64),
           note="int 0/1 mask")
    own = np.random.default_rng(3)  # its own stream: the cases after it keep their inputs
    m3 = np.tril(np.ones((5, 7), dtype=np.int64), k=2) * np.int64(3)
    sdpa("mask_numeric", _rand(own, (2, 5, 8)), _rand(own, (2, 7, 8)), _rand(own, (2, 7, 6)), m3,
         note="int 0/3 mask: any nonzero value may attend, not only 1")
    mf = (np.tril(np.ones((6, 6)), k=0) * own.choice([0.5, -2.0], size=(6, 6))).astype(np.float32)
    scores("mask_numeric", _rand(own, (2, 2, 6, 8)), _rand(own, (2, 2, 6, 8)), mf,
           note="float mask of 0 / 0.5 / -2.0: any nonzero value may attend, negative ones too")
    # fully masked rows
    fm = np.tril(np.ones((5, 5), dtype=bool))
    fm[2, :] = False
    sdpa("fully_masked_rows", _rand(rng, (2, 5, 8)), _rand(rng, (2, 5, 8)), _rand(rng, (2, 5, 8)), fm,
         note="query row 2 has every key masked")
    fp = np.ones((2, 1, 1, 6), dtype=bool)
    fp[1] = False
    sdpa("fully_masked_rows", _rand(rng, (2, 2, 3, 8), np.float64), _rand(rng, (2, 2, 6, 8), np.float64),
         _rand(rng, (2, 2, 6, 8), np.float64), fp, note="batch 1 is entirely padding")
    scores("fully_masked_rows", _rand(rng, (2, 5, 8)), _rand(rng, (2, 5, 8)), fm,
           note="compute_attention_scores, query row 2 has every key masked")
    # Any finite fill gives a fully masked row uniform weights; -1e4 also loses to real scores below
    # -1e4, -1e9 does not. Query row 0 may see key 0 only, at a score near -2e5 (q_0 = -k_0): a -1e9
    # fill still gives it weight 1, a -1e4 fill gives it to the masked keys (own stream: the cases
    # after it keep their inputs).
    qf, kf = _rand(own, (2, 3, 8), np.float64, 300.0), _rand(own, (2, 5, 8), np.float64, 300.0)
    qf[:, 0] = -kf[:, 0]
    ff = np.zeros((3, 5), dtype=bool)
    ff[0, 0] = True
    ff[2, :4] = True
    scores("fully_masked_rows", qf, kf, ff,
           note="scores around -1e5, query row 1 has every key masked, row 0 sees key 0 only")
    # large logits
    sdpa("large_logits", _rand(rng, (2, 5, 16), scale=30.0), _rand(rng, (2, 5, 16), scale=30.0),
         _rand(rng, (2, 5, 16)), note="scores in the thousands")
    scores("large_logits", _rand(rng, (1, 4, 8), np.float64, 300.0), _rand(rng, (1, 6, 8), np.float64, 300.0),
           causal[:4, :6], note="scores around 1e5")
    # dtype / inputs
    for dtype in (np.float32, np.float64):
        sdpa("dtype_preserved", _rand(rng, (2, 4, 8), dtype), _rand(rng, (2, 4, 8), dtype),
             _rand(rng, (2, 4, 8), dtype), causal[:4, :4],
             judge=all_of(dtype_preserved((0,), "output"), dtype_preserved((1,), "weights")))
    sdpa("inputs_unchanged", _rand(rng, (2, 5, 8)), _rand(rng, (2, 5, 8)), _rand(rng, (2, 5, 8)),
         causal[:5, :5].astype(np.float32), judge=inputs_unchanged())
    scores("inputs_unchanged", _rand(rng, (2, 5, 8), np.float64), _rand(rng, (2, 5, 8), np.float64),
           causal[:5, :5], judge=inputs_unchanged())

    if track == "torch":
        qkv = gradients_close(("query", "key", "value"))
        sdpa("gradients", _rand(rng, (2, 5, 8)), _rand(rng, (2, 6, 8)), _rand(rng, (2, 6, 4)), judge=qkv, grad=True)
        sdpa("gradients", _rand(rng, (2, 2, 5, 8), np.float64), _rand(rng, (2, 2, 5, 8), np.float64),
             _rand(rng, (2, 2, 5, 8), np.float64), fm, judge=qkv, grad=True,
             note="query row 2 has every key masked")
        sdpa("gradients", _rand(rng, (3, 2, 7, 8)), _rand(rng, (3, 2, 7, 8)), _rand(rng, (3, 2, 7, 8)), pad,
             judge=qkv, grad=True, note="padding mask")
        scores("gradients", _rand(rng, (2, 4, 16), np.float64), _rand(rng, (2, 6, 16), np.float64), m2[:, :6],
               judge=gradients_close(("query", "key")), grad=True)

    # Hidden cases: the same kinds at every seed (leading dims, dtype, value scale, mask kind, a fully
    # masked row or not); the seed draws only the sizes (L_q != L_k, d_k >= 4) and the values.
    hidden = np.random.default_rng(hidden_seed)
    kinds = [((2,), np.float32, 1.0, "random+empty_row"), ((2, 3), np.float64, 30.0, "random"),
             ((), np.float32, 0.1, None), ((3, 2), np.float64, 1.0, "padding+empty_batch"),
             ((2,), np.float32, 30.0, None)]
    for batch, dtype, scale, mask_kind in kinds:
        l_q = int(hidden.integers(2, 8))
        l_k = l_q + int(hidden.integers(1, 4))
        d_k, d_v = int(hidden.integers(4, 33)), int(hidden.integers(2, 17))
        q = _rand(hidden, (*batch, l_q, d_k), dtype, scale)
        k = _rand(hidden, (*batch, l_k, d_k), dtype, scale)
        v = _rand(hidden, (*batch, l_k, d_v), dtype)
        mask = None
        if mask_kind and mask_kind.startswith("random"):
            mask = hidden.random((l_q, l_k)) < 0.6
            mask[:, int(hidden.integers(0, l_k))] = True
            if mask_kind.endswith("empty_row"):
                mask[int(hidden.integers(0, l_q)), :] = False
        elif mask_kind:
            mask = np.ones((batch[0], 1, 1, l_k), dtype=bool)
            mask[0, ..., int(hidden.integers(1, l_k)):] = False
            mask[-1] = False
        sdpa("hidden_cases", q, k, v, mask, note=f"scale {scale:g}, mask {mask_kind or 'none'}")
    # numeric masks in the hidden cases too, as in the public ones: integer 0/1 and 0/3, float 0/0.5/-2.0
    # ((L_q, L_k) random, (B, 1, 1, L_k) padding, (L_q, L_k) random), drawn after every case above so
    # that those keep their inputs
    for kind, batch, dtype in zip(NUMERIC_MASK_KINDS, ((2,), (3, 2), (2,)), (np.float32, np.float64, np.float32)):
        l_q = int(hidden.integers(2, 8))
        l_k = l_q + int(hidden.integers(1, 4))
        d_k, d_v = int(hidden.integers(4, 33)), int(hidden.integers(2, 17))
        q, k, v = _rand(hidden, (*batch, l_q, d_k), dtype), _rand(hidden, (*batch, l_k, d_k), dtype), \
            _rand(hidden, (*batch, l_k, d_v), dtype)
        if len(batch) == 2:
            allowed = np.ones((batch[0], 1, 1, l_k), dtype=bool)
            allowed[0, ..., int(hidden.integers(1, l_k)):] = False
        else:
            allowed = hidden.random((l_q, l_k)) < 0.6
            allowed[:, int(hidden.integers(0, l_k))] = True
        mask, _ = numeric_mask(allowed, kind, hidden)
        sdpa("hidden_cases", q, k, v, mask, note=f"mask of {kind}")
    return b.plan


def probe_steps(b: PlanBuilder, probe, size: int, rng: np.random.Generator, track: str = "numpy") -> None:
    """Steps measured by a complexity probe at one size: self-attention of ``(2, size, 16)`` float64
    (arrays, or tensors in the torch track), once without a mask and once with a causal ``(size, size)``
    bool mask (the two paths of the algorithm); the probe sums what both measured, so a cost that grows
    on the masked path only grows the sum too."""
    causal = np.tril(np.ones((size, size), dtype=bool))
    for masked in (False, True):
        q, k, v = (rng.standard_normal((2, size, 16)) for _ in range(3))
        tag = f"{probe.check}{size}{'m' if masked else ''}"
        args = [b.input(f"probe_{x}{tag}", a, track=track, label=x) for x, a in (("query", q), ("key", k), ("value", v))]
        if masked:
            args.append(b.input(f"probe_mask{tag}", causal, track=track, label="mask"))
        b.call(probe.check, "scaled_dot_product_attention", args,
               measure=probe.measure(), meta={"probe": probe.check, "size": size, "path": "masked" if masked else "unmasked"},
               describe=f"query/key/value: shape (2, {size}, 16), float64, "
                        + ("causal bool mask" if masked else "no mask"))
