"""Host-side checks for `flash_attention`: the plan of public and hidden cases, the probes' steps, and
how each case is judged.

Every case calls ``tiled_attention(q, k, v, block_size, causal)`` with positional arguments (one case
omits ``block_size`` and ``causal`` to use the defaults) and compares with the float64 golden answer
under the dtype-aware tolerance. Cases use several key blocks per row (block sizes 1-8 on lengths up
to 40) so that the running max changes between blocks: that is where the online softmax's rescaling
mistakes show. Diagnoses replay them in float64 NumPy (``tiled64``) with the case's block size and
name one only when exactly one reproduces the candidate's output and the right answer does not.
"""

from __future__ import annotations

import math

import numpy as np

from grader.judge.judges import (JudgeContext, close, dtype_preserved, gradients_close, inputs_unchanged,
                                 nan_confined_in_every_call, raises, replayed_mistakes)
from grader.judge.tolerance import Tolerance
from grader.run.plan import Plan, PlanBuilder

INPUTS = ("q", "k", "v")

# -- a float64 model of tiled attention and of its usual mistakes (host only) -------------------------


def tiled64(q, k, v, block_size: int, causal: bool, mistake: str | None = None) -> np.ndarray:
    """Tiled online-softmax attention in float64 NumPy, optionally with one known mistake.

    Queries and keys are tiled in blocks of ``block_size`` (as in FlashAttention's Algorithm 1).

    Args:
        q: (B, H, L_q, d); k, v: (B, H, L_k, d).
        mistake: None (right), ``sum_not_rescaled`` (``l = l + rowsum(p)``: the running max is not
            used to rescale the running sum), ``output_not_rescaled`` (``acc = acc + p v``),
            ``causal_block_short`` (causal: the key blocks visited for a query block stop one block
            early, so the block holding the diagonal is skipped) or ``early_division``
            (``acc = (alpha acc + p v) / l`` in every block: divided by the sum before all blocks
            are seen, and the earlier division never undone).

    Returns:
        (B, H, L_q, d) float64; rows that see no key are 0.
    """
    q, k, v = (np.asarray(a, dtype=np.float64) for a in (q, k, v))
    B, H, L_q, d = q.shape
    L_k = k.shape[2]
    offset = L_k - L_q
    out = np.zeros((B, H, L_q, v.shape[-1]))
    for qs in range(0, L_q, block_size):
        qb = q[:, :, qs:qs + block_size] / math.sqrt(d)
        n = qb.shape[2]
        m = np.full((B, H, n, 1), -np.inf)
        l = np.zeros((B, H, n, 1))
        acc = np.zeros((B, H, n, v.shape[-1]))
        k_end = max(min(L_k, qs + n + offset), 0) if causal else L_k
        n_blocks = -(-k_end // block_size)
        if causal and mistake == "causal_block_short":
            n_blocks = max(n_blocks - 1, 0)
        for kb in range(n_blocks):
            ks = kb * block_size
            s = qb @ np.swapaxes(k[:, :, ks:ks + block_size], -1, -2)
            if causal:
                i = np.arange(qs, qs + n)[:, None]
                j = np.arange(ks, ks + s.shape[-1])[None, :]
                s = np.where(j > i + offset, -np.inf, s)
            m_new = np.maximum(m, s.max(axis=-1, keepdims=True))
            m_safe = np.where(np.isfinite(m_new), m_new, 0.0)
            p = np.exp(s - m_safe)
            alpha = np.exp(m - m_safe)
            l = (l if mistake == "sum_not_rescaled" else alpha * l) + p.sum(axis=-1, keepdims=True)
            pv = p @ v[:, :, ks:ks + block_size]
            acc = (acc if mistake == "output_not_rescaled" else alpha * acc) + pv
            if mistake == "early_division":
                acc = np.divide(acc, l, out=np.zeros_like(acc), where=l > 0)
            m = m_new
        if mistake == "early_division":
            out[:, :, qs:qs + n] = acc
        else:
            out[:, :, qs:qs + n] = np.divide(acc, l, out=np.zeros_like(acc), where=l > 0)
    return out


MISTAKES = (
    ("sum_not_rescaled", "the running max was not used to rescale the running sum: when a later block "
                         "raises the max m, the sum l must become l * exp(m_old - m_new) + rowsum(p), "
                         "as the output is."),
    ("output_not_rescaled", "the previous output was not rescaled: when a later block raises the max m, "
                            "the accumulated output must become acc * exp(m_old - m_new) + p @ v."),
    ("causal_block_short", "the causal loop over key blocks stops one block early: the block holding a "
                           "query block's last visible key (the diagonal block) is skipped."),
    ("early_division", "the output was divided by the running sum before all key blocks were seen "
                       "(acc / l inside the loop); divide once, after the last block (or rescale the "
                       "already-divided output by l_old / l_new)."),
)


def _call(ctx: JudgeContext) -> dict:
    args = ctx.step.wire["args"]
    return {"q": ctx.arg(0), "k": ctx.arg(1), "v": ctx.arg(2),
            "block_size": ctx.arg(3) if len(args) > 3 else 64, "causal": ctx.arg(4) if len(args) > 4 else False}


NAN_EMPTY_ROWS = ("the output contains NaN: a query row that sees no key (every key masked, or causal with "
                  "L_q > L_k) must give 0; guard exp(-inf - (-inf)) and the division by a zero sum.")


def _sees_a_key(call: dict) -> np.ndarray:
    """(L_q,) bool: whether query row i sees at least one key (always, unless causal with i + L_k - L_q < 0)."""
    L_q, L_k = call["q"].shape[-2], call["k"].shape[-2]
    rows = np.arange(L_q)
    return (rows + (L_k - L_q) >= 0) if call["causal"] else np.full(L_q, L_k > 0)


def _nan_on_empty_rows(ctx: JudgeContext, got: np.ndarray) -> bool:
    """Whether ``got`` (B, H, L_q, d) has NaN and every row holding it sees no key."""
    nan_rows = np.isnan(got).any(axis=-1)                                           # (B, H, L_q)
    return bool(nan_rows.any() and not (nan_rows & _sees_a_key(_call(ctx))).any())


def diagnose(ctx: JudgeContext, got: np.ndarray, tol: Tolerance) -> str | None:
    """Name the one known mistake whose float64 replay matches ``got`` (and the right answer does not)
    while every other call of the run is right or that mistake's (``right_or_variant_in_every_call``),
    or None when none or several do."""
    golden = ctx.golden.arrays[ctx.golden.report["output"]["key"]]
    call = _call(ctx)
    if got.shape == golden.shape and np.isnan(got).any():
        # NaN is named as the empty-row mistake only where every NaN lies on a row that sees no key
        # (causal with L_q > L_k); NaN on rows that do see keys comes from elsewhere (e.g. exp of
        # unshifted scores overflowing to inf, then inf / inf), so nothing is named.
        # The same must hold in every other call that gave NaN (``nan_confined_in_every_call``).
        return NAN_EMPTY_ROWS if _nan_on_empty_rows(ctx, got) and nan_confined_in_every_call(ctx, _nan_on_empty_rows) else None
    if got.shape != golden.shape or not np.isfinite(got).all():
        return None
    found = replayed_mistakes(ctx, got, golden, tol,
                              [(m, sentence) for m, sentence in MISTAKES if m != "causal_block_short" or call["causal"]],
                              lambda c, mistake: tiled64(**_call(c), mistake=mistake))
    return found[0] if len(found) == 1 else None


# -- cases -------------------------------------------------------------------------------------------

def _input(b: PlanBuilder, track: str, name: str, value: np.ndarray, dtype: str, label: str,
           requires_grad: bool = False) -> dict:
    if track == "numpy":  # arrays carry their own dtype (float16 included)
        return b.input(name, value.astype(dtype) if dtype == "float16" else value, track="numpy", label=label)
    return b.tensor(name, value, dtype=dtype, requires_grad=requires_grad, label=label)


class _Cases:
    """Adds cases to a ``PlanBuilder``; array names are numbered, so cases never collide."""

    def __init__(self, b: PlanBuilder, track: str = "torch"):
        self.b = b
        self.n = 0
        self.track = track

    def add(self, check: str, rng: np.random.Generator, *, B: int, H: int, L_q: int, L_k: int | None = None,
            d: int = 8, block_size: int | None = 4, causal: bool = False, dtype: str = "float32",
            grad: tuple[str, ...] = (), judge=None, scale: float = 1.0, note: str = "", defaults: bool = False,
            drift: float = 0.0, repel: float = 0.0) -> None:
        self.n += 1
        n, b = self.n, self.b
        L_k = L_q if L_k is None else L_k
        q = rng.standard_normal((B, H, L_q, d)) * scale
        k = rng.standard_normal((B, H, L_k, d)) * scale
        if repel:  # q and k share one direction with opposite signs: every score of every row is about -repel**2 / sqrt(d)
            u = rng.standard_normal(d)
            u /= np.linalg.norm(u)
            q, k = q + repel * u, k - repel * u
        if drift:  # later keys align more with the queries: the running max keeps rising
            k = k + drift * np.linspace(0.0, 1.0, L_k)[None, None, :, None] * np.sign(q.mean(axis=2, keepdims=True))
        v = rng.standard_normal((B, H, L_k, d))
        store = np.float64 if dtype == "float64" else np.float32
        args = [_input(b, self.track, f"{label}{n}", a.astype(store), dtype, label, label in grad)
                for label, a in zip(INPUTS, (q, k, v))]
        if not defaults:
            args += [b.value(block_size), b.value(causal)]
        backward = None
        if grad:
            b.array(f"grad_out{n}", rng.standard_normal((B, H, L_q, d)).astype(store))
            backward = {"grad_output": f"grad_out{n}", "wrt": list(grad)}
        call = ("default block_size and causal" if defaults else f"block_size={block_size}, causal={causal}")
        describe = (f"q ({B}, {H}, {L_q}, {d}), k/v ({B}, {H}, {L_k}, {d}), {call}, {dtype}"
                    + (f", gradients of {', '.join(grad)}" if grad else "") + (f", {note}" if note else ""))
        b.call(check, "tiled_attention", args, judge=judge or close(diagnose=diagnose),
               describe=describe, backward=backward)

    def bad_block(self, check: str, rng: np.random.Generator, block_size: int) -> None:
        self.n += 1
        n, b = self.n, self.b
        args = [_input(b, self.track, f"{label}{n}", rng.standard_normal((1, 2, 5, 4)).astype(np.float32), "float32", label)
                for label in INPUTS] + [b.value(block_size), b.value(False)]
        b.call(check, "tiled_attention", args, judge=raises("ValueError", when=f"block_size={block_size} < 1"),
               describe=f"q/k/v (1, 2, 5, 4), block_size={block_size}")


def build_plan(public_seed: int, hidden_seed: int, track: str = "torch") -> Plan:
    """Build the flash_attention plan of ``track``: public cases from ``public_seed``, hidden ones from
    ``hidden_seed``. The numpy track has the same value cases, less bfloat16 and gradients.

    Raises:
        ValueError: an unknown track.
    """
    if track not in ("numpy", "torch"):
        raise ValueError(f"flash_attention has no {track!r} track")
    torch_track = track == "torch"
    b = PlanBuilder()
    c = _Cases(b, track)
    rng = np.random.default_rng(public_seed)

    c.add("values", rng, B=2, H=2, L_q=16, block_size=4, drift=3.0, note="4 key blocks; later keys score higher")
    c.add("values", rng, B=1, H=3, L_q=24, d=16, block_size=8, scale=2.0)
    c.add("ragged_blocks", rng, B=2, H=2, L_q=13, block_size=4, drift=3.0, note="last block of 1 row")
    c.add("ragged_blocks", rng, B=1, H=2, L_q=10, L_k=11, block_size=3, scale=2.0)
    c.add("block_sizes", rng, B=1, H=2, L_q=7, block_size=1, note="block_size 1")
    c.add("block_sizes", rng, B=2, H=1, L_q=9, block_size=9, note="one block")
    c.add("block_sizes", rng, B=1, H=2, L_q=5, L_k=6, block_size=50, note="block_size > length")
    c.add("block_sizes", rng, B=1, H=2, L_q=70, L_k=150, defaults=True, note="called as tiled_attention(q, k, v)")
    c.add("cross_lengths", rng, B=2, H=2, L_q=5, L_k=17, block_size=4, drift=3.0)
    c.add("cross_lengths", rng, B=1, H=2, L_q=19, L_k=6, block_size=4)
    c.add("causal", rng, B=2, H=2, L_q=16, block_size=4, causal=True, drift=3.0)
    c.add("causal", rng, B=1, H=3, L_q=23, block_size=5, causal=True, scale=2.0, note="ragged")
    c.add("causal", rng, B=1, H=2, L_q=12, block_size=1, causal=True)
    c.add("causal_bottom_right", rng, B=2, H=2, L_q=5, L_k=17, block_size=4, causal=True, drift=3.0,
          note="L_q < L_k: query i sees keys j <= i + 12")
    c.add("causal_bottom_right", rng, B=1, H=2, L_q=1, L_k=21, block_size=4, causal=True, note="one decoding query")
    c.add("causal_bottom_right", rng, B=2, H=2, L_q=14, L_k=6, block_size=4, causal=True,
          note="L_q > L_k: the first 8 rows see no key and give 0")
    c.add("float64", rng, B=2, H=2, L_q=15, block_size=4, dtype="float64", drift=3.0)
    # float64 and half_precision judge precision without a causal mask: a causal mistake is the causal
    # checks' to charge (one mistake, one deduction). large_scores keeps its square causal case (a causal
    # loop that stops a block short fails it too): without the mask, scores in the hundreds over 12 keys
    # exceed what a correct running log-sum-exp (correct_running_logsumexp.py) keeps in float32
    c.add("float64", rng, B=1, H=2, L_q=11, L_k=18, block_size=5, dtype="float64")
    c.add("large_scores", rng, B=1, H=2, L_q=12, block_size=4, scale=12.0, causal=True,
          note="scores in the hundreds (exp would overflow without the running max)")
    c.add("large_scores", rng, B=1, H=2, L_q=10, block_size=3, scale=12.0, dtype="float64")
    # its own stream, so the cases after it keep their inputs: a running max started at 0 instead of
    # -inf is right while some score of a row is above -80 or so, and gives 0 (exp underflows in
    # float32) when every score of the row is in the negative hundreds
    c.add("large_scores", np.random.default_rng([public_seed, 31]), B=1, H=2, L_q=9, L_k=13, block_size=4,
          repel=30.0, note="every score of every row in the negative hundreds (no score near 0)")
    # the same in float64 (every score near -1270): exp(s - 0) underflows there too, so a running max
    # started at 0 in a solution that works in float64 is charged as well
    c.add("large_scores", np.random.default_rng([public_seed, 32]), B=1, H=2, L_q=11, L_k=7, block_size=3,
          repel=60.0, dtype="float64", note="every score of every row near -1270, float64")
    for dtype in ("float16", "bfloat16") if torch_track else ("float16",):
        c.add("half_precision", rng, B=1, H=2, L_q=16, block_size=4, dtype=dtype)
        c.add("half_precision", rng, B=1, H=2, L_q=9, L_k=14, block_size=4, dtype=dtype)
    for dtype in ("float32", "float64", "float16", "bfloat16") if torch_track else ("float32", "float64", "float16"):
        c.add("dtype_preserved", rng, B=1, H=2, L_q=6, block_size=4, dtype=dtype, judge=dtype_preserved())
    for dtype, causal in (("float64", False), ("float32", True), ("float64", True)) if torch_track else ():
        c.add("gradients", rng, B=1, H=2, L_q=9, L_k=11, block_size=4, causal=causal, dtype=dtype, grad=INPUTS,
              judge=gradients_close(INPUTS))
    unchanged = inputs_unchanged()
    c.add("inputs_unchanged", rng, B=1, H=2, L_q=9, block_size=4, causal=True, judge=unchanged)
    c.add("inputs_unchanged", rng, B=2, H=1, L_q=6, L_k=10, block_size=3, dtype="float64", judge=unchanged)
    c.bad_block("bad_block_size", rng, 0)
    c.bad_block("bad_block_size", rng, -3)

    hidden = np.random.default_rng(hidden_seed)
    # Each hidden case keeps its shape class at every seed (the seed draws sizes and values only): the
    # causal ones are L_q < L_k, L_q == L_k and L_q > L_k (rows that see no key), and every case has a
    # ragged last key block of 1 .. block_size - 1 rows, so a mistake in any of these is charged at
    # every seed, never by the luck of the draw.
    for i, shape_class in enumerate(("<", "<", "==", "==", ">", ">")):
        B, H = (int(x) for x in hidden.integers(1, 3, size=2))
        block_size = int(hidden.integers(2, 9))
        L_k = block_size * int(hidden.integers(1, 4)) + int(hidden.integers(1, block_size))
        L_q = {"<": int(hidden.integers(1, L_k)), "==": L_k, ">": L_k + int(hidden.integers(1, 8))}[shape_class]
        causal = bool(i % 2)
        c.add("hidden_values", hidden, B=B, H=H, L_q=L_q, L_k=L_k, d=int(hidden.choice([4, 8, 16])),
              block_size=block_size, causal=causal, dtype="float32" if i % 2 else "float64",
              drift=3.0 * (i % 3 == 0))
    for i in range(2 if torch_track else 0):
        L_q, L_k = (int(x) for x in hidden.integers(2, 20, size=2))
        c.add("hidden_gradients", hidden, B=1, H=2, L_q=L_q, L_k=L_k, block_size=int(hidden.integers(2, 6)),
              causal=bool(i), dtype="float64", grad=INPUTS, judge=gradients_close(INPUTS))
    return b.plan


#: Probe shapes: batch 1, 2 heads, head width 16, block size 64.
PROBE_B, PROBE_H, PROBE_D, PROBE_BLOCK = 1, 2, 16, 64


def probe_steps(b: PlanBuilder, probe, size: int, rng: np.random.Generator, track: str = "torch") -> None:
    """Steps of a probe at length ``size`` (float32, block_size 64), three paths: ``causal=False`` and
    ``causal=True`` at ``L_q = L_k = size``, and ``causal=True`` at ``L_q = size // 2``, ``L_k = size`` (a
    chunk of queries over a longer cache: the bottom-right offset is used); the probe sums what they
    measured, so an L_q x L_k matrix on any one path grows the sum like L^2."""
    for causal, L_q in ((False, size), (True, size), (True, size // 2)):
        tag = f"{probe.check}{size}{'c' if causal else ''}{'x' if L_q != size else ''}"
        args = [_input(b, track, f"{tag}_{label}",
                       rng.standard_normal((PROBE_B, PROBE_H, L_q if label == "q" else size, PROBE_D))
                       .astype(np.float32), "float32", label) for label in INPUTS]
        args += [b.value(PROBE_BLOCK), b.value(causal)]
        path = f"causal={causal}" + (", L_q = L_k / 2" if L_q != size else "")
        b.call(probe.check, "tiled_attention", args, measure=probe.measure(),
               meta={"probe": probe.check, "size": size, "path": path},
               describe=f"q ({PROBE_B}, {PROBE_H}, {L_q}, {PROBE_D}), k/v ({PROBE_B}, {PROBE_H}, {size}, {PROBE_D}), "
                        f"block_size={PROBE_BLOCK}, causal={causal}, float32")
