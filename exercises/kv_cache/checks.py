"""Host-side checks for `kv_cache`: stateful plans over a `CachedAttention` object.

Each scenario constructs an object, then calls ``forward`` on successive chunks of one sequence
(prefill, single-token decode steps, uneven chunks, ``use_cache=False``, ``clear_cache()``) and reads
``k_cache``/``v_cache`` between calls; later steps use the same object. The runner only executes
steps; what a step means is known here. Every ``forward`` output is compared with the reference's
float64 run of the same plan, which equals full causal attention over the whole sequence
(``tests/test_kv_cache.py`` proves that against an independent implementation). Diagnoses recompute
the usual mistakes on the host in float64 (no causal mask in a multi-token prefill, a top-left
aligned mask, the cache ignored, ...) and name the one the output matches.

Two tracks build the same scenarios (``build_plan(..., track=...)``): ``numpy`` hands over arrays,
``torch`` tensors of the same values and dtypes, and adds ``gradients``: backward passes through
``forward`` (a prefill from an empty cache, and a decode step after a cache filled without
gradients) with respect to ``x`` and every weight, compared with the float64 reference's.
"""

from __future__ import annotations

import math

import numpy as np

from grader.judge.compare import close_enough, shape_message
from grader.judge.judges import (gradients_close, JudgeContext, Outcome, Symptom, close, describe_value, dtype_preserved, failure_from_exception,
                           holds_in_every_call, inputs_unchanged, with_hint,
                           output_array, output_descriptor, right_or_variant_in_every_call)
from grader.run.plan import Plan, PlanBuilder
from grader.judge.tolerance import Tolerance
from grader.judge.verdicts import Verdict


# -- host-side attention variants, for diagnoses -----------------------------------------------------

def _attention64(past: np.ndarray, x: np.ndarray, W: list[np.ndarray], H: int, *, mask: str = "causal",
                 scale: str = "d_k", heads: str = "transpose", out_proj: bool = True) -> np.ndarray:
    """Self-attention of the new tokens ``x`` over ``past + x`` in float64, with one thing varied.

    mask: ``causal`` (bottom-right), ``none``, ``top_left`` (j <= i, ignoring the cached offset).
    scale: ``d_k``, ``d_model``, ``twice`` (by d_k) or ``none``. heads: ``transpose`` (right) or ``reshape`` (a plain
    reshape to (B, H, L, d_k), the usual mistake). out_proj: apply W_o.
    """
    W_q, W_k, W_v, W_o = (w.astype(np.float64) for w in W)
    x = x.astype(np.float64)
    full = np.concatenate([past.astype(np.float64), x], axis=1) if past.shape[1] else x
    B, L, D = x.shape
    S, d_k = full.shape[1], D // H

    def split(t: np.ndarray) -> np.ndarray:
        n = t.shape[1]
        if heads == "reshape":
            return t.reshape(B, H, n, d_k)
        return t.reshape(B, n, H, d_k).transpose(0, 2, 1, 3)

    q, k, v = split(x @ W_q), split(full @ W_k), split(full @ W_v)
    s = {"d_k": math.sqrt(d_k), "d_model": math.sqrt(D), "none": 1.0, "twice": float(d_k)}[scale]
    att = q @ k.transpose(0, 1, 3, 2) / s
    i, j = np.arange(L)[:, None], np.arange(S)[None, :]
    allowed = {"causal": j <= i + (S - L), "none": np.ones((L, S), bool), "top_left": j <= i}[mask]
    att = np.where(allowed, att, -np.inf)
    att = np.exp(att - att.max(axis=-1, keepdims=True))
    att = att / att.sum(axis=-1, keepdims=True)
    y = att @ v
    y = y.reshape(B, L, D) if heads == "reshape" else y.transpose(0, 2, 1, 3).reshape(B, L, D)
    return y @ W_o if out_proj else y


def _forward_call(ctx: JudgeContext) -> dict:
    """The arrays of a ``forward`` call (from its step's meta): ``x``, ``W``, ``H``, the tokens cached
    before it (``past``, one array per earlier call that filled the cache), ``use_cache``, and
    ``every`` (the tokens of every earlier call, use_cache=False ones too)."""
    meta, arrays = ctx.step.meta, ctx.plan.arrays
    x = arrays[meta["x"]]
    B, _, D = x.shape
    cached = [arrays[n] for n in meta["past"]]
    past = np.concatenate(cached, axis=1) if cached else np.zeros((B, 0, D), x.dtype)
    every = [arrays[n] for n in meta.get("every", [])]
    return {"x": x, "W": [arrays[n] for n in meta["W"]], "H": meta["H"], "past": past, "n_cached": len(cached),
            "every": every, "use_cache": meta["use_cache"]}


def _none(c: dict) -> np.ndarray:
    return np.zeros((c["x"].shape[0], 0, c["x"].shape[2]))


#: The replayed mistakes of ``forward``: (sentence, replay(call) -> the mistake's float64 output on that
#: call, or None where the mistake cannot show there (its output there is the right one)). The sentence
#: may use {L} (new tokens) and {T} (cached tokens) of the judged call.
FORWARD_MISTAKES = (
    ("with {L} new tokens, new token i also attended to the new tokens after it, as with no causal mask inside "
     "a multi-token prefill (or a mask whose offset hides nothing). Mask key j for new token i when j > T + i "
     "(T = {T} cached).",
     lambda c: _attention64(_seen(c), c["x"], c["W"], c["H"], mask="none") if c["x"].shape[1] > 1 else None),
    ("the causal mask is aligned top-left: with T = {T} cached tokens, new token i sits at position T + i and "
     "may attend to keys j <= T + i (bottom-right aligned), not j <= i.",
     lambda c: _attention64(c["past"], c["x"], c["W"], c["H"], mask="top_left")
     if c["past"].shape[1] and c["use_cache"] else None),
    ("the cache was ignored: the new tokens attended only to themselves, not to the {T} cached tokens before "
     "them.",
     lambda c: _attention64(_none(c), c["x"], c["W"], c["H"]) if c["past"].shape[1] and c["use_cache"] else None),
    ("with use_cache=False the call attended to the cached tokens too; it must attend (causally) over x alone.",
     lambda c: _attention64(c["past"], c["x"], c["W"], c["H"])
     if c["past"].shape[1] and not c["use_cache"] else None),
    ("with use_cache=False the call attended to the cache, and without a causal mask.",
     lambda c: _attention64(c["past"], c["x"], c["W"], c["H"], mask="none")
     if c["past"].shape[1] and not c["use_cache"] and c["x"].shape[1] > 1 else None),
    ("the tokens of earlier use_cache=False calls were added to the cache; with use_cache=False the cache must "
     "be left untouched.",
     lambda c: _attention64(np.concatenate(c["every"], axis=1), c["x"], c["W"], c["H"])
     if c["use_cache"] and len(c["every"]) > c["n_cached"] else None),
    ("scores were scaled by 1/sqrt(d_model) instead of 1/sqrt(d_k) (d_k = d_model // num_heads).",
     lambda c: _attention64(_seen(c), c["x"], c["W"], c["H"], scale="d_model")),
    ("scores were divided by d_k (1/sqrt(d_k) applied twice) instead of by sqrt(d_k).",
     lambda c: _attention64(_seen(c), c["x"], c["W"], c["H"], scale="twice")),
    ("scores were not scaled by 1/sqrt(d_k).",
     lambda c: _attention64(_seen(c), c["x"], c["W"], c["H"], scale="none")),
    ("the output projection W_o was not applied.",
     lambda c: _attention64(_seen(c), c["x"], c["W"], c["H"], out_proj=False)),
    ("heads were split with a plain reshape to (B, H, L, d_k); split as reshape(B, L, H, d_k) then swap axes 1 "
     "and 2 (and merge with the inverse).",
     lambda c: _attention64(_seen(c), c["x"], c["W"], c["H"], heads="reshape") if c["x"].shape[1] > 1 else None),
)


def _seen(c: dict) -> np.ndarray:
    """The tokens a call attends to before its own: the cache with use_cache=True, none without."""
    return c["past"] if c["use_cache"] else _none(c)


def diagnose(ctx: JudgeContext, got: np.ndarray, tol: Tolerance) -> str | None:
    """Name the likely mistake behind a wrong ``forward`` output, or None: the one replayed mistake
    (``FORWARD_MISTAKES``) whose float64 output this call gave, when every other ``forward`` call of
    the run (every sequence) is right or that mistake's (``right_or_variant_in_every_call``: a scale
    hard-coded as 0.25 is 1/sqrt(d_model) where d_model = 16 and 1/d_k where d_k = 4, neither
    elsewhere, confuser ``scale_fixed_at_one_quarter``)."""
    if np.isnan(got).any():
        # no evidence of a cause (a fully masked row, a max taken before masking, an overflow ...)
        bad = np.isnan(got).any(axis=-1)
        return Symptom(f"The output contains NaN in {int(bad.sum())} of {bad.size} token rows "
                       f"(first at {tuple(int(i) for i in np.argwhere(bad)[0])}).")
    call = _forward_call(ctx)
    # evidence: the output is that mistake's, recomputed in float64 on this case; a sentence is named
    # only when exactly one mistake gives the output (1/sqrt(d_model) and a double 1/sqrt(d_k) are the
    # same number when num_heads == d_k)
    found = []
    for index, (sentence, replay) in enumerate(FORWARD_MISTAKES):
        alt = replay(call)
        if alt is not None and close_enough(got, alt, tol):
            found.append(index)
    if len(found) != 1:
        return None
    sentence, replay = FORWARD_MISTAKES[found[0]]
    forward = {s.wire["target"] for s in ctx.plan.steps if s.wire.get("op") == "method" and "x" in (s.meta or {})}
    if not right_or_variant_in_every_call(ctx, lambda sub: replay(_forward_call(sub)), sorted(forward),
                                          key=("forward", found[0])):
        return None
    return sentence.format(L=call["x"].shape[1], T=call["past"].shape[1])


# -- judges for cache state ------------------------------------------------------------------------

def _empty(desc: dict | None) -> bool:
    """A cache holding no tokens: None, or an array with T = 0."""
    return bool(desc) and (desc.get("kind") == "none" or (
        desc.get("kind") == "array" and len(desc["shape"]) == 4 and desc["shape"][2] == 0))


def _same(got: np.ndarray, want: np.ndarray) -> bool:
    """Whether ``got`` holds ``want``'s values (same shape, float32-level closeness: the cache's dtype
    is not judged here)."""
    return got.shape == want.shape and bool(np.all(np.isfinite(got))) and \
        np.allclose(got.astype(np.float64), want, rtol=1e-4, atol=1e-5)


def _shape_hint(ctx: JudgeContext, shape: tuple, expected: tuple) -> str | None:
    """What a cache of the wrong ``shape`` shows: a cause only with evidence on the candidate's own
    values, else a ``Symptom`` (issue 24).

    * ``(B, T, H * d_k)`` or ``(B, T, H, d_k)``: a cause (heads not split / axes swapped) only when the
      values are the true keys in that layout;
    * more than T positions: "a preallocated buffer" only when its first T positions are the true
      keys and every position after them holds one constant (zeros: never written); a cache whose
      tokens are appended twice, or one holding other tokens, gets the symptom only;
    * fewer than T positions: the symptom.
    """
    B, H, T, d_k = expected
    golden = output_array(ctx.golden)
    got = output_array(ctx.got)
    want = golden.astype(np.float64) if golden is not None else None
    if want is None or got is None:
        return None
    if shape == (B, T, H * d_k):
        if _same(got, want.transpose(0, 2, 1, 3).reshape(B, T, H * d_k)):
            return "the cache holds keys/values before splitting heads; store them as (B, H, T, d_k)."
        return Symptom(f"The cache has shape (B, T, {H * d_k}): it is not split into heads as (B, H, T, d_k).")
    if shape == (B, T, H, d_k):
        if _same(got, want.transpose(0, 2, 1, 3)):
            return "the time and head axes are swapped; store (B, H, T, d_k)."
        return Symptom("The cache's axes 1 and 2 are (T, H) where (H, T) is expected.")
    if len(shape) == 4 and shape[:2] == (B, H) and shape[3] == d_k and shape[2] > T:
        head, rest = got[:, :, :T], got[:, :, T:]
        unused = rest.size and np.all(np.isfinite(rest)) and np.all(rest == rest.reshape(-1)[0])
        if _same(head, want) and unused:
            return (f"the cache exposes {shape[2]} positions but only T = {T} tokens were seen: its first T "
                    "positions are the right ones and the rest hold one constant, as when a preallocated buffer "
                    "is exposed whole; expose (and attend to) only the filled part ([:, :, :T]).")
        where = "are" if _same(head, want) else "are not"
        return Symptom(f"The cache holds {shape[2]} positions after T = {T} tokens; its first T positions "
                       f"{where} the keys/values of the tokens seen.")
    if len(shape) == 4 and shape[:2] == (B, H) and shape[3] == d_k and shape[2] < T:
        return Symptom(f"The cache holds {shape[2]} positions after T = {T} tokens.")
    return None


def cache_shape(name: str):
    """Judge: the attribute is None (no tokens yet) or an array of shape (B, H, T, d_k)."""

    def judge(ctx: JudgeContext) -> Outcome:
        failed = failure_from_exception(ctx)
        if failed:
            return failed
        want = output_descriptor(ctx.golden)
        got = output_descriptor(ctx.got)
        if want.get("kind") == "none":
            if _empty(got):
                return Outcome(Verdict.PASSED)
            return Outcome(Verdict.FAILED, f"'{name}' should be None (no tokens cached yet), got "
                           f"{describe_value(got)}.")
        expected = tuple(want["shape"])
        if not got or got.get("kind") != "array":
            return Outcome(Verdict.FAILED, f"'{name}' should be an array of shape {expected} (B, H, T, d_k), "
                           f"got {describe_value(got)}.")
        shape = tuple(got["shape"])
        if shape == expected:
            return Outcome(Verdict.PASSED, "", {"shape": list(shape)})
        B, H, T, d_k = expected
        hint = _shape_hint(ctx, shape, expected)
        msg = shape_message(name, shape, expected) + f" (B, H, T, d_k) after T = {T} tokens."
        message, noted = with_hint(msg, hint)
        return Outcome(Verdict.FAILED, message, {"got_shape": list(shape), "expected_shape": list(expected), **noted})

    return judge


def cache_values(name: str):
    """Judge: the attribute holds the keys (or values) of every token seen, split into heads, as the
    reference's does: shape first (as ``cache_shape``), then values under the dtype-aware tolerance
    (any floating dtype accepted for the cache itself; outputs are where dtypes are judged)."""
    shape_judge = cache_shape(name)
    values_judge = close(names=(name,))
    other = "v_cache" if name == "k_cache" else "k_cache"

    def judge(ctx: JudgeContext) -> Outcome:
        shaped = shape_judge(ctx)
        if shaped.verdict != Verdict.PASSED or output_descriptor(ctx.golden).get("kind") == "none":
            return shaped
        outcome = values_judge(ctx)
        if outcome.verdict != Verdict.FAILED:
            return outcome
        got = output_array(ctx.got)
        golden = output_array(ctx.golden).astype(np.float64)
        sibling = ctx.golden_steps.get(ctx.step.id.replace(name, other))
        hint = None
        if sibling is not None and output_array(sibling) is not None and got is not None \
                and np.allclose(got, output_array(sibling), rtol=1e-4, atol=1e-5):
            what = "values" if name == "k_cache" else "keys"  # evidence: this attribute equals the other's answer
            hint = f"'{name}' holds the {what} of the tokens seen, which belong in '{other}'."
        elif got is not None and got.shape == golden.shape:
            for power, what in ((-0.5, "divided by sqrt(d_k)"), (0.5, "multiplied by sqrt(d_k)")):
                # evidence: this cache is the true one times d_k ** power, and so is every other read of
                # this attribute in the run that is not right (at its own d_k: a constant folded into
                # the keys is that factor at one d_k only, confuser key_scale_folded_fixed)
                if _scaled_cache(got, golden, power) and _scaled_in_every_read(ctx, name, power):
                    hint = f"the cached {name[0]}-projections are {what}; cache the plain projections and scale the scores."
        message, extra = with_hint(outcome.message, hint)
        return Outcome(Verdict.FAILED, message, {**outcome.details, **extra})

    return judge


def _scaled_cache(got: np.ndarray | None, golden: np.ndarray | None, power: float) -> bool:
    """Whether ``got`` is the true cache ``golden`` (B, H, T, d_k) times d_k ** ``power``."""
    if got is None or golden is None or got.shape != golden.shape:
        return False
    factor = golden.shape[-1] ** power
    return bool(np.allclose(got, golden.astype(np.float64) * factor, rtol=1e-4, atol=1e-5))


def _scaled_in_every_read(ctx: JudgeContext, name: str, power: float) -> bool:
    """Whether every other read of attribute ``name`` in the run (every sequence) is right or is the
    true cache times its own d_k ** ``power``; reads of the other attribute are not its evidence."""
    targets = tuple({s.wire.get("target") for s in ctx.plan.steps if s.wire.get("op") == "getattr"})

    def holds(sub: JudgeContext, out: np.ndarray) -> bool:
        if sub.step.wire.get("name") != name:
            return True
        golden = output_array(sub.golden)
        if golden is None or out.shape != golden.shape:
            return False
        return bool(np.allclose(out, golden, rtol=1e-4, atol=1e-5)) or _scaled_cache(out, golden, power)

    return holds_in_every_call(ctx, holds, targets)


def cache_unchanged(name: str, before_step: str):
    """Judge: the attribute equals (bit for bit) what the candidate's ``before_step`` read."""

    def judge(ctx: JudgeContext) -> Outcome:
        failed = failure_from_exception(ctx)
        if failed:
            return failed
        before = ctx.candidate_steps.get(before_step)
        if before is None or not before.report.get("ok"):
            return Outcome(Verdict.ERROR, f"Could not read '{name}' before the use_cache=False call.")
        b, a = output_descriptor(before), output_descriptor(ctx.got)
        if _empty(b) and _empty(a):
            return Outcome(Verdict.PASSED)
        same = (b and a and b.get("kind") == a.get("kind") == "array" and b["shape"] == a["shape"]
                and np.array_equal(before.arrays[b["key"]], ctx.got.arrays[a["key"]], equal_nan=True))
        if same:
            return Outcome(Verdict.PASSED)
        return Outcome(Verdict.FAILED, f"forward(x, ..., use_cache=False) changed '{name}': before the call it "
                       f"was {describe_value(b)}, after it {describe_value(a)}. With use_cache=False the cache "
                       "must be left untouched.", {"before": b, "after": a})

    return judge


def returned_normally(ctx: JudgeContext) -> Outcome:
    """Judge: the call returned without raising (its effect is judged by later steps)."""
    return failure_from_exception(ctx) or Outcome(Verdict.PASSED)


# -- the plan --------------------------------------------------------------------------------------

class _Scenario:
    """Builds the steps of one stateful scenario: one object, one sequence of chunks."""

    def __init__(self, b: PlanBuilder, name: str, rng: np.random.Generator, *, B: int, D: int, H: int,
                 dtype=np.float32, check: str, track: str = "numpy"):
        self.b, self.name, self.rng, self.track = b, name, rng, track
        self.B, self.D, self.H, self.dtype, self.check = B, D, H, dtype, check
        self.past: list[str] = []
        self.every: list[str] = []     # every x since the last clear, cached or not (for diagnoses)
        self.n = 0
        scale = 1.0 / math.sqrt(D)
        self.W = []
        for w in ("W_q", "W_k", "W_v", "W_o"):
            arr = (rng.standard_normal((D, D)) * scale).astype(dtype)
            self.W.append(b.input(f"{name}.{w}", arr, track=track, label=w))
        b.construct(check, "CachedAttention", name, [b.value(D), b.value(H)],
                    describe=f"CachedAttention(d_model={D}, num_heads={H})", step_id=f"{name}.construct")

    @property
    def T(self) -> int:
        return sum(self.b.plan.arrays[n].shape[1] for n in self.past)

    def forward(self, L: int, *, use_cache: bool = True, check: str | None = None, judge=None,
                grad: bool = False, judged: bool = True) -> str:
        """Add a ``forward`` call of ``L`` new tokens; ``judged=False`` makes it set-up only (the cache a
        later judged call reads), judged by no check."""
        self.n += 1
        x = self.rng.standard_normal((self.B, L, self.D)).astype(self.dtype)
        xname = f"{self.name}.x{self.n}"
        kwargs = {} if use_cache else {"use_cache": self.b.value(False)}
        T = self.T
        where = (f"tokens {T}..{T + L - 1}" if L > 1 else f"token {T}") if use_cache else f"{L} tokens, cache of {T} kept aside"
        desc = (f"{self.name}: forward(x (B={self.B}, L_new={L}, D={self.D}) {np.dtype(self.dtype).name}"
                + (", use_cache=False" if not use_cache else "") + f") after {T} cached tokens ({where}), "
                f"num_heads={self.H}")
        weights = self.W
        backward = None
        if grad:  # fresh tensor arguments that require gradients (same stored values)
            weights = [self.b.input(w["tensor"], self.b.plan.arrays[w["tensor"]], track=self.track, label=w["label"],
                                    requires_grad=True) for w in self.W]
            self.b.array(f"{xname}.grad_out", self.rng.standard_normal((self.B, L, self.D)).astype(self.dtype))
            backward = {"grad_output": f"{xname}.grad_out", "wrt": ["x", "W_q", "W_k", "W_v", "W_o"]}
            desc += ", gradients of x and every weight"
        step = self.b.method(check or self.check, self.name, "forward",
                             [self.b.input(xname, x, track=self.track, label="x", requires_grad=grad), *weights],
                             kwargs, judge=(judge or close(diagnose=diagnose)) if judged else None,
                             backward=backward,
                             describe=desc, step_id=f"{self.name}.forward{self.n}",
                             meta={"x": xname, "past": list(self.past), "every": list(self.every),
                                   "W": [w.get("array", w.get("tensor")) for w in self.W],
                                   "H": self.H, "use_cache": use_cache})
        if use_cache:
            self.past.append(xname)
        self.every.append(xname)
        return step.id

    def read(self, check: str, judge_for=None, tag: str = "") -> list[str]:
        ids = []
        for attr in ("k_cache", "v_cache"):
            judge = judge_for(attr) if judge_for else cache_shape(attr)
            step = self.b.getattr(check, self.name, attr, judge=judge,
                                  describe=f"{self.name}: {attr} after {self.T} tokens",
                                  step_id=f"{self.name}.{attr}.{tag or self.n}")
            ids.append(step.id)
        return ids

    def clear(self) -> None:
        self.n += 1
        self.b.method(self.check, self.name, "clear_cache", judge=returned_normally,
                      describe=f"{self.name}: clear_cache()", step_id=f"{self.name}.clear{self.n}")
        self.past = []
        self.every = []


def build_plan(public_seed: int, hidden_seed: int, track: str = "numpy") -> Plan:
    """Build the kv_cache plan of ``track`` (``numpy`` or ``torch``): public scenarios from
    ``public_seed``, hidden ones from ``hidden_seed``; the torch track adds ``gradients``.

    Raises:
        ValueError: an unknown track.
    """
    if track not in ("numpy", "torch"):
        raise ValueError(f"kv_cache has no {track!r} track")
    b = PlanBuilder()
    rng = np.random.default_rng(public_seed)

    def _Sequence(*args, **kwargs):  # every scenario in this plan's track
        return _Scenario(*args, **kwargs, track=track)

    # prefill of 5 tokens, then 6 single-token decode steps; cache shapes read after every step
    s = _Sequence(b, "decode", rng, B=1, D=16, H=4, check="prefill_decode")
    s.read("cache_shapes", tag="initial")
    s.forward(5)
    s.read("cache_shapes")
    for _ in range(6):
        s.forward(1)
        s.read("cache_shapes")

    # chunked prefill with uneven chunks, then decode
    s = _Sequence(b, "chunked", rng, B=2, D=16, H=2, check="chunked_prefill")
    for L in (3, 1, 4, 1, 5):
        s.forward(L)
    s.read("cache_shapes")
    s.forward(1)
    s.forward(1)

    # use_cache=False: on a fresh object, then on an object holding a cache
    s = _Sequence(b, "nocache", rng, B=2, D=12, H=3, check="no_cache_output")
    before = s.read("no_cache_state", judge_for=lambda _a: None, tag="before1")
    s.forward(4, use_cache=False)
    s.read("no_cache_state", judge_for=lambda a: cache_unchanged(a, before[0 if a == "k_cache" else 1]),
           tag="after1")
    s.forward(3, check="no_cache_state")         # must attend over these 3 tokens only
    before = s.read("no_cache_state", judge_for=lambda _a: None, tag="before2")
    s.forward(5, use_cache=False)
    s.forward(1, use_cache=False)
    s.read("no_cache_state", judge_for=lambda a: cache_unchanged(a, before[0 if a == "k_cache" else 1]),
           tag="after2")
    s.forward(1, check="no_cache_state")          # the cache must still hold exactly the 3 cached tokens
    s.forward(2, check="no_cache_state")

    # clear_cache(), then a new sequence on the same object
    s = _Sequence(b, "clear", rng, B=2, D=16, H=4, check="clear_cache")
    s.forward(4)
    s.forward(1)
    s.clear()
    s.read("clear_cache", tag="cleared")
    s.forward(3)
    s.read("clear_cache")
    s.forward(1)
    s.forward(2)

    # cache contents: the keys/values of every token, after an uneven prefill and after decoding
    s = _Sequence(b, "contents", rng, B=2, D=12, H=3, check="cache_contents")
    s.forward(4)
    s.forward(2)
    s.read("cache_contents", judge_for=cache_values, tag="prefill")
    s.forward(1)
    s.read("cache_contents", judge_for=cache_values, tag="decode")

    # a long sequence: a cache must keep every token, not a window of recent ones
    s = _Sequence(b, "long", rng, B=1, D=16, H=4, check="long_sequence")
    s.forward(37)
    for _ in range(3):
        s.forward(1)
    s.read("long_sequence", judge_for=cache_values, tag="end")

    # batch > 1 with distinct sequences
    s = _Sequence(b, "batch", rng, B=3, D=16, H=4, check="batch")
    s.forward(4)
    for _ in range(3):
        s.forward(1)
    s.forward(2)
    s.read("cache_shapes")

    # float64 end to end
    s = _Sequence(b, "f64", rng, B=2, D=16, H=2, dtype=np.float64, check="float64")
    s.forward(3)
    s.forward(2)
    s.forward(1)
    s.forward(1)

    # x and the weights are left as they were (the conventions: inputs are never modified in place),
    # judged on their own whatever the values; on their own stream so later cases keep their inputs
    s = _Sequence(b, "unchanged", np.random.default_rng([public_seed, 18]), B=2, D=12, H=3, check="inputs_unchanged")
    s.forward(4, judge=inputs_unchanged())
    s.forward(1, judge=inputs_unchanged())
    s.forward(2, use_cache=False, judge=inputs_unchanged())

    # outputs keep the input dtype
    for dtype in (np.float32, np.float64):
        s = _Sequence(b, f"dtype_{np.dtype(dtype).name}", rng, B=1, D=8, H=2, dtype=dtype,
                      check="dtype_preserved")
        s.forward(3, judge=dtype_preserved())
        s.forward(1, judge=dtype_preserved())

    if track == "torch":
        grads = gradients_close(("x", "W_q", "W_k", "W_v", "W_o"))
        s = _Sequence(b, "grad_prefill", rng, B=2, D=12, H=3, dtype=np.float64, check="gradients")
        s.forward(5, grad=True, judge=grads)
        # After a cache filled without gradients, the gradients of this call's W_k/W_v depend on whether
        # the cached tokens' keys/values are recomputed with them: recomputing is decode_complexity's
        # mistake (one mistake, one deduction), so these cases judge x, W_q and W_o; W_k/W_v are judged
        # on the prefill above, and a detached new key/value still shows in the gradient of x.
        cached = gradients_close(("x", "W_q", "W_o"))
        # the calls that fill the cache are set-up, not value cases of this check (prefill_decode's)
        s = _Sequence(b, "grad_decode", rng, B=2, D=16, H=4, check="gradients")
        s.forward(4, judged=False)
        s.forward(1, grad=True, judge=cached)
        s = _Sequence(b, "grad_chunk", rng, B=1, D=16, H=2, dtype=np.float64, check="gradients")
        s.forward(3, judged=False)
        s.forward(3, grad=True, judge=cached)

    # Hidden sequences: the same kinds at every seed (heads, dtype, a batch of several sequences, a
    # prefill in chunks then single-token decoding); the seed draws d_k, B, the chunk lengths and values.
    hidden = np.random.default_rng(hidden_seed)
    for k, (H, dtype) in enumerate(((2, np.float32), (4, np.float64))):
        D = H * int(hidden.choice([d for d in (2, 3, 5, 6) if d != H]))
        s = _Sequence(b, f"hidden{k}", hidden, B=int(hidden.integers(2, 4)), D=D, H=H, dtype=dtype,
                      check="hidden_sequences")
        for L in hidden.integers(2, 6, size=3):
            s.forward(int(L))
        for _ in range(2):
            s.forward(1)
    return b.plan


#: Tokens of the probe's chunked-prefill and use_cache=False calls.
PROBE_CHUNK = 2


#: Sequences in the probe's batched decode step: enough that keys re-projected for a batch alone stand
#: out of the sum of the four paths by twice the bound (at 2 they were 1.5x over it).
PROBE_BATCH = 4


def probe_steps(b: PlanBuilder, probe, size: int, rng: np.random.Generator, track: str = "numpy") -> None:
    """Steps of the decode-complexity probe at cache length ``size``: a fresh object, an unmeasured
    prefill of ``size`` tokens, then three measured calls, one per path that reads the cache differently
    (d_model 32, 4 heads): a single-token decode step, a chunk of ``PROBE_CHUNK`` tokens appended to the
    cache (chunked prefill), and ``PROBE_CHUNK`` tokens with ``use_cache=False`` (which must not read the
    cache at all); and, on a second object, a decode step of a batch of ``PROBE_BATCH``. The probe sums
    what the four measured, so keys and values re-projected on one path only (e.g. for chunks but not
    for single tokens, or for a batch but not one sequence) still grow the sum with ``T``."""
    B, D, H = 1, 32, 4
    name = f"probe_T{size}"
    W = [b.input(f"{name}.{w}", (rng.standard_normal((D, D)) / math.sqrt(D)).astype(np.float64), track=track, label=w)
         for w in ("W_q", "W_k", "W_v", "W_o")]
    b.construct(probe.check, "CachedAttention", name, [b.value(D), b.value(H)], step_id=f"{name}.construct",
                describe=f"CachedAttention(d_model={D}, num_heads={H})")
    b.method(probe.check, name, "forward", [b.input(f"{name}.prefill", rng.standard_normal((B, size, D)), track=track, label="x"), *W],
             step_id=f"{name}.prefill", describe=f"prefill of {size} tokens")
    b.method(probe.check, name, "forward", [b.input(f"{name}.decode", rng.standard_normal((B, 1, D)), track=track, label="x"), *W],
             step_id=f"{name}.decode", measure=probe.measure(),
             meta={"probe": probe.check, "size": size, "path": "decode-step"},
             describe=f"one decode step after {size} cached tokens (d_model={D}, num_heads={H})")
    b.method(probe.check, name, "forward",
             [b.input(f"{name}.chunk", rng.standard_normal((B, PROBE_CHUNK, D)), track=track, label="x"), *W],
             step_id=f"{name}.chunk", measure=probe.measure(),
             meta={"probe": probe.check, "size": size, "path": "chunk"},
             describe=f"a chunk of {PROBE_CHUNK} tokens appended after {size + 1} cached tokens")
    b.method(probe.check, name, "forward",
             [b.input(f"{name}.nocache", rng.standard_normal((B, PROBE_CHUNK, D)), track=track, label="x"), *W,
              b.value(False)],
             step_id=f"{name}.nocache", measure=probe.measure(),
             meta={"probe": probe.check, "size": size, "path": "use_cache=False"},
             describe=f"{PROBE_CHUNK} tokens with use_cache=False while {size + PROBE_CHUNK + 1} tokens are cached")
    # a batch, on an object of its own: a cache kept (or keys re-projected) only when B > 1 is a
    # path of its own (helper hunt, issue 24: raw tokens re-projected at every call for B > 1 had full
    # marks while the probe decoded one sequence)
    batched = f"{name}b"
    b.construct(probe.check, "CachedAttention", batched, [b.value(D), b.value(H)], step_id=f"{batched}.construct",
                describe=f"CachedAttention(d_model={D}, num_heads={H})")
    b.method(probe.check, batched, "forward",
             [b.input(f"{batched}.prefill", rng.standard_normal((PROBE_BATCH, size, D)), track=track, label="x"), *W],
             step_id=f"{batched}.prefill", describe=f"prefill of a batch of {PROBE_BATCH} x {size} tokens")
    b.method(probe.check, batched, "forward",
             [b.input(f"{batched}.decode", rng.standard_normal((PROBE_BATCH, 1, D)), track=track, label="x"), *W],
             step_id=f"{batched}.decode", measure=probe.measure(),
             meta={"probe": probe.check, "size": size, "path": "batched decode-step"},
             describe=f"one decode step of a batch of {PROBE_BATCH} after {size} cached tokens")
