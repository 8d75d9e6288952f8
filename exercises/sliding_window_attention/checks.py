"""Host-side checks for `sliding_window_attention`: the plan of public and hidden cases, the probes'
steps, and how each case is judged.

Every case calls ``sliding_window_attention(query, key, value, window, causal[, mask])`` with
positional arguments and compares with the float64 golden answer under the dtype-aware tolerance.
Windows are small next to the lengths (1-6 on lengths up to 40), so that every row's band is a
strict part of the keys and the band's two edges, the ragged ends of the sequence and the
bottom-right alignment all show. ``full_window`` also compares the reference with full (causal)
attention computed here independently (``full_attention64``): a window at least as long as the
sequence is the whole of attention. Mistakes are named by the bank (``mistakes/``,
``mistakes_numpy/``) through replay; this module names only NaN on rows that see no key.

The probes call the function at ``L = L_q = L_k`` on four paths (causal and not, with and without a
padding mask) at a fixed window: a path that builds an ``L x L`` matrix makes the summed cost grow
like ``L^2`` where the reference's grows like ``L * window``.
"""

from __future__ import annotations

import math

import numpy as np

from grader.judge.judges import (GraderBug, JudgeContext, Outcome, close, nan_confined_in_every_call, dtype_preserved, gradients_close,
                                 inputs_unchanged, raises)
from grader.run.plan import Plan, PlanBuilder

INPUTS = ("query", "key", "value")


# -- an independent float64 model (host only) ---------------------------------------------------------

def band64(L_q: int, L_k: int, window: int, causal: bool) -> np.ndarray:
    """(L_q, L_k) bool: key j is in query i's window; query i sits at p = i + L_k - L_q (bottom-right),
    and sees p - window < j <= p when ``causal``, |p - j| < window when not."""
    p = np.arange(L_q)[:, None] + (L_k - L_q)
    j = np.arange(L_k)[None, :]
    return ((j <= p) & (j > p - window)) if causal else (np.abs(p - j) < window)


def full_attention64(query, key, value, keep=None) -> np.ndarray:
    """softmax(q k^T / sqrt(d_k)) v over the keys ``keep`` allows (all: None), in float64 NumPy, written
    without any window (the dense formula); rows that see no key are 0.

    Args:
        query: (B, H, L_q, d_k); key: (B, H, L_k, d_k); value: (B, H, L_k, d_v).
        keep: None or bool broadcastable to (B, H, L_q, L_k).

    Returns:
        (B, H, L_q, d_v) float64.
    """
    q, k, v = (np.asarray(a, dtype=np.float64) for a in (query, key, value))
    s = q @ np.swapaxes(k, -1, -2) / math.sqrt(q.shape[-1])                   # (B, H, L_q, L_k)
    if keep is not None:
        s = np.where(keep, s, -np.inf)
    m = s.max(axis=-1, keepdims=True)
    e = np.exp(s - np.where(np.isfinite(m), m, 0.0))
    z = e.sum(axis=-1, keepdims=True)
    return (e / np.where(z > 0, z, 1.0)) @ v


def _call(ctx: JudgeContext) -> dict:
    args = ctx.step.wire["args"]
    return {"query": ctx.arg(0), "key": ctx.arg(1), "value": ctx.arg(2), "window": ctx.arg(3),
            "causal": ctx.arg(4), "mask": ctx.arg(5) if len(args) > 5 else None}


def _keep(call: dict) -> np.ndarray:
    """(B|1, H|1, L_q, L_k) bool: what the contract lets each query see (band and mask)."""
    L_q, L_k = call["query"].shape[-2], call["key"].shape[-2]
    keep = band64(L_q, L_k, call["window"], call["causal"])
    if call["mask"] is not None:
        keep = keep & (np.asarray(call["mask"]) != 0)
    return keep.reshape((1,) * max(0, 4 - keep.ndim) + keep.shape)


NAN_EMPTY_ROWS = ("the output contains NaN on rows that see no key (every key of the window masked, or "
                  "outside the sequence): such a row must give 0; guard the max of an all -inf row and the "
                  "division by a zero sum.")


def _nan_on_empty_rows(ctx: JudgeContext, got: np.ndarray) -> bool:
    """Whether ``got`` (B, H, L_q, d) has NaN and every row holding it sees no key."""
    sees = np.broadcast_to(_keep(_call(ctx)).any(axis=-1), got.shape[:-1])     # (B, H, L_q)
    nan_rows = np.isnan(got).any(axis=-1)
    return bool(nan_rows.any() and not (nan_rows & sees).any())


def diagnose(ctx: JudgeContext, got: np.ndarray, tol) -> str | None:
    """Name NaN confined to rows that see no key, in this call and every other that gave NaN
    (``nan_confined_in_every_call``); None otherwise (the bank names the rest by replay)."""
    if not np.isnan(got).any():
        return None
    return NAN_EMPTY_ROWS if _nan_on_empty_rows(ctx, got) and nan_confined_in_every_call(ctx, _nan_on_empty_rows) else None


def full_window_judge():
    """Judge of ``full_window``: the case's golden answer must equal full (causal) attention computed
    here without a window (a ``GraderBug`` otherwise: the reference broke the contract), then the
    candidate is judged against it as every case is."""
    judge_values = close(diagnose=diagnose)

    def judge(ctx: JudgeContext) -> Outcome:
        call = _call(ctx)
        L_q, L_k = call["query"].shape[-2], call["key"].shape[-2]
        keep = np.ones((L_q, L_k), dtype=bool)
        if call["causal"]:
            keep = np.arange(L_k)[None, :] <= np.arange(L_q)[:, None] + (L_k - L_q)
        if call["mask"] is not None:
            keep = keep & (np.asarray(call["mask"]) != 0)
        full = full_attention64(call["query"], call["key"], call["value"], keep)
        golden = ctx.golden.arrays[ctx.golden.report["output"]["key"]]
        if not np.allclose(golden, full, rtol=1e-10, atol=1e-12):
            raise GraderBug(f"step {ctx.step.id}: the reference with window >= L differs from full attention "
                            f"by {np.abs(golden - full).max():.3g}")
        return judge_values(ctx)

    return judge


# -- cases -------------------------------------------------------------------------------------------

def _input(b: PlanBuilder, track: str, name: str, value: np.ndarray, dtype: str, label: str,
           requires_grad: bool = False) -> dict:
    if track == "numpy":  # arrays carry their own dtype (float16 included)
        return b.input(name, value.astype(dtype) if dtype == "float16" else value, track="numpy", label=label)
    return b.tensor(name, value, dtype=dtype, requires_grad=requires_grad, label=label)


def padding_mask(rng: np.random.Generator, B: int, L_k: int, pads: int) -> np.ndarray:
    """(B, 1, 1, L_k) bool: batch item b keeps its first ``L_k - n_b`` keys, n_0 = 0 and the others
    1..pads (right padding)."""
    keep = np.ones((B, 1, 1, L_k), dtype=bool)
    for bi in range(1, B):
        keep[bi, ..., L_k - int(rng.integers(1, pads + 1)):] = False
    return keep


def scattered_mask(rng: np.random.Generator, shape: tuple[int, ...], L_q: int, L_k: int,
                   values: tuple[float, ...] = (1.0,)) -> np.ndarray:
    """A random mask of ``shape`` (its last two axes (L_q, L_k)) with about a third of the keys hidden,
    nonzero entries drawn from ``values``; each query's own position ``i + L_k - L_q`` is kept, so no row
    is empty."""
    hide = rng.random(shape) < 0.35
    own = np.arange(L_q) + (L_k - L_q)
    hide[..., np.arange(L_q), own] = False
    picked = np.asarray(values, dtype=np.float64)[rng.integers(0, len(values), size=shape)]
    return np.where(hide, 0.0, picked)


class _Cases:
    """Adds cases to a ``PlanBuilder``; array names are numbered, so cases never collide."""

    def __init__(self, b: PlanBuilder, track: str = "torch"):
        self.b = b
        self.n = 0
        self.track = track

    def add(self, check: str, rng: np.random.Generator, *, B: int, H: int, L_q: int, L_k: int | None = None,
            d: int = 8, d_v: int | None = None, window: int = 3, causal: bool = True, dtype: str = "float32",
            mask: np.ndarray | None = None, mask_dtype: str = "bool", grad: tuple[str, ...] = (), judge=None,
            scale: float = 1.0, attract: float = 0.0, note: str = "") -> None:
        self.n += 1
        n, b = self.n, self.b
        L_k = L_q if L_k is None else L_k
        d_v = d if d_v is None else d_v
        q = rng.standard_normal((B, H, L_q, d)) * scale
        k = rng.standard_normal((B, H, L_k, d)) * scale
        if attract:  # q and k share one direction: every score is about attract**2 / sqrt(d), spread ~1
            u = rng.standard_normal(d)
            u /= np.linalg.norm(u)
            q, k = q + attract * u, k + attract * u
        v = rng.standard_normal((B, H, L_k, d_v))
        store = np.float64 if dtype == "float64" else np.float32
        args = [_input(b, self.track, f"{label}{n}", a.astype(store), dtype, label, label in grad)
                for label, a in zip(INPUTS, (q, k, v))]
        args += [b.value(window), b.value(causal)]
        mask_note = ""
        if mask is not None:
            stored = mask.astype({"bool": bool, "float32": np.float32, "float64": np.float64,
                                  "int64": np.int64}[mask_dtype])
            args.append(b.input(f"mask{n}", stored, track=self.track, label="mask"))
            values = sorted({float(x) for x in np.unique(stored)})
            mask_note = f", mask {tuple(mask.shape)} {mask_dtype}" + ("" if mask_dtype == "bool" else
                                                                      f" of {'/'.join(f'{x:g}' for x in values)}")
        backward = None
        if grad:
            b.array(f"grad_out{n}", rng.standard_normal((B, H, L_q, d_v)).astype(store))
            backward = {"grad_output": f"grad_out{n}", "wrt": list(grad)}
        describe = (f"query ({B}, {H}, {L_q}, {d}), key ({B}, {H}, {L_k}, {d}), value ({B}, {H}, {L_k}, {d_v}), "
                    f"window={window}, causal={causal}, {dtype}{mask_note}"
                    + (f", gradients of {', '.join(grad)}" if grad else "") + (f", {note}" if note else ""))
        b.call(check, "sliding_window_attention", args, judge=judge or close(diagnose=diagnose),
               describe=describe, backward=backward)

    def bad_window(self, check: str, rng: np.random.Generator, window: int) -> None:
        self.n += 1
        n, b = self.n, self.b
        args = [_input(b, self.track, f"{label}{n}", rng.standard_normal((1, 2, 5, 4)).astype(np.float32), "float32",
                       label) for label in INPUTS] + [b.value(window), b.value(True)]
        b.call(check, "sliding_window_attention", args, judge=raises("ValueError", when=f"window={window} < 1"),
               describe=f"query/key/value (1, 2, 5, 4), window={window}")


def build_plan(public_seed: int, hidden_seed: int, track: str = "torch") -> Plan:
    """Build the sliding_window_attention plan of ``track``: public cases from ``public_seed``, hidden
    ones from ``hidden_seed``. The numpy track has the same value cases, less bfloat16 and gradients.

    Raises:
        ValueError: an unknown track.
    """
    if track not in ("numpy", "torch"):
        raise ValueError(f"sliding_window_attention has no {track!r} track")
    torch_track = track == "torch"
    b = PlanBuilder()
    c = _Cases(b, track)
    rng = np.random.default_rng(public_seed)

    c.add("values", rng, B=2, H=2, L_q=16, window=4)
    c.add("values", rng, B=1, H=3, L_q=24, d=16, d_v=8, window=5, scale=1.5, note="d_v != d_k")
    c.add("window_one", rng, B=2, H=2, L_q=9, window=1, note="each query sees its own key only")
    c.add("window_one", rng, B=1, H=2, L_q=8, window=1, causal=False)
    c.add("full_window", rng, B=2, H=2, L_q=10, window=10, note="window = L: full causal attention")
    c.add("full_window", rng, B=1, H=2, L_q=7, window=50, causal=False, note="window > L: full attention")
    c.add("full_window", rng, B=1, H=2, L_q=5, L_k=12, window=12, note="window = L_k, L_q < L_k: causal bottom-right")
    c.add("ragged_ends", rng, B=2, H=2, L_q=13, window=4, note="13 = 3 * 4 + 1")
    c.add("ragged_ends", rng, B=1, H=2, L_q=11, window=3, causal=False, note="both ends of the sequence cut the window")
    c.add("non_causal", rng, B=2, H=2, L_q=16, window=3, causal=False)
    c.add("non_causal", rng, B=1, H=3, L_q=20, d=16, d_v=4, window=6, causal=False, scale=1.5)
    c.add("masks", rng, B=2, H=2, L_q=14, window=5, mask=padding_mask(rng, 2, 14, 4), note="padding")
    c.add("masks", rng, B=2, H=2, L_q=12, window=4, causal=False, mask=padding_mask(rng, 2, 12, 3),
          note="padding")
    c.add("masks", rng, B=2, H=2, L_q=15, window=6, mask=scattered_mask(rng, (2, 1, 15, 15), 15, 15, (3.0,)),
          mask_dtype="float32", note="numeric 0/3 (3 attends like 1)")
    c.add("masks", rng, B=1, H=2, L_q=12, window=4, causal=False,
          mask=scattered_mask(rng, (12, 12), 12, 12), note="a 2-D (L_q, L_k) mask broadcast over batch and heads")
    empty = np.ones((2, 1, 1, 12), dtype=bool)
    empty[1, ..., :5] = False       # causal window 3: item 1's queries 0..4 see nothing
    c.add("fully_masked_rows", rng, B=2, H=2, L_q=12, window=3, mask=empty,
          note="item 1's first 5 keys masked: its first 5 rows see no key and give 0")
    empty2 = np.ones((1, 1, 1, 10), dtype=bool)
    empty2[..., 3:8] = False        # non-causal window 2: query 5 sees keys 4..6, all masked
    c.add("fully_masked_rows", rng, B=1, H=2, L_q=10, window=2, causal=False, mask=empty2,
          note="keys 3..7 masked: rows 4..6 see no key and give 0")
    c.add("cache_alignment", rng, B=2, H=2, L_q=5, L_k=17, window=4,
          note="L_q < L_k: query i sits at position i + 12 and sees keys i + 9 .. i + 12")
    c.add("cache_alignment", rng, B=1, H=2, L_q=1, L_k=21, window=6, note="one decoding query: keys 15 .. 20")
    c.add("cache_alignment", rng, B=1, H=2, L_q=6, L_k=14, window=3, causal=False,
          note="L_q < L_k, not causal: query i sees keys |i + 8 - j| < 3")
    c.add("cache_alignment", rng, B=2, H=2, L_q=4, L_k=15, window=5, mask=padding_mask(rng, 2, 15, 3),
          note="decoding with a padded cache")
    c.add("float64", rng, B=2, H=2, L_q=15, window=4, dtype="float64")
    c.add("float64", rng, B=1, H=2, L_q=12, window=3, causal=False, dtype="float64")
    # half precision: every score near 12**2 / sqrt(16) = 36 with a spread of a few units and windows of
    # 16-32 keys: scores rounded to half precision (ulp 1/32 there; an accumulation in float16) move the
    # weights by a few percent, 10-20x the error of float32 accumulation (the contract's)
    for dtype in ("float16", "bfloat16") if torch_track else ("float16",):
        c.add("half_precision", rng, B=1, H=2, L_q=64, d=16, window=32, attract=12.0, scale=0.5, dtype=dtype,
              note="every score near 36")
        c.add("half_precision", rng, B=1, H=2, L_q=48, d=16, window=16, causal=False, attract=12.0, scale=0.5,
              dtype=dtype, note="every score near 36")
    for dtype in ("float32", "float64", "float16", "bfloat16") if torch_track else ("float32", "float64", "float16"):
        c.add("dtype_preserved", rng, B=1, H=2, L_q=6, window=3, dtype=dtype, judge=dtype_preserved())
    if torch_track:
        for dtype, causal, masked in (("float64", True, False), ("float64", False, False), ("float32", True, True)):
            c.add("gradients", rng, B=2, H=2, L_q=11, window=4, causal=causal, dtype=dtype, grad=INPUTS,
                  mask=padding_mask(rng, 2, 11, 3) if masked else None, judge=gradients_close(INPUTS))
    unchanged = inputs_unchanged()
    c.add("inputs_unchanged", rng, B=1, H=2, L_q=9, window=3, judge=unchanged)
    c.add("inputs_unchanged", rng, B=2, H=1, L_q=6, L_k=10, window=4, causal=False, dtype="float64",
          mask=scattered_mask(rng, (2, 1, 6, 10), 6, 10, (1.0,)), mask_dtype="float64", judge=unchanged)
    c.bad_window("bad_window", rng, 0)
    c.bad_window("bad_window", rng, -2)

    hidden = np.random.default_rng(hidden_seed)
    # Each hidden case keeps its shape class at every seed (the seed draws sizes and values only):
    # causal and not, L_q == L_k and L_q < L_k, a length that is not a multiple of the window, float32
    # and float64, so a mistake in any of these is charged at every seed, never by the luck of the draw.
    for i, (causal, shape_class) in enumerate(((True, "=="), (False, "=="), (True, "<"), (False, "<"),
                                               (True, "<"), (False, "=="))):
        window = int(hidden.integers(2, 6))
        L_k = window * int(hidden.integers(2, 5)) + int(hidden.integers(1, window))
        L_q = L_k if shape_class == "==" else int(hidden.integers(1, L_k - window + 1))
        B, H = (int(x) for x in hidden.integers(1, 3, size=2))
        c.add("hidden_values", hidden, B=B, H=H, L_q=L_q, L_k=L_k, d=int(hidden.choice([4, 8, 16])), window=window,
              causal=causal, dtype="float64" if i % 2 else "float32", scale=float(hidden.uniform(0.8, 2.0)))
    for i, (causal, kind) in enumerate(((True, "padding"), (False, "padding"), (True, "0/3"), (False, "0/0.5/-2"),
                                        (True, "0/0.5/-2"))):
        window = int(hidden.integers(2, 6))
        L = window * int(hidden.integers(2, 4)) + int(hidden.integers(1, window))
        B, H = 2, int(hidden.integers(1, 3))
        if kind == "padding":
            mask, mask_dtype = padding_mask(hidden, B, L, window - 1), "bool"
        else:
            values = (3.0,) if kind == "0/3" else (0.5, -2.0)
            mask, mask_dtype = scattered_mask(hidden, (B, 1, L, L), L, L, values), "float32"
        c.add("hidden_masks", hidden, B=B, H=H, L_q=L, window=window, causal=causal, mask=mask,
              mask_dtype=mask_dtype, note=kind)
    # an integer 0/1 mask too (the numeric kinds of every masked exercise's hidden cases), drawn after the
    # cases above so that they keep their inputs
    window = int(hidden.integers(2, 6))
    L = window * int(hidden.integers(2, 4)) + int(hidden.integers(1, window))
    c.add("hidden_masks", hidden, B=2, H=int(hidden.integers(1, 3)), L_q=L, window=window, causal=False,
          mask=scattered_mask(hidden, (2, 1, L, L), L, L, (1.0,)).astype(np.int64), mask_dtype="int64",
          note="0/1 int64")
    for i in range(2 if torch_track else 0):
        window = int(hidden.integers(2, 5))
        L_k = window * 3 + int(hidden.integers(1, window))
        L_q = L_k - int(hidden.integers(1, window)) * i              # the second always L_q < L_k
        c.add("hidden_gradients", hidden, B=1, H=2, L_q=L_q, L_k=L_k, window=window, causal=not i,
              dtype="float64", grad=INPUTS, judge=gradients_close(INPUTS))
    return b.plan


#: Probe shapes: batch 1, head width 8, window 4; heads per path (causal, masked, L_q = L_k / 2), different
#: on every path so that an L_q x L_k matrix on one path costs a different amount than on another
#: (complexity diagnoses tell the bank's detours apart by their figures).
PROBE_B, PROBE_D, PROBE_WINDOW = 1, 8, 4
PROBE_HEADS = {(True, False, False): 1, (True, True, False): 2, (False, False, False): 3, (False, True, False): 4,
               (True, False, True): 5}
#: The paths each size measures: (causal, masked, L_q = L_k / 2).
PROBE_PATHS = ((True, False, False), (True, True, False), (False, False, False), (False, True, False),
               (True, False, True))


def probe_steps(b: PlanBuilder, probe, size: int, rng: np.random.Generator, track: str = "torch") -> None:
    """Steps of a probe at ``L_k = size``, window 4, float32: five calls (``PROBE_PATHS``), causal and not,
    each at ``L_q = L_k`` without a mask and with a (1, 1, 1, L) padding mask (the last eighth of the keys
    hidden), and causal at ``L_q = L_k / 2`` (a chunk over a longer cache: bottom-right positions), with
    the heads of ``PROBE_HEADS``; the probe sums what they measured, so an L_q x L_k matrix on any one
    path grows the sum like L^2."""
    pad = np.ones((PROBE_B, 1, 1, size), dtype=bool)
    pad[..., size - size // 8:] = False
    for causal, masked, chunk in PROBE_PATHS:
        tag = f"{probe.check}{size}{'c' if causal else 'n'}{'m' if masked else ''}{'x' if chunk else ''}"
        H = PROBE_HEADS[causal, masked, chunk]
        L_q = size // 2 if chunk else size
        args = [_input(b, track, f"{tag}_{label}",
                       rng.standard_normal((PROBE_B, H, L_q if label == "query" else size, PROBE_D))
                       .astype(np.float32), "float32", label)
                for label in INPUTS]
        args += [b.value(PROBE_WINDOW), b.value(causal)]
        if masked:
            args.append(b.input(f"{tag}_mask", pad, track=track, label="mask"))
        path = f"causal={causal}, {'masked' if masked else 'unmasked'}" + (", L_q = L_k / 2" if chunk else "")
        b.call(probe.check, "sliding_window_attention", args, measure=probe.measure(),
               meta={"probe": probe.check, "size": size, "path": path},
               describe=f"query ({PROBE_B}, {H}, {L_q}, {PROBE_D}), key/value ({PROBE_B}, {H}, {size}, {PROBE_D}), "
                        f"window={PROBE_WINDOW}, causal={causal}, "
                        + ("padding mask (1, 1, 1, L), " if masked else "") + "float32")
