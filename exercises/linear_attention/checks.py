"""Host-side checks for `linear_attention`: the plan of public and hidden cases, the probes' steps, and
how each case is judged.

Every case calls ``linear_attention(query, key, value, causal)`` with positional arguments and compares
with the float64 golden answer under the dtype-aware tolerance. Two of the grader's own identities are
checked on the way, independently of the reference (Katharopoulos et al. 2020, arXiv:2006.16236):

* ``values`` (not causal): golden must equal the quadratic form ``phi(Q) phi(K)^T V`` normalised
  row-wise (eq. 4-6: the kernel trick only regroups that product), computed here in float64;
* ``causal``: golden must equal the token-by-token recurrence (eq. 10-12, the RNN view)
  ``S_i = S_(i-1) + phi(k_i) v_i^T``, ``z_i = z_(i-1) + phi(k_i)``, ``out_i = phi(q_i)^T S_i / phi(q_i)^T z_i``,
  run here in float64, one token at a time.

A reference that disagreed with either would be the grader's fault (``GraderBug``, never charged).
Neither is asked of the candidate (who must not form the ``L x L`` product: the probes charge it).
Named mistakes come from the bank (``mistakes/``, ``mistakes_torch/``) by replay.
"""

from __future__ import annotations

from typing import Callable

import numpy as np

from grader.judge.judges import (GraderBug, JudgeContext, Outcome, close, dtype_preserved, gradients_close,
                                 inputs_unchanged, output_array, raises)
from grader.run.plan import Plan, PlanBuilder

INPUTS = ("query", "key", "value")

# -- the grader's own float64 models (host only) -------------------------------------------------------


def phi64(x) -> np.ndarray:
    """elu(x) + 1 in float64: x + 1 for x > 0, exp(x) otherwise."""
    x = np.asarray(x, dtype=np.float64)
    return np.where(x > 0, x + 1.0, np.exp(np.minimum(x, 0.0)))


def quadratic64(query, key, value, causal: bool) -> np.ndarray:
    """The quadratic form: ``A = phi(Q) phi(K)^T`` (L x L, lower-triangular when causal), each row divided
    by its sum, times V. (B, H, L, d_v) float64. Host only: what the kernel trick must equal."""
    a = phi64(query) @ np.swapaxes(phi64(key), -1, -2)                         # (B, H, L, L)
    if causal:
        a = np.tril(a)
    return (a / a.sum(axis=-1, keepdims=True)) @ np.asarray(value, dtype=np.float64)


def recurrence64(query, key, value) -> np.ndarray:
    """The causal path run as an RNN, one token at a time: the state (S, z) takes token i in, then is
    read by query i. (B, H, L, d_v) float64."""
    fq, fk, v = phi64(query), phi64(key), np.asarray(value, dtype=np.float64)
    B, H, L, d_k = fq.shape
    S = np.zeros((B, H, d_k, v.shape[-1]))
    z = np.zeros((B, H, d_k))
    out = np.zeros((B, H, L, v.shape[-1]))
    for i in range(L):
        S = S + fk[:, :, i, :, None] * v[:, :, i, None, :]
        z = z + fk[:, :, i]
        out[:, :, i] = np.einsum("bhd,bhde->bhe", fq[:, :, i], S) / np.einsum("bhd,bhd->bh", fq[:, :, i], z)[..., None]
    return out


def _identity(model: Callable[[JudgeContext], np.ndarray], what: str) -> Callable[[JudgeContext], Outcome]:
    """Judge: ``close`` against golden, after checking golden against ``model`` (the grader's own formula).

    Raises (from the judge):
        GraderBug: golden differs from ``model`` beyond float64 rounding (rtol 1e-9): the reference is wrong.
    """
    inner = close()

    def judge(ctx: JudgeContext) -> Outcome:
        golden = output_array(ctx.golden)
        if golden is not None:
            want = model(ctx)
            scale = max(float(np.max(np.abs(want), initial=0.0)), 1.0)
            if want.shape != golden.shape or not np.allclose(golden, want, rtol=1e-9, atol=1e-12 * scale):
                raise GraderBug(f"linear_attention: the reference differs from {what} in step {ctx.step.id}")
        return inner(ctx)

    return judge


def matches_quadratic_form() -> Callable[[JudgeContext], Outcome]:
    """Judge of a non-causal case: the candidate equals golden, which equals phi(Q) phi(K)^T V row-normalised."""
    return _identity(lambda ctx: quadratic64(ctx.arg(0), ctx.arg(1), ctx.arg(2), ctx.arg(3)),
                     "the quadratic form phi(Q) phi(K)^T V normalised row-wise")


def matches_recurrence() -> Callable[[JudgeContext], Outcome]:
    """Judge of a causal case: the candidate equals golden, which equals the token-by-token recurrence."""
    return _identity(lambda ctx: recurrence64(ctx.arg(0), ctx.arg(1), ctx.arg(2)),
                     "the token-by-token recurrence of the causal state")


# -- cases -------------------------------------------------------------------------------------------

def _input(b: PlanBuilder, track: str, name: str, value: np.ndarray, dtype: str, label: str,
           requires_grad: bool = False) -> dict:
    if track == "numpy":  # arrays carry their own dtype (float16 included)
        return b.input(name, value.astype(dtype) if dtype == "float16" else value, track="numpy", label=label)
    return b.tensor(name, value, dtype=dtype, requires_grad=requires_grad, label=label)


class _Cases:
    """Adds cases to a ``PlanBuilder``; array names are numbered, so cases never collide."""

    def __init__(self, b: PlanBuilder, track: str):
        self.b, self.track, self.n = b, track, 0

    def add(self, check: str, rng: np.random.Generator, *, B: int, H: int, L: int, d_k: int = 8, d_v: int | None = None,
            causal: bool = False, dtype: str = "float32", scale: float = 1.0, shift: float = 0.0,
            v_shift: float = 0.0, grad: tuple[str, ...] = (), judge=None, note: str = "",
            q_shift: float | None = None, q_scale: float | None = None) -> None:
        """One call. ``scale``/``shift``: query and key are ``shift + scale * N(0, 1)`` (the query
        ``q_shift + q_scale * N(0, 1)`` where those are given); value is ``v_shift + N(0, 1)``."""
        self.n += 1
        n, b = self.n, self.b
        d_v = d_k if d_v is None else d_v
        q = (shift if q_shift is None else q_shift) + (scale if q_scale is None else q_scale) \
            * rng.standard_normal((B, H, L, d_k))
        k = shift + scale * rng.standard_normal((B, H, L, d_k))
        v = v_shift + rng.standard_normal((B, H, L, d_v))
        store = np.float64 if dtype == "float64" else np.float32
        args = [_input(b, self.track, f"{label}{n}", a.astype(store), dtype, label, label in grad)
                for label, a in zip(INPUTS, (q, k, v))]
        args.append(b.value(causal))
        backward = None
        if grad:
            b.array(f"grad_out{n}", rng.standard_normal((B, H, L, d_v)).astype(store))
            backward = {"grad_output": f"grad_out{n}", "wrt": list(grad)}
        if judge is None:
            judge = matches_recurrence() if causal else matches_quadratic_form()
        describe = (f"query/key ({B}, {H}, {L}, {d_k}), value ({B}, {H}, {L}, {d_v}), causal={causal}, {dtype}"
                    + (f", gradients of {', '.join(grad)}" if grad else "") + (f", {note}" if note else ""))
        b.call(check, "linear_attention", args, judge=judge, describe=describe, backward=backward)

    def bad(self, check: str, rng: np.random.Generator, shapes, when: str) -> None:
        self.n += 1
        n, b = self.n, self.b
        args = [_input(b, self.track, f"{label}{n}", rng.standard_normal(shape).astype(np.float32), "float32", label)
                for label, shape in zip(INPUTS, shapes)] + [b.value(False)]
        b.call(check, "linear_attention", args, judge=raises("ValueError", when=when),
               describe=f"query {shapes[0]}, key {shapes[1]}, value {shapes[2]}")


def build_plan(public_seed: int, hidden_seed: int, track: str = "numpy") -> Plan:
    """Build the linear_attention plan of ``track``: public cases from ``public_seed``, hidden ones from
    ``hidden_seed``. The torch track adds bfloat16 and gradients.

    Raises:
        ValueError: an unknown track.
    """
    if track not in ("numpy", "torch"):
        raise ValueError(f"linear_attention has no {track!r} track")
    torch_track = track == "torch"
    b = PlanBuilder()
    c = _Cases(b, track)
    rng = np.random.default_rng(public_seed)

    c.add("values", rng, B=2, H=2, L=16, d_k=8, d_v=8)
    c.add("values", rng, B=1, H=3, L=24, d_k=4, d_v=12, note="d_k != d_v")
    c.add("values", rng, B=2, H=1, L=9, d_k=16, d_v=5, scale=2.0, v_shift=1.0, note="d_k != d_v")
    c.add("causal", rng, B=2, H=2, L=16, d_k=8, d_v=8, causal=True)
    c.add("causal", rng, B=1, H=3, L=37, d_k=4, d_v=12, causal=True, note="d_k != d_v")
    c.add("causal", rng, B=2, H=1, L=11, d_k=16, d_v=3, causal=True, scale=2.0, v_shift=1.0, note="d_k != d_v")
    for causal in (False, True):
        c.add("single_token", rng, B=2, H=2, L=1, d_k=8, d_v=6, causal=causal, note="L = 1")
    # float64, large_magnitudes and half_precision judge precision without the causal mask: a causal
    # mistake is the causal checks' to charge (one mistake, one deduction)
    c.add("float64", rng, B=2, H=2, L=15, d_k=8, d_v=6, dtype="float64")
    c.add("float64", rng, B=1, H=2, L=20, d_k=4, d_v=8, dtype="float64", scale=2.0)
    # values in the tens: phi(x) = x + 1 up to ~150 (exp of it overflows float32 past ~88)
    c.add("large_magnitudes", rng, B=1, H=2, L=16, d_k=8, d_v=6, scale=40.0, note="query and key ~ 40 N(0, 1)")
    # every feature far below zero: phi(x) = exp(x) ~ 2.5e-3, the denominators ~ 1e-4; exact in floating
    # point (phi(q_i) may be scaled freely), but an epsilon added to them is not small there
    c.add("large_magnitudes", rng, B=1, H=2, L=8, d_k=8, d_v=6, shift=-6.0, scale=0.5,
          note="query and key ~ -6 + 0.5 N(0, 1): tiny phi, tiny denominators")
    c.add("large_magnitudes", rng, B=1, H=2, L=8, d_k=8, d_v=6, shift=-6.0, scale=0.5, dtype="float64",
          note="query and key ~ -6 + 0.5 N(0, 1), float64")
    for dtype in ("float16", "bfloat16") if torch_track else ("float16",):
        c.add("half_precision", rng, B=1, H=2, L=16, d_k=8, d_v=8, dtype=dtype)
        # S and phi(q)^T S reach ~1e6 here: beyond float16 (65504), well inside float32
        c.add("half_precision", rng, B=1, H=2, L=64, d_k=16, d_v=8, dtype=dtype, shift=20.0, scale=4.0, v_shift=10.0,
              note="query and key ~ 20 + 4 N(0, 1), value ~ 10 + N(0, 1): sums beyond float16's range")
        # the state S itself ~ 64 * 21 * 60 = 8e4: a state accumulated in float32 but stored in float16
        # between the sum and the query's read overflows (a helper hunt's file had full marks)
        c.add("half_precision", rng, B=1, H=2, L=64, d_k=16, d_v=8, dtype=dtype, shift=20.0, scale=4.0, v_shift=60.0,
              note="query and key ~ 20 + 4 N(0, 1), value ~ 60 + N(0, 1): the state S beyond float16's range")
    for dtype in ("float32", "float64", "float16", "bfloat16") if torch_track else ("float32", "float64", "float16"):
        c.add("dtype_preserved", rng, B=1, H=2, L=6, d_k=4, d_v=4, dtype=dtype, judge=dtype_preserved())
    if torch_track:
        grads = gradients_close(INPUTS)
        c.add("gradients", rng, B=1, H=2, L=9, d_k=4, d_v=6, dtype="float64", grad=INPUTS, judge=grads)
        c.add("gradients", rng, B=1, H=2, L=10, d_k=6, d_v=4, causal=True, dtype="float64", grad=INPUTS, judge=grads)
        c.add("gradients", rng, B=1, H=2, L=8, d_k=4, d_v=4, causal=True, dtype="float32", grad=INPUTS, judge=grads)
        # features up to ~150: exp(x) overflows float32 there, so an exp evaluated on the positive branch
        # of torch.where has a 0 * inf = NaN gradient although the forward pass is right
        c.add("gradients", rng, B=1, H=2, L=8, d_k=4, d_v=4, dtype="float32", scale=40.0, grad=INPUTS, judge=grads,
              note="query and key ~ 40 N(0, 1)")
    unchanged = inputs_unchanged()
    c.add("inputs_unchanged", rng, B=1, H=2, L=9, d_k=4, d_v=6, causal=True, judge=unchanged)
    c.add("inputs_unchanged", rng, B=2, H=1, L=6, d_k=4, d_v=4, dtype="float64", judge=unchanged)
    # the shapes that broadcasting or a non-causal product would accept silently come first
    c.bad("bad_shapes", rng, [(1, 2, 5, 4), (1, 2, 7, 4), (1, 2, 7, 4)], "query has another length than key and value")
    c.bad("bad_shapes", rng, [(2, 2, 5, 4), (2, 2, 5, 4), (1, 2, 5, 4)], "value has another batch size than query and key")
    c.bad("bad_shapes", rng, [(1, 3, 5, 4), (1, 1, 5, 4), (1, 1, 5, 4)], "key and value have other heads than query")
    c.bad("bad_shapes", rng, [(2, 5, 4), (2, 5, 4), (2, 5, 4)], "the inputs are 3-D")
    c.bad("bad_shapes", rng, [(1, 2, 5, 4), (1, 2, 5, 3), (1, 2, 5, 4)], "query and key differ in d_k")
    # drawn after every other public case, so that their values stay what they were
    for dtype in ("float16", "bfloat16") if torch_track else ("float16",):
        # the state S ~ 8e4 again, but phi(q) ~ exp(-6) ~ 2.5e-3: phi(q)^T S ~ 3e3 and the output stay in
        # float16's range. A state kept in float16 (or sums accumulated in float16) overflows; a numerator
        # or denominator rounded to float16 after a float32 sum does not (confuser
        # numerator_stored_in_float16: both give all-NaN outputs on the cases above)
        c.add("half_precision", rng, B=1, H=2, L=64, d_k=16, d_v=8, dtype=dtype, shift=20.0, scale=4.0, v_shift=60.0,
              q_shift=-6.0, q_scale=0.5,
              note="key ~ 20 + 4 N(0, 1), query ~ -6 + 0.5 N(0, 1), value ~ 60 + N(0, 1): only the state S "
                   "beyond float16's range")

    hidden = np.random.default_rng(hidden_seed)
    # Each hidden case keeps its kind at every seed (causal or not, dtype, d_k vs d_v); the seed draws
    # sizes and values only, so a mistake in any of these is charged at every seed.
    for i in range(6):
        B, H = (int(x) for x in hidden.integers(1, 3, size=2))
        d_k = int(hidden.choice([4, 8, 16]))
        d_v = d_k + int(hidden.integers(1, 5)) if i % 3 else d_k
        c.add("hidden_values", hidden, B=B, H=H, L=int(hidden.integers(2, 40)), d_k=d_k, d_v=d_v, causal=bool(i % 2),
              dtype="float64" if i in (2, 3) else "float32", scale=float(hidden.uniform(0.5, 2.0)))
    # query and key ~ 1 + N(0, 1) over 8 features: a row whose phi(q_i)^T z vanishes under a wrong feature
    # map (relu) has a probability near 1e-4, so the same wrong forward is charged at every seed rather than
    # excused (a NaN forward skips its gradient case) at some
    for i in range(2 if torch_track else 0):
        c.add("hidden_gradients", hidden, B=1, H=2, L=int(hidden.integers(2, 20)), d_k=8, d_v=int(hidden.integers(2, 7)),
              causal=bool(i), dtype="float64", shift=1.0, grad=INPUTS, judge=gradients_close(INPUTS))
    return b.plan


#: Probe shapes: batch 1, 2 heads, d_k = d_v = PROBE_D[check]: 16 for work (a chunked solution's
#: C x C blocks cost C / d times the reference's products, so d must not be tiny), 4 for memory (the
#: reference's causal prefix sums hold L * d^2 numbers, which an L x L matrix must clearly outgrow
#: from the smallest size on).
PROBE_B, PROBE_H = 1, 2
PROBE_D = {"flops_scaling": 16, "memory_scaling": 4}


def probe_steps(b: PlanBuilder, probe, size: int, rng: np.random.Generator, track: str = "numpy") -> None:
    """Steps of a probe at ``L = size``: calls with ``causal=False`` and ``causal=True``, each for one
    sequence and for a batch of two (float32, d_k = d_v = ``PROBE_D[probe.check]``); the probe sums what
    they measured, so an L x L matrix on any path (only when causal, only for a batch: helper hunt,
    issue 24) makes the sum grow like L^2."""
    d = PROBE_D[probe.check]
    for causal, B in ((False, PROBE_B), (True, PROBE_B), (False, 2), (True, 2)):
        tag = f"{probe.check}{size}{'c' if causal else ''}{'b' if B != PROBE_B else ''}"
        args = [_input(b, track, f"{tag}_{label}", rng.standard_normal((B, PROBE_H, size, d)).astype(np.float32),
                       "float32", label) for label in INPUTS]
        args.append(b.value(causal))
        b.call(probe.check, "linear_attention", args, measure=probe.measure(),
               meta={"probe": probe.check, "size": size,
                     "path": f"causal={causal}" + (f", batch of {B}" if B != PROBE_B else "")},
               describe=f"query/key/value ({B}, {PROBE_H}, {size}, {d}), causal={causal}, float32")
