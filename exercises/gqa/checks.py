"""Host-side checks for `gqa`: the plan of public and hidden cases, and how each is judged.

Every case calls ``grouped_query_attention(x, W_q, W_k, W_v, W_o, num_query_heads, num_kv_heads[,
mask])`` with every argument positional and compares with the float64 golden answer under the
dtype-aware tolerance. Diagnoses replay the usual mistakes with the float64 model of the ``mha``
exercise (``attention64``), including query heads mapped to KV heads with ``repeat`` (head h ->
h % H_kv) instead of ``repeat_interleave`` (h -> h // group). The ``head_mapping`` cases give the KV
heads very different value scales, so the wrong mapping is far from the right answer.

Two tracks (``build_plan(..., track=...)``): ``torch`` (the default) hands over tensors and grades
gradients and half precision; ``numpy`` hands over arrays of the same values and grades values only
(no ``half_precision``, ``grad_input``, ``grad_weights``, ``hidden_gradients``: ``drop_checks``).
"""

from __future__ import annotations

import importlib.util
import math
from pathlib import Path

import numpy as np

from grader.judge.judges import (JudgeContext, close, dtype_preserved, gradients_close,
                           inputs_unchanged, raises)
from grader.run.plan import NUMERIC_MASK_KINDS, Plan, PlanBuilder, numeric_mask
from grader.judge.tolerance import Tolerance


def _mha_checks():
    path = Path(__file__).resolve().parent.parent / "mha" / "checks.py"
    spec = importlib.util.spec_from_file_location("grader_exercise_checks_mha_model", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


_MHA = _mha_checks()
padding_mask, causal_mask = _MHA.padding_mask, _MHA.causal_mask
nonfinite_gradient = _MHA.nonfinite_gradient
WEIGHTS = ("W_q", "W_k", "W_v", "W_o")

MISTAKES = (
    ({"kv_map": "repeat"}, "query head h used KV head h % num_kv_heads (the mapping `repeat` gives) instead of "
                           "h // (num_query_heads // num_kv_heads) (`repeat_interleave`: consecutive query "
                           "heads share one)."),
    ({"scale": "kv_width"}, "the scores were scaled by 1/sqrt(num_kv_heads * d_k) (the width of the K "
                            "projection) instead of 1/sqrt(d_k) with d_k = D // num_query_heads."),
    *_MHA.MISTAKES,
)


def _call_args(ctx: JudgeContext) -> dict:
    args = [ctx.arg(i) for i in range(len(ctx.step.wire["args"]))]
    x = args[0]
    return {"xq": x, "xk": x, "xv": x, "W_q": args[1], "W_k": args[2], "W_v": args[3], "W_o": args[4],
            "heads": args[5], "kv_heads": args[6], "mask": args[7] if len(args) > 7 else None}


def diagnose(ctx: JudgeContext, got: np.ndarray, tol: Tolerance) -> str | None:
    """Name the likely mistake behind a wrong grouped-query attention output, or None."""
    return _MHA.name_mistake(ctx, got, tol, MISTAKES, _call_args(ctx), _call_args)


class _Cases:
    def __init__(self, b: PlanBuilder, track: str = "torch"):
        self.b = b
        self.n = 0
        self.track = track

    def arg(self, name: str, value: np.ndarray, label: str, dtype: str | None = None, grad: bool = False) -> dict:
        """A tensor of ``dtype`` (torch track) or the array ``value`` itself (numpy track)."""
        if self.track == "numpy":
            return self.b.input(name, value, track="numpy", label=label)
        return self.b.tensor(name, value, dtype=dtype or value.dtype.name, requires_grad=grad, label=label)

    def add(self, check: str, rng: np.random.Generator, *, B: int, L: int, D: int, H_q: int, H_kv: int,
            dtype: str = "float32", mask: np.ndarray | None = None, mask_dtype: str = "bool",
            grad: tuple[str, ...] = (), judge=None, kv_scales: list[float] | None = None, note: str = "",
            kv_width: int | None = None, scale: float = 1.0) -> None:
        self.n += 1
        n, b = self.n, self.b
        d_k = D // H_q if D % H_q == 0 else max(1, D // H_q)
        kv_width = kv_width or H_kv * d_k
        store = np.float64 if dtype == "float64" else np.float32
        x = rng.standard_normal((B, L, D)) * scale
        s = 1.5 / math.sqrt(D)
        W = {"W_q": rng.standard_normal((D, D)) * s, "W_k": rng.standard_normal((D, kv_width)) * s,
             "W_v": rng.standard_normal((D, kv_width)) * s, "W_o": rng.standard_normal((D, D)) * s}
        if kv_scales:  # make KV heads clearly different from each other
            for h, scale in enumerate(kv_scales):
                W["W_v"][:, h * d_k:(h + 1) * d_k] *= scale
                W["W_k"][:, h * d_k:(h + 1) * d_k] *= abs(scale) ** 0.5
        rg = bool(grad)
        args = [self.arg(f"x{n}", x.astype(store), "x", dtype, rg)]
        args += [self.arg(f"{k}{n}", w.astype(store), k, dtype, rg) for k, w in W.items()]
        args += [b.value(H_q), b.value(H_kv)]
        mask_note = ""
        if mask is not None:
            stored = mask.astype(bool) if mask_dtype == "bool" else mask.astype(
                np.int64 if mask_dtype.startswith("int") else np.float32)
            args.append(self.arg(f"mask{n}", stored, "mask", mask_dtype))
            mask_note = f", mask {tuple(mask.shape)} {mask_dtype}"
        backward = None
        if grad:
            b.array(f"grad_out{n}", rng.standard_normal((B, L, D)).astype(store))
            backward = {"grad_output": f"grad_out{n}", "wrt": list(grad)}
        describe = (f"x ({B}, {L}, {D}), num_query_heads={H_q}, num_kv_heads={H_kv}, {dtype}{mask_note}"
                    + (f", gradients of {', '.join(grad)}" if grad else "") + (f", {note}" if note else ""))
        b.call(check, "grouped_query_attention", args, judge=judge or close(diagnose=diagnose),
               describe=describe, backward=backward)


def build_plan(public_seed: int, hidden_seed: int, track: str = "torch") -> Plan:
    """Build the gqa plan of ``track`` (``torch`` or ``numpy``): public cases from ``public_seed``,
    hidden ones from ``hidden_seed``. The numpy track has no half-precision or gradient cases.

    Raises:
        ValueError: an unknown track.
    """
    if track not in ("numpy", "torch"):
        raise ValueError(f"gqa has no {track!r} track")
    torch_track = track == "torch"
    b = PlanBuilder()
    c = _Cases(b, track)
    rng = np.random.default_rng(public_seed)

    c.add("values", rng, B=2, L=6, D=16, H_q=4, H_kv=2)
    c.add("values", rng, B=2, L=5, D=24, H_q=6, H_kv=3)
    c.add("values", rng, B=3, L=4, D=16, H_q=8, H_kv=2)
    c.add("float64", rng, B=2, L=5, D=16, H_q=4, H_kv=2, dtype="float64")
    c.add("float64", rng, B=1, L=7, D=12, H_q=6, H_kv=2, dtype="float64")
    c.add("equals_mha", rng, B=2, L=5, D=16, H_q=4, H_kv=4, note="num_kv_heads == num_query_heads (plain MHA)")
    c.add("equals_mha", rng, B=2, L=4, D=8, H_q=1, H_kv=1, dtype="float64", note="one head")
    c.add("mqa", rng, B=2, L=6, D=16, H_q=4, H_kv=1, note="multi-query attention")
    c.add("mqa", rng, B=1, L=5, D=24, H_q=8, H_kv=1, dtype="float64", note="multi-query attention")
    c.add("head_mapping", rng, B=2, L=5, D=16, H_q=4, H_kv=2, kv_scales=[1.0, -4.0],
          note="KV heads with very different value scales")
    c.add("head_mapping", rng, B=2, L=6, D=24, H_q=6, H_kv=2, kv_scales=[0.25, 4.0], dtype="float64",
          note="KV heads with very different value scales, groups of 3")
    c.add("head_mapping", rng, B=1, L=4, D=16, H_q=8, H_kv=4, kv_scales=[1.0, -3.0, 0.3, 6.0],
          note="KV heads with very different value scales")
    c.add("masks", rng, B=2, L=6, D=16, H_q=4, H_kv=2, mask=causal_mask(6, 6), note="causal")
    c.add("masks", rng, B=3, L=5, D=12, H_q=6, H_kv=3, mask=padding_mask(rng, 3, 5), note="padding")
    c.add("masks", rng, B=3, L=7, D=16, H_q=4, H_kv=2, mask=padding_mask(rng, 3, 7), scale=8.0,
          note="padding, scores in the hundreds: masked keys often hold the largest score")
    c.add("masks", rng, B=2, L=6, D=16, H_q=4, H_kv=2, mask=causal_mask(6, 6) & padding_mask(rng, 2, 6),
          mask_dtype="float32", note="causal and padding, 0.0 / 1.0")
    c.add("masks", rng, B=2, L=5, D=8, H_q=4, H_kv=2, mask=causal_mask(5, 5)[0, 0], mask_dtype="int64",
          note="(L, L) integer 0 / 1")
    own = np.random.default_rng(3)  # its own stream: the cases after it keep their inputs
    c.add("masks", own, B=2, L=6, D=16, H_q=4, H_kv=2, mask=(causal_mask(6, 6) & padding_mask(own, 2, 6)) * np.int64(3),
          mask_dtype="int64", note="integer 0 / 3: any nonzero value may attend, not only 1")
    c.add("masks", own, B=2, L=5, D=8, H_q=4, H_kv=1, mask=causal_mask(5, 5)[0, 0] * own.choice([0.5, -2.0], size=(5, 5)),
          mask_dtype="float32", note="(L, L) 0.0 / 0.5 / -2.0: any nonzero value may attend, negative ones too")
    rows = np.ones((2, 1, 5, 5), dtype=bool)
    rows[0, 0, 1, :] = False
    rows[1, :, :, :] = False
    c.add("fully_masked_rows", rng, B=2, L=5, D=16, H_q=4, H_kv=2, mask=rows,
          note="query row 1 of batch 0 and all of batch 1 fully masked")
    if torch_track:
        for dtype in ("float16", "bfloat16"):
            c.add("half_precision", rng, B=2, L=6, D=16, H_q=4, H_kv=2, dtype=dtype)
        # Masked half-precision: bfloat16 only (float16 cannot hold the common masked_fill(-1e9)).
        c.add("half_precision", rng, B=2, L=6, D=16, H_q=4, H_kv=2, dtype="bfloat16",
              mask=causal_mask(6, 6) & padding_mask(rng, 2, 6), note="causal and padding mask")
    for dtype in ("float32", "float64", "float16", "bfloat16")[:4 if torch_track else 2]:
        c.add("dtype_preserved", rng, B=2, L=4, D=8, H_q=4, H_kv=2, dtype=dtype, judge=dtype_preserved())
    if torch_track:
        for dtype in ("float64", "float32"):
            c.add("grad_input", rng, B=2, L=5, D=16, H_q=4, H_kv=2, dtype=dtype, grad=("x",),
                  judge=gradients_close(("x",)))
        c.add("grad_input", rng, B=2, L=6, D=12, H_q=6, H_kv=2, dtype="float64", grad=("x",), mask=causal_mask(6, 6),
              judge=gradients_close(("x",)))
        for dtype in ("float64", "float32"):
            c.add("grad_weights", rng, B=2, L=5, D=16, H_q=4, H_kv=2, dtype=dtype, grad=WEIGHTS,
                  judge=gradients_close(WEIGHTS))
        c.add("grad_weights", rng, B=2, L=5, D=16, H_q=4, H_kv=1, dtype="float64", grad=WEIGHTS,
              mask=padding_mask(rng, 2, 5), judge=gradients_close(WEIGHTS), note="MQA")
        # Every forward condition that has a check has a gradient case too (issue 15), in one check.
        ALL = ("x",) + WEIGHTS
        edge = gradients_close(ALL, nonfinite=nonfinite_gradient)
        c.add("grad_edge_cases", rng, B=2, L=6, D=16, H_q=4, H_kv=2, dtype="float64", grad=ALL, mask=causal_mask(6, 6),
              judge=edge, note="causal")
        c.add("grad_edge_cases", rng, B=3, L=5, D=12, H_q=6, H_kv=3, dtype="float64", grad=ALL,
              mask=padding_mask(rng, 3, 5), judge=edge, note="padding")
        c.add("grad_edge_cases", rng, B=2, L=6, D=16, H_q=4, H_kv=2, grad=ALL,
              mask=causal_mask(6, 6) & padding_mask(rng, 2, 6), mask_dtype="float32", judge=edge,
              note="causal and padding, 0.0 / 1.0")
        c.add("grad_edge_cases", rng, B=2, L=5, D=8, H_q=4, H_kv=2, dtype="float64", grad=ALL,
              mask=causal_mask(5, 5)[0, 0], mask_dtype="int64", judge=edge, note="(L, L) integer 0 / 1")
        c.add("grad_edge_cases", rng, B=2, L=5, D=16, H_q=4, H_kv=1, dtype="float64", grad=ALL, mask=rows,
              judge=edge, note="MQA; query row 1 of batch 0 and all of batch 1 fully masked")
        c.add("grad_edge_cases", rng, B=2, L=5, D=16, H_q=4, H_kv=2, dtype="float64", grad=ALL, mask=rows,
              judge=edge, note="query row 1 of batch 0 and all of batch 1 fully masked")
        for dtype in ("float16", "bfloat16"):
            c.add("grad_edge_cases", rng, B=2, L=5, D=16, H_q=4, H_kv=2, dtype=dtype, grad=ALL, judge=edge)
        c.add("grad_edge_cases", rng, B=2, L=6, D=16, H_q=4, H_kv=2, dtype="bfloat16", grad=ALL,
              mask=causal_mask(6, 6) & padding_mask(rng, 2, 6), judge=edge, note="causal and padding mask")
    unchanged = inputs_unchanged()
    c.add("inputs_unchanged", rng, B=2, L=5, D=16, H_q=4, H_kv=2, judge=unchanged)
    c.add("inputs_unchanged", rng, B=2, L=5, D=12, H_q=6, H_kv=3, dtype="float64", mask=causal_mask(5, 5),
          judge=unchanged)
    c.add("bad_group", rng, B=2, L=3, D=16, H_q=4, H_kv=3, note="num_query_heads % num_kv_heads != 0",
          judge=raises("ValueError", when="num_query_heads % num_kv_heads != 0"))
    c.add("bad_group", rng, B=2, L=3, D=24, H_q=6, H_kv=4, note="num_query_heads % num_kv_heads != 0",
          judge=raises("ValueError", when="num_query_heads % num_kv_heads != 0"))
    c.add("bad_num_heads", rng, B=2, L=3, D=10, H_q=4, H_kv=2, kv_width=4, note="D % num_query_heads != 0",
          judge=raises("ValueError", when="D % num_query_heads != 0"))

    # Hidden cases: the same kinds at every seed (query and KV heads with groups >= 2 and one MQA,
    # dtype, mask kind, num_kv_heads != d_k != num_query_heads); the seed draws B, L, d_k and the values.
    hidden = np.random.default_rng(hidden_seed)
    kinds = [(4, 2, "float64", None), (6, 2, "float32", "padding"), (8, 2, "float64", "causal"),
             (4, 1, "float32", None), (6, 3, "float64", "padding"), (8, 4, "float32", "causal")]
    for i, (H_q, H_kv, dtype, mask_kind) in enumerate(kinds):
        d_k = int(hidden.choice([d for d in (2, 3, 4, 5, 6) if d not in (H_q, H_kv)]))
        D, B, L = H_q * d_k, int(hidden.integers(2, 5)), int(hidden.integers(2, 8))
        mask = None
        if mask_kind == "padding":
            mask = padding_mask(hidden, B, L)
            mask[0, ..., -1] = False  # at least one padded key, whatever the seed
            mask[1] = True            # and samples 0 and 1 differ: a mask mixed across samples always shows
        elif mask_kind == "causal":
            mask = causal_mask(L, L)
        c.add("hidden_values", hidden, B=B, L=L, D=D, H_q=H_q, H_kv=H_kv, dtype=dtype, mask=mask)
        if i < 2 and torch_track:
            c.add("hidden_gradients", hidden, B=B, L=L, D=D, H_q=H_q, H_kv=H_kv, dtype=dtype, mask=mask,
                  grad=("x",) + WEIGHTS, judge=gradients_close(("x",) + WEIGHTS))
    # numeric masks in the hidden cases too, as in the public ones: integer 0/1 and 0/3, float 0/0.5/-2.0
    # (padding, causal, padding), drawn after every case above so that those keep their inputs
    for kind, (H_q, H_kv), dtype in zip(NUMERIC_MASK_KINDS, ((4, 2), (6, 3), (8, 2)), ("float32", "float64", "float32")):
        d_k = int(hidden.choice([d for d in (2, 3, 4, 5, 6) if d not in (H_q, H_kv)]))
        D, B, L = H_q * d_k, int(hidden.integers(2, 5)), int(hidden.integers(2, 8))
        if kind.startswith("0/3"):
            allowed = causal_mask(L, L)
        else:
            allowed = padding_mask(hidden, B, L)
            allowed[0, ..., -1] = False  # at least one padded key, whatever the seed
            allowed[1] = True            # samples 0 and 1 differ, as above
        mask, mask_dtype = numeric_mask(allowed, kind, hidden)
        c.add("hidden_values", hidden, B=B, L=L, D=D, H_q=H_q, H_kv=H_kv, dtype=dtype, mask=mask,
              mask_dtype=mask_dtype, note=f"mask of {kind}")
    return b.plan


def probe_steps(b: PlanBuilder, probe, size: int, rng: np.random.Generator, track: str = "torch") -> None:
    """Steps of the K/V FLOPs probe at ``seq_len=size``: GQA with d_model 128 and 8 query heads, where
    the projections dominate. Three calls per size, the paths of the algorithm: MQA (1 KV head) with no
    mask and with a causal ``(size, size)`` bool mask, and a batch of two at 2 KV heads (a program whose
    K/V work depends on the batch or on num_kv_heads > 1: weights expanded only when there is more than
    one KV head, keys re-projected per sample; helper hunt, issue 24). The probe sums what they measured,
    so K/V projected at full width on one path only grows the sum too (at 2 KV heads by 4x on that path,
    3x over the sum)."""
    D, H_q = 128, 8
    d_k = D // H_q
    for masked, B, H_kv in ((False, 1, 1), (True, 1, 1), (False, 2, 2)):
        path = "masked" if masked else "unmasked" if H_kv == 1 else "batched"
        tag = f"probe{size}{'m' if masked else 'b' if B > 1 else ''}"
        args = [b.input(f"{tag}_x", rng.standard_normal((B, size, D)).astype(np.float32), track=track, label="x")]
        for name, width in (("W_q", D), ("W_k", H_kv * d_k), ("W_v", H_kv * d_k), ("W_o", D)):
            args.append(b.input(f"{tag}_{name}", (rng.standard_normal((D, width)) / math.sqrt(D)).astype(np.float32),
                                track=track, label=name))
        args += [b.value(H_q), b.value(H_kv)]
        if masked:
            args.append(b.input(f"{tag}_mask", np.tril(np.ones((size, size), dtype=bool)), track=track, label="mask"))
        b.call(probe.check, "grouped_query_attention", args, measure=probe.measure(),
               meta={"probe": probe.check, "size": size, "path": path},
               describe=f"x ({B}, {size}, {D}), num_query_heads={H_q}, num_kv_heads={H_kv}, float32, "
                        + ("causal bool mask" if masked else "no mask"))
