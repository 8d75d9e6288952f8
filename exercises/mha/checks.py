"""Host-side checks for `mha`: the plan of public and hidden cases, and how each is judged.

Every case calls ``multi_head_attention(query, key, value, num_heads, W_q, W_k, W_v, W_o[, mask])``
with every argument positional (the parameter names are the candidate's choice) and compares with
the float64 golden answer under the dtype-aware tolerance. Gradient cases ask the runner for a
backward pass with a fixed upstream gradient. Diagnoses replay the usual mistakes in float64
NumPy (``attention64``) and name the one the candidate's output matches.

Two tracks (``build_plan(..., track=...)``): ``torch`` (the default) hands over tensors and grades
gradients and half precision; ``numpy`` hands over arrays of the same values (float32/float64, masks
as bool/float/int arrays) and grades values only, so it leaves out ``half_precision``,
``grad_inputs``, ``grad_weights`` and ``hidden_gradients`` (``drop_checks`` in exercise.toml).
"""

from __future__ import annotations

import math

import numpy as np

from grader.judge.judges import (JudgeContext, close, dtype_preserved, gradients_close, inputs_unchanged,
                                 nan_rows_fully_masked, nan_rows_fully_masked_everywhere, nan_symptom, raises,
                                 replayed_mistakes)
from grader.run.plan import NUMERIC_MASK_KINDS, Plan, PlanBuilder, numeric_mask
from grader.judge.tolerance import Tolerance

INPUTS = ("query", "key", "value")
WEIGHTS = ("W_q", "W_k", "W_v", "W_o")


# -- a float64 model of attention and of its usual mistakes (host only) ------------------------------

def _split(t: np.ndarray, heads: int, d_k: int, mode: str) -> np.ndarray:
    B, L, _ = t.shape
    if mode == "reshape":  # the mistake: (B, L, H*d_k) read as (B, H, L, d_k)
        return t.reshape(B, heads, L, d_k)
    return t.reshape(B, L, heads, d_k).transpose(0, 2, 1, 3)


def attention64(xq, xk, xv, heads, W_q, W_k, W_v, W_o, mask=None, *, kv_heads=None, scale="d_k",
                split="transpose", polarity=True, use_wo=True, kv_map="interleave") -> np.ndarray:
    """Multi-head (or grouped-query) attention in float64 NumPy, with switches for known mistakes.

    Args:
        xq, xk, xv: (B, L_q, D), (B, L_k, D), (B, L_k, D).
        heads: query heads H; ``kv_heads`` (default H) key/value heads, W_k/W_v of width kv_heads*d_k.
        mask: None or broadcastable to (B, H, L_q, L_k); nonzero = may attend.
        scale: ``d_k`` (right), ``none`` (unscaled), ``D`` (by sqrt(D)), ``kv_width`` (sqrt(kv_heads*d_k)),
            ``twice`` (by d_k: 1/sqrt(d_k) applied twice).
        split: ``transpose`` (right) or ``reshape`` (heads split and merged by reshape alone).
        polarity: False applies the mask reversed.
        use_wo: False skips the output projection.
        kv_map: ``interleave`` (right: head h -> h // group) or ``repeat`` (head h -> h % kv_heads).
    """
    f = lambda a: np.asarray(a, dtype=np.float64)  # noqa: E731
    xq, xk, xv, W_q, W_k, W_v, W_o = map(f, (xq, xk, xv, W_q, W_k, W_v, W_o))
    B, L_q, D = xq.shape
    kv_heads = kv_heads or heads
    d_k = D // heads
    q = _split(xq @ W_q, heads, d_k, split)
    k = _split(xk @ W_k, kv_heads, d_k, split)
    v = _split(xv @ W_v, kv_heads, d_k, split)
    group = heads // kv_heads
    index = np.arange(heads) // group if kv_map == "interleave" else np.arange(heads) % kv_heads
    k, v = k[:, index], v[:, index]
    denom = {"d_k": math.sqrt(d_k), "none": 1.0, "D": math.sqrt(D), "kv_width": math.sqrt(kv_heads * d_k),
             "twice": float(d_k)}[scale]
    s = q @ np.swapaxes(k, -1, -2) / denom
    keep = np.ones(s.shape, dtype=bool)
    if mask is not None:
        keep = np.broadcast_to(np.asarray(mask) != 0, s.shape)
        keep = keep if polarity else ~keep
    s = np.where(keep, s, -np.inf)
    m = np.max(s, axis=-1, keepdims=True)
    e = np.exp(s - np.where(np.isfinite(m), m, 0.0))
    tot = e.sum(axis=-1, keepdims=True)
    att = np.divide(e, tot, out=np.zeros_like(e), where=tot > 0)
    y = att @ v
    y = y.reshape(B, L_q, D) if split == "reshape" else y.transpose(0, 2, 1, 3).reshape(B, L_q, D)
    return y @ W_o if use_wo else y


MISTAKES = (
    ({"split": "reshape"}, "the heads were split with a reshape to (B, H, L, d_k) and no transpose; reshape "
                           "to (B, L, H, d_k), then swap axes 1 and 2 (and invert both when merging)."),
    ({"scale": "none"}, "the scores were not scaled: the output matches softmax(Q K^T) V instead of "
                        "softmax(Q K^T / sqrt(d_k)) V."),
    ({"scale": "D"}, "the scores were scaled by 1/sqrt(D) (the model width) instead of 1/sqrt(d_k) "
                     "(the per-head width D // num_heads)."),
    ({"polarity": False}, "the mask was applied with the opposite polarity: nonzero / True means "
                          "'may attend', 0 / False means 'masked out'."),
    ({"use_wo": False}, "the output projection W_o was not applied to the merged heads."),
    ({"scale": "twice"}, "the scores were divided by d_k (1/sqrt(d_k) applied twice) instead of by sqrt(d_k)."),
)


def _call_args(ctx: JudgeContext) -> dict:
    args = [ctx.arg(i) for i in range(len(ctx.step.wire["args"]))]
    return {"xq": args[0], "xk": args[1], "xv": args[2], "heads": args[3], "W_q": args[4], "W_k": args[5],
            "W_v": args[6], "W_o": args[7], "mask": args[8] if len(args) > 8 else None}


def name_mistake(ctx: JudgeContext, got: np.ndarray, tol: Tolerance, mistakes, call_args,
                 args_of=None) -> str | None:
    """The sentence of the one mistake whose float64 replay matches ``got`` (and not the answer), or
    None when none or several do: on a case where two mistakes give the same output (1/sqrt(D) and a
    double 1/sqrt(d_k) when num_heads == d_k) the case cannot tell them apart, so nothing is named.
    Every other call of the run must be right or that mistake's too (``right_or_variant_in_every_call``;
    ``args_of``: another call's arguments, default ``_call_args``)."""
    if got.shape != ctx.golden.arrays[ctx.golden.report["output"]["key"]].shape or not np.isfinite(got).all():
        # evidence: NaN only on fully masked rows, in this case and in every other call
        if nan_rows_fully_masked(got, call_args.get("mask")) and nan_rows_fully_masked_everywhere(
                ctx, lambda c: (args_of or _call_args)(c)["mask"]):
            return ("the output contains NaN: a query row whose keys are all masked must give weights 0 "
                    "and output 0 (a softmax over only -inf is NaN: exp(-inf - (-inf)), or 0/0 shifted by 0).")
        if np.isnan(got).any() and got.ndim == 3:
            return nan_symptom(got)
        return None
    golden = ctx.golden.arrays[ctx.golden.report["output"]["key"]]
    found = replayed_mistakes(ctx, got, golden, tol, mistakes, lambda c, switches: attention64(
        **(call_args if c is ctx else (args_of or _call_args)(c)), **switches))
    return found[0] if len(found) == 1 else None


def diagnose(ctx: JudgeContext, got: np.ndarray, tol: Tolerance) -> str | None:
    """Name the likely mistake behind a wrong multi-head attention output, or None."""
    return name_mistake(ctx, got, tol, MISTAKES, _call_args(ctx))


# -- cases -------------------------------------------------------------------------------------------

def padding_mask(rng: np.random.Generator, B: int, L_k: int, *, allow_empty: bool = False) -> np.ndarray:
    """(B, 1, 1, L_k) bool: the last ``n_pad`` keys of each sequence are padding."""
    keep = np.ones((B, 1, 1, L_k), dtype=bool)
    for b in range(B):
        n_pad = int(rng.integers(0, L_k + 1 if allow_empty else L_k))
        if n_pad:
            keep[b, ..., L_k - n_pad:] = False
    return keep


FULLY_MASKED_NAN = (
    "the gradient is NaN where a query row is fully masked, though the output is right: something computed "
    "for that row is NaN (the softmax of an all -inf row, or a 0/0 normalisation) and was repaired only "
    "after the fact (nan_to_num, torch.where), which fixes the output but not the backward pass. Keep masked "
    "rows finite: fill masked scores with a finite value such as torch.finfo(dtype).min, and set the weights "
    "of fully masked rows to 0 with torch.where.")


def _mask_of(ctx: JudgeContext) -> np.ndarray | None:
    for i, arg in enumerate(ctx.step.wire["args"]):
        if arg.get("label") == "mask":
            return np.asarray(ctx.arg(i))
    return None


def nonfinite_gradient(ctx: JudgeContext, label: str, got: np.ndarray) -> str | None:
    """Name the cause of NaN/inf in a gradient: a fully masked query row, when the case has one and
    (for the gradient of ``query``, which feeds only the query side) the non-finite entries lie only
    in such rows (a NaN forward output never gets here: ``gradients_close`` skips a case whose forward
    is wrong). None otherwise (no named mistake is better than a wrong one). In self-attention (gqa's ``x``) the NaN of a masked row
    reaches every row through the keys, so it cannot be localised."""
    mask = _mask_of(ctx)
    if mask is None:
        return None
    keep = (mask != 0).reshape((1,) * max(0, 4 - mask.ndim) + mask.shape)   # (B|1, H|1, L_q|1, L_k)
    empty = ~keep.any(axis=-1)                                              # (B|1, H|1, L_q|1)
    if not empty.any():
        return None
    if label == "query" and got.ndim == 3:
        rows = np.broadcast_to(empty.any(axis=1), got.shape[:2])            # (B, L_q) fully masked in a head
        bad = ~np.isfinite(got).all(axis=-1)                                # (B, L_q)
        if (bad & ~rows).any():
            return None
    return FULLY_MASKED_NAN


def causal_mask(L_q: int, L_k: int) -> np.ndarray:
    """(1, 1, L_q, L_k) bool, bottom-right aligned: query i sees keys j <= i + (L_k - L_q)."""
    i = np.arange(L_q)[:, None]
    j = np.arange(L_k)[None, :]
    return (j <= i + (L_k - L_q))[None, None]


class _Cases:
    """Adds cases to a ``PlanBuilder``; array names are numbered, so cases never collide."""

    def __init__(self, b: PlanBuilder, track: str = "torch"):
        self.b = b
        self.n = 0
        self.track = track

    def arg(self, name: str, value: np.ndarray, label: str, dtype: str | None = None, grad: bool = False) -> dict:
        """A tensor of ``dtype`` (torch track) or the array ``value`` itself (numpy track)."""
        if self.track == "numpy":
            return self.b.input(name, value, track="numpy", label=label)
        return self.b.tensor(name, value, dtype=dtype or value.dtype.name, requires_grad=grad, label=label)

    def add(self, check: str, rng: np.random.Generator, *, B: int, L_q: int, L_k: int | None = None, D: int,
            H: int, dtype: str = "float32", self_attn: bool = False, mask: np.ndarray | None = None,
            mask_dtype: str = "bool", grad: tuple[str, ...] = (), judge=None, note: str = "",
            scale: float = 1.0) -> None:
        self.n += 1
        n, b = self.n, self.b
        L_k = L_q if L_k is None else L_k
        x_q = rng.standard_normal((B, L_q, D)) * scale
        x_k = x_q if self_attn else rng.standard_normal((B, L_k, D)) * scale
        x_v = x_q if self_attn else rng.standard_normal((B, L_k, D)) * scale
        weights = [rng.standard_normal((D, D)) / math.sqrt(D) * 1.5 for _ in WEIGHTS]
        store = np.float64 if dtype == "float64" else np.float32
        rg = bool(grad)
        args = [self.arg(f"{label}{n}", a.astype(store), label, dtype, rg)
                for label, a in zip(INPUTS, (x_q, x_k, x_v))]
        args.append(b.value(H))
        args += [self.arg(f"{label}{n}", w.astype(store), label, dtype, rg)
                 for label, w in zip(WEIGHTS, weights)]
        mask_note = ""
        if mask is not None:
            stored = mask.astype(bool) if mask_dtype == "bool" else mask.astype(np.float64 if mask_dtype == "float64"
                                                                               else np.float32 if mask_dtype.startswith("float")
                                                                               else np.int64)
            args.append(self.arg(f"mask{n}", stored, "mask", mask_dtype))
            mask_note = f", mask {tuple(mask.shape)} {mask_dtype}"
        backward = None
        if grad:
            g = rng.standard_normal((B, L_q, D)).astype(store)
            b.array(f"grad_out{n}", g)
            backward = {"grad_output": f"grad_out{n}", "wrt": list(grad)}
        kind = "self-attention" if self_attn else "cross-attention" if L_k != L_q else "attention"
        describe = (f"{kind}: query ({B}, {L_q}, {D}), key/value ({B}, {L_k}, {D}), num_heads={H}, "
                    f"{dtype}{mask_note}" + (f", gradients of {', '.join(grad)}" if grad else "")
                    + (f", {note}" if note else ""))
        b.call(check, "multi_head_attention", args, judge=judge or close(diagnose=diagnose),
               describe=describe, backward=backward)

    def bad_heads(self, check: str, rng: np.random.Generator, *, D: int, H: int) -> None:
        self.n += 1
        n, b = self.n, self.b
        x = rng.standard_normal((2, 3, D)).astype(np.float32)
        args = [self.arg(f"{label}{n}", x, label) for label in INPUTS] + [b.value(H)]
        args += [self.arg(f"{label}{n}", (rng.standard_normal((D, D)) / math.sqrt(D)).astype(np.float32), label)
                 for label in WEIGHTS]
        b.call(check, "multi_head_attention", args, judge=raises("ValueError", when=f"D={D} % num_heads={H} != 0"),
               describe=f"query/key/value (2, 3, {D}), num_heads={H} (D % num_heads != 0)")


def build_plan(public_seed: int, hidden_seed: int, track: str = "torch") -> Plan:
    """Build the mha plan of ``track`` (``torch`` or ``numpy``): public cases from ``public_seed``,
    hidden ones from ``hidden_seed``. The numpy track has no half-precision or gradient cases.

    Raises:
        ValueError: an unknown track.
    """
    if track not in ("numpy", "torch"):
        raise ValueError(f"mha has no {track!r} track")
    torch_track = track == "torch"
    b = PlanBuilder()
    c = _Cases(b, track)
    rng = np.random.default_rng(public_seed)

    c.add("self_attention", rng, B=2, L_q=6, D=16, H=4, self_attn=True)
    c.add("self_attention", rng, B=3, L_q=5, D=8, H=2, self_attn=True)
    c.add("cross_attention", rng, B=2, L_q=3, L_k=7, D=16, H=4)
    c.add("cross_attention", rng, B=2, L_q=9, L_k=4, D=8, H=2)
    c.add("float64", rng, B=2, L_q=5, L_k=6, D=16, H=4, dtype="float64")
    c.add("float64", rng, B=1, L_q=7, D=12, H=3, dtype="float64", self_attn=True)
    c.add("single_head", rng, B=2, L_q=5, D=8, H=1, self_attn=True)
    c.add("single_head", rng, B=2, L_q=4, L_k=6, D=6, H=1)
    c.add("many_heads", rng, B=2, L_q=5, D=32, H=8, self_attn=True)
    c.add("many_heads", rng, B=2, L_q=4, L_k=5, D=6, H=6, note="d_k = 1")
    c.add("odd_width", rng, B=2, L_q=5, D=12, H=3, self_attn=True)
    c.add("odd_width", rng, B=2, L_q=4, L_k=6, D=20, H=5)
    c.add("odd_width", rng, B=1, L_q=6, D=18, H=6, self_attn=True)
    c.add("batch_one", rng, B=1, L_q=5, D=16, H=4, self_attn=True)
    c.add("batch_one", rng, B=1, L_q=2, L_k=8, D=8, H=2)
    c.add("padding_mask", rng, B=3, L_q=6, D=16, H=4, self_attn=True, mask=padding_mask(rng, 3, 6))
    c.add("padding_mask", rng, B=4, L_q=3, L_k=7, D=8, H=2, mask=padding_mask(rng, 4, 7))
    c.add("padding_mask", rng, B=3, L_q=5, L_k=8, D=16, H=4, mask=padding_mask(rng, 3, 8), scale=8.0,
          note="scores in the hundreds: masked keys often hold the largest score")
    c.add("causal_mask", rng, B=2, L_q=6, D=16, H=4, self_attn=True, mask=causal_mask(6, 6))
    c.add("causal_mask", rng, B=2, L_q=7, D=8, H=2, self_attn=True, mask=causal_mask(7, 7)[0, 0],
          note="mask of shape (L, L)")
    c.add("causal_mask", rng, B=2, L_q=3, L_k=8, D=8, H=2, mask=causal_mask(3, 8), note="bottom-right aligned")
    combined = causal_mask(6, 6) & padding_mask(rng, 2, 6)
    c.add("numeric_mask", rng, B=2, L_q=6, D=8, H=2, self_attn=True, mask=combined, mask_dtype="float32",
          note="mask of 0.0 / 1.0")
    c.add("numeric_mask", rng, B=3, L_q=4, L_k=5, D=8, H=2, mask=padding_mask(rng, 3, 5), mask_dtype="int64",
          note="mask of integer 0 / 1")
    c.add("numeric_mask", rng, B=2, L_q=5, D=8, H=2, self_attn=True, dtype="float64", mask=causal_mask(5, 5),
          mask_dtype="float64", note="mask of 0.0 / 1.0")
    own = np.random.default_rng(3)  # its own stream: the cases after it keep their inputs
    c.add("numeric_mask", own, B=2, L_q=5, L_k=6, D=8, H=2, mask=padding_mask(own, 2, 6) * np.int64(3),
          mask_dtype="int64", note="mask of integer 0 / 3: any nonzero value may attend, not only 1")
    empty = padding_mask(rng, 3, 5)
    empty[1] = False
    c.add("fully_masked_rows", rng, B=3, L_q=4, L_k=5, D=8, H=2, mask=empty, note="batch 1: every key masked")
    rows = np.ones((2, 1, 5, 5), dtype=bool)
    rows[0, 0, 2, :] = False
    rows[1, 0, 4, :] = False
    rows[1, 0, 0, 3:] = False
    c.add("fully_masked_rows", rng, B=2, L_q=5, D=8, H=2, self_attn=True, mask=rows, note="some query rows fully masked")
    if torch_track:
        for dtype in ("float16", "bfloat16"):
            c.add("half_precision", rng, B=2, L_q=6, D=16, H=4, dtype=dtype, self_attn=True)
            c.add("half_precision", rng, B=2, L_q=3, L_k=9, D=16, H=2, dtype=dtype)
        # Masked half-precision: bfloat16 only. In float16 a common idiom, masked_fill(-1e9), cannot be
        # represented and raises; the spec promises masks with float32/float64/bfloat16, not float16.
        c.add("half_precision", rng, B=2, L_q=6, D=16, H=4, dtype="bfloat16", self_attn=True,
              mask=causal_mask(6, 6) & padding_mask(rng, 2, 6), note="causal and padding mask")
    for dtype in ("float32", "float64", "float16", "bfloat16")[:4 if torch_track else 2]:
        c.add("dtype_preserved", rng, B=2, L_q=4, D=8, H=2, dtype=dtype, self_attn=True, judge=dtype_preserved())
    if torch_track:
        for dtype in ("float64", "float32"):
            c.add("grad_inputs", rng, B=2, L_q=5, L_k=6, D=8, H=2, dtype=dtype, grad=INPUTS,
                  judge=gradients_close(INPUTS))
        c.add("grad_inputs", rng, B=2, L_q=5, D=12, H=3, dtype="float64", grad=INPUTS, mask=padding_mask(rng, 2, 5),
              judge=gradients_close(INPUTS))
        for dtype in ("float64", "float32"):
            c.add("grad_weights", rng, B=2, L_q=5, L_k=6, D=8, H=2, dtype=dtype, grad=WEIGHTS,
                  judge=gradients_close(WEIGHTS))
        c.add("grad_weights", rng, B=2, L_q=6, D=12, H=3, dtype="float64", grad=WEIGHTS, mask=causal_mask(6, 6),
              judge=gradients_close(WEIGHTS))
        # Every forward condition that has a check has a gradient case too (issue 15), in one check.
        ALL = INPUTS + WEIGHTS
        edge = gradients_close(ALL, nonfinite=nonfinite_gradient)
        c.add("grad_edge_cases", rng, B=3, L_q=6, D=12, H=3, dtype="float64", self_attn=True, grad=ALL,
              mask=padding_mask(rng, 3, 6), judge=edge, note="padding mask")
        c.add("grad_edge_cases", rng, B=2, L_q=3, L_k=7, D=8, H=2, dtype="float64", grad=ALL,
              mask=causal_mask(3, 7), judge=edge, note="causal, bottom-right aligned")
        c.add("grad_edge_cases", rng, B=2, L_q=6, D=8, H=2, self_attn=True, grad=ALL, mask=causal_mask(6, 6)[0, 0],
              judge=edge, note="causal mask of shape (L, L)")
        c.add("grad_edge_cases", rng, B=2, L_q=6, D=8, H=2, dtype="float64", self_attn=True, grad=ALL,
              mask=causal_mask(6, 6) & padding_mask(rng, 2, 6), mask_dtype="float32", judge=edge,
              note="causal and padding, 0.0 / 1.0")
        c.add("grad_edge_cases", rng, B=3, L_q=4, L_k=5, D=8, H=2, dtype="float64", grad=ALL,
              mask=padding_mask(rng, 3, 5), mask_dtype="int64", judge=edge, note="integer 0 / 1 padding mask")
        rows = np.ones((2, 1, 5, 5), dtype=bool)
        rows[0, 0, 2, :] = False
        rows[1, 0, 4, :] = False
        rows[1, 0, 0, 3:] = False
        c.add("grad_edge_cases", rng, B=2, L_q=5, D=8, H=2, dtype="float64", self_attn=True, grad=ALL, mask=rows,
              judge=edge, note="some query rows fully masked")
        empty = padding_mask(rng, 3, 5)
        empty[1] = False
        c.add("grad_edge_cases", rng, B=3, L_q=4, L_k=5, D=8, H=2, grad=ALL, mask=empty, judge=edge,
              note="batch 1: every key masked")
        for dtype in ("float16", "bfloat16"):
            c.add("grad_edge_cases", rng, B=2, L_q=5, D=16, H=4, dtype=dtype, self_attn=True, grad=ALL, judge=edge)
        c.add("grad_edge_cases", rng, B=2, L_q=6, D=16, H=4, dtype="bfloat16", self_attn=True, grad=ALL,
              mask=causal_mask(6, 6) & padding_mask(rng, 2, 6), judge=edge, note="causal and padding mask")
    unchanged = inputs_unchanged()
    c.add("inputs_unchanged", rng, B=2, L_q=5, D=8, H=2, self_attn=True, judge=unchanged)
    c.add("inputs_unchanged", rng, B=2, L_q=3, L_k=6, D=12, H=3, dtype="float64", mask=padding_mask(rng, 2, 6),
          judge=unchanged)
    # numeric masks too, on their own stream (later cases keep their inputs): turning the caller's 0/1
    # float mask into an additive -inf bias in place went unseen with bool masks only
    keep_rng = np.random.default_rng([public_seed, 17])
    c.add("inputs_unchanged", keep_rng, B=2, L_q=4, L_k=5, D=8, H=2, mask=padding_mask(keep_rng, 2, 5),
          mask_dtype="float32", judge=unchanged, note="0.0 / 1.0 float mask")
    c.add("inputs_unchanged", keep_rng, B=2, L_q=5, D=8, H=2, dtype="float64", self_attn=True,
          mask=causal_mask(5, 5), mask_dtype="int64", judge=unchanged, note="0 / 1 integer mask")
    c.bad_heads("bad_num_heads", rng, D=10, H=4)
    c.bad_heads("bad_num_heads", rng, D=8, H=3)

    # Hidden cases: the same kinds at every seed (heads, dtype, mask kind and mask dtype, L_q != L_k,
    # d_k != num_heads so that d_k^2 != D); the seed draws only B, the lengths, d_k and the values.
    hidden = np.random.default_rng(hidden_seed)
    kinds = [(2, "float64", None, "bool"), (4, "float32", "padding", "bool"), (3, "float64", "causal", "float32"),
             (6, "float32", None, "float32"), (2, "float64", "padding", "float32"), (4, "float32", "causal", "bool")]
    for i, (H, dtype, mask_kind, mask_dtype) in enumerate(kinds):
        d_k = int(hidden.choice([d for d in (2, 3, 4, 5, 6) if d != H]))
        D, B = H * d_k, int(hidden.integers(2, 5))
        L_q = int(hidden.integers(2, 7))
        L_k = L_q + int(hidden.integers(1, 4))
        mask = None
        if mask_kind == "padding":
            mask = padding_mask(hidden, B, L_k)
            mask[0, ..., -1] = False  # at least one padded key, whatever the seed
            mask[1] = True            # and samples 0 and 1 differ: a mask mixed across samples always shows
        elif mask_kind == "causal":
            mask = causal_mask(L_q, L_k)
        c.add("hidden_values", hidden, B=B, L_q=L_q, L_k=L_k, D=D, H=H, dtype=dtype, mask=mask,
              mask_dtype=mask_dtype)
        if i < 2 and torch_track:
            c.add("hidden_gradients", hidden, B=B, L_q=L_q, L_k=L_k, D=D, H=H, dtype=dtype, mask=mask,
                  grad=INPUTS + WEIGHTS, judge=gradients_close(INPUTS + WEIGHTS))
    # numeric masks in the hidden cases too, as in the public ones: integer 0/1 and 0/3, float 0/0.5/-2.0
    # (padding, causal, padding), drawn after every case above so that those keep their inputs
    for kind, H, dtype in zip(NUMERIC_MASK_KINDS, (2, 3, 4), ("float32", "float64", "float32")):
        d_k = int(hidden.choice([d for d in (2, 3, 4, 5, 6) if d != H]))
        D, B, L_q = H * d_k, int(hidden.integers(2, 5)), int(hidden.integers(2, 7))
        L_k = L_q + int(hidden.integers(1, 4))
        if kind.startswith("0/3"):
            allowed = causal_mask(L_q, L_k)
        else:
            allowed = padding_mask(hidden, B, L_k)
            allowed[0, ..., -1] = False  # at least one padded key, whatever the seed
            allowed[1] = True            # samples 0 and 1 differ, as above
        mask, mask_dtype = numeric_mask(allowed, kind, hidden)
        c.add("hidden_values", hidden, B=B, L_q=L_q, L_k=L_k, D=D, H=H, dtype=dtype, mask=mask,
              mask_dtype=mask_dtype, note=f"mask of {kind}")
    return b.plan


def probe_steps(b: PlanBuilder, probe, size: int, rng: np.random.Generator, track: str = "torch") -> None:
    """Steps of the FLOPs probe at ``seq_len=size``: self-attention, batch 1, d_model 64, 8 heads, float32
    (tensors, or arrays in the numpy track). Two calls per size, the two paths of the algorithm: no mask,
    and a causal ``(1, 1, size, size)`` bool mask; the probe sums what both measured, so work that grows on
    the masked path only grows the sum too."""
    B, D, H = 1, 64, 8
    for masked in (False, True):
        x = rng.standard_normal((B, size, D)).astype(np.float32)
        tag = f"probe{size}{'m' if masked else ''}"
        args = [b.input(f"{tag}_{label}", x, track=track, label=label) for label in INPUTS] + [b.value(H)]
        args += [b.input(f"{tag}_{label}", (rng.standard_normal((D, D)) / math.sqrt(D)).astype(np.float32),
                         track=track, label=label) for label in WEIGHTS]
        if masked:
            args.append(b.input(f"{tag}_mask", np.tril(np.ones((1, 1, size, size), dtype=bool)), track=track,
                                label="mask"))
        b.call(probe.check, "multi_head_attention", args, measure=probe.measure(),
               meta={"probe": probe.check, "size": size, "path": "masked" if masked else "unmasked"},
               describe=f"self-attention: query/key/value (1, {size}, {D}), num_heads={H}, float32, "
                        + ("causal bool mask" if masked else "no mask"))
