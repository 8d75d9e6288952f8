"""Host-side checks for `rope`: the plan of public and hidden cases, and how each is judged.

Every case calls ``apply_rope(x, positions[, base])`` with the arguments positional and compares
with the float64 golden answer under the dtype-aware tolerance (the reference and the Hugging Face
style baseline in ``baselines/`` set the same-dtype error). ``relative_position`` grades the
property that makes RoPE useful: the score of a query rotated at ``m`` and a key rotated at ``n``
equals the score at ``(m + s, n + s)``. Diagnoses replay known mistakes in float64 (``rope64``) and
name one only when exactly that one reproduces the candidate's output.

Two tracks build the same cases (``build_plan(..., track=...)``): ``torch`` (the default) hands over
tensors and integer tensors of positions, grades the gradient with respect to ``x`` and float16 and
bfloat16; ``numpy`` hands over arrays (positions as lists or integer arrays), grades float16 as its
half precision and no gradient. Each track requires its own result kind, judged
by ``dtype_preserved`` alone (one mistake, one deduction; value checks judge values only).
"""

from __future__ import annotations

import numpy as np

from grader.judge.compare import compare_arrays
from grader.judge.judges import (JudgeContext, Outcome, Symptom, close, dtype_preserved, failure_from_exception,
                                 gradients_close, inputs_unchanged, output_array, raises,
                                 replayed_mistakes)
from grader.judge.tolerance import Tolerance
from grader.judge.verdicts import Verdict
from grader.run.plan import Plan, PlanBuilder

ENTRY = "apply_rope"


def rope64(x: np.ndarray, positions, base: float = 10000.0, *, layout: str = "rotate_half",
           freq: str = "pairs", swap: bool = False, restart: bool = False, sign: float = 1.0,
           no_minus: bool = False) -> np.ndarray:
    """RoPE in float64 NumPy, with switches for known mistakes (host only).

    Args:
        x: (..., L, d) array, d even.
        positions: L integers.
        base: frequency base.
        layout: ``rotate_half`` (right: feature j pairs with j + d/2, GPT-NeoX / HF LLaMA) or
            ``interleaved`` (features 2i and 2i+1 form pair i: RoFormer, Meta LLaMA, GPT-J).
        freq: ``pairs`` (right: base^(-2i/d)) or ``over_d`` (base^(-i/d)).
        swap: cos and sin exchanged (``x * sin + rotate_half(x) * cos``).
        restart: positions replaced by 0 .. L-1 (the cache offset forgotten).
        sign: -1 rotates by -theta (``rotate_half`` returning ``[x2, -x1]``).
        no_minus: ``rotate_half`` returning ``[x2, x1]`` (a reflection, not a rotation).

    Returns:
        (..., L, d) float64 array.
    """
    x = np.asarray(x, dtype=np.float64)
    L, d = x.shape[-2], x.shape[-1]
    pos = np.arange(L, dtype=np.float64) if restart else np.asarray(positions, dtype=np.float64)  # (L,)
    i = np.arange(d // 2, dtype=np.float64)
    inv = base ** (-2.0 * i / d) if freq == "pairs" else base ** (-i / d)          # (d/2,)
    theta = pos[:, None] * inv[None, :]                                             # (L, d/2)
    c, s = np.cos(theta), np.sin(theta)
    if swap:
        c, s = s, c
    if layout == "rotate_half":
        x1, x2 = x[..., : d // 2], x[..., d // 2:]
    else:
        x1, x2 = x[..., 0::2], x[..., 1::2]
    y1, y2 = x1 * c - sign * x2 * s, x2 * c + sign * x1 * s                        # (..., L, d/2)
    if no_minus:
        y1 = x1 * c + x2 * s
    if layout == "rotate_half":
        return np.concatenate([y1, y2], axis=-1)
    out = np.empty_like(x)
    out[..., 0::2], out[..., 1::2] = y1, y2
    return out


MISTAKES = (
    ({"layout": "interleaved"}, "this is the interleaved-pair layout of RoFormer, Meta's LLaMA and GPT-J "
                                "(features 2i and 2i+1 rotated together); this exercise asks for rotate_half "
                                "(GPT-NeoX / Hugging Face LLaMA): feature i pairs with feature i + d/2."),
    ({"restart": True}, "the positions were restarted at 0: row r was rotated as position r, not positions[r] "
                        "(after T cached tokens the new rows are positions T .. T+L-1)."),
    ({"freq": "over_d"}, "the frequencies were base^(-i/d) over the features; they are base^(-2i/d) over the "
                         "d/2 pairs (i < d/2)."),
    ({"swap": True}, "sin and cos were swapped: the result is x * cos(theta) + rotate_half(x) * sin(theta)."),
    ({"sign": -1.0}, "the rotation went the wrong way (by -theta), as when rotate_half returns [x2, -x1]; "
                     "rotate_half([x1, x2]) is [-x2, x1]."),
    ({"no_minus": True}, "rotate_half lost its minus sign: it returned [x2, x1], which makes a reflection, not a "
                         "rotation; rotate_half([x1, x2]) is [-x2, x1]."),
)

#: A symptom, not a cause: an error within a few float32 ulp of each angle is what a float32 angle table
#: gives, and also a float64 table reduced modulo a float32 2*pi or a float64 result returned as float32
#: (confusers twopi_remainder_float32_const, returns_float32_except_half). The bank's
#: float32_table_for_float64 names the table where its replay is the candidate's.
FLOAT32_TABLE = Symptom("Float64 inputs were rotated only to about float32 precision: every entry is within a few "
                        "float32 ulp of its angle of the answer, the error a float32 angle table (or its cos/sin) "
                        "gives; float64 inputs are rotated at float64 precision throughout.")


def _float32_table(x: np.ndarray, positions, base: float, got: np.ndarray) -> bool:
    """Whether ``got`` is the right rotation up to the rounding of float32 angles (a few ulp of each)."""
    x = np.asarray(x, dtype=np.float64)
    d = x.shape[-1]
    theta = np.asarray(positions, dtype=np.float64)[:, None] * base ** (-2.0 * np.arange(d // 2) / d)  # (L, d/2)
    norm = np.sqrt(x[..., : d // 2] ** 2 + x[..., d // 2:] ** 2)                                       # (..., L, d/2)
    bound = 8.0 * np.finfo(np.float32).eps * (np.abs(theta) + 1.0) * norm + 1e-12
    err = np.abs(got.astype(np.float64) - rope64(x, positions, base))
    return bool(np.all(err <= np.concatenate([bound, bound], axis=-1)))


def _call(ctx: JudgeContext) -> tuple[np.ndarray, list[int], float]:
    n = len(ctx.step.wire["args"])
    pos = ctx.arg(1)
    return (np.asarray(ctx.arg(0), dtype=np.float64), [int(p) for p in np.asarray(pos).ravel()],
            float(ctx.arg(2)) if n > 2 else 10000.0)


def diagnose(ctx: JudgeContext, got: np.ndarray, tol: Tolerance) -> str | None:
    """Name the mistake behind a wrong rotation when exactly one known mistake reproduces it, in this
    call and every other call of the run is right or that mistake's (``right_or_variant_in_every_call``:
    a fixed base of 100 is base^(-i/d) at the default base only), or None."""
    x, positions, base = _call(ctx)
    golden = rope64(x, positions, base)
    if got.shape != golden.shape or not np.isfinite(got).all():
        return None
    named = replayed_mistakes(ctx, got, golden, tol, MISTAKES, lambda c, switches: rope64(*_call(c), **switches))
    if tol.dtype == "float64" and _float32_table(x, positions, base, got):
        named.append(FLOAT32_TABLE)
    return named[0] if len(named) == 1 else None


# -- the relative-position property -------------------------------------------------------------------

def _scores(q: np.ndarray, k: np.ndarray) -> np.ndarray:
    """(..., L_q, L_k) dot products of rotated queries and keys, in float64."""
    return q.astype(np.float64) @ np.swapaxes(k.astype(np.float64), -1, -2)


def relative_position(steps: tuple[str, str, str, str], shift: int):
    """Judge: ``scores(q at P_q, k at P_k) == scores(q at P_q + s, k at P_k + s)`` for the four steps
    (query, key, shifted query, shifted key), and the scores do depend on the positions.

    The allowed difference is ``max(1e-3 * max|scores|, 5 * the reference's own difference)``: a
    correct rotation in float32 at positions near 1000 differs by up to ~2e-4 of the scale (float32
    angles), a transformation that is not a rotation by O(1).
    """

    def judge(ctx: JudgeContext) -> Outcome:
        outs = []
        for sid in steps:
            sub = JudgeContext(step=ctx.plan.step(sid), plan=ctx.plan, got=ctx.candidate_steps.get(sid),
                               expected=ctx.expected_steps[sid], golden=ctx.golden_steps[sid],
                               not_run_reason=ctx.not_run_reason)
            failed = failure_from_exception(sub)
            if failed:
                return failed
            arr = output_array(sub.got)
            want = output_array(sub.golden)
            if arr is None or arr.shape != want.shape:
                return Outcome(Verdict.FAILED, f"apply_rope should return a tensor of shape {tuple(want.shape)} "
                               f"in step {sid}; got {'no array' if arr is None else tuple(arr.shape)}.")
            outs.append(arr)
        got_base, got_shift = _scores(outs[0], outs[1]), _scores(outs[2], outs[3])
        ref = [output_array(ctx.expected_steps[s]) for s in steps]
        ref_gap = float(np.max(np.abs(_scores(ref[0], ref[1]) - _scores(ref[2], ref[3]))))
        gold = _scores(output_array(ctx.golden_steps[steps[0]]), output_array(ctx.golden_steps[steps[1]]))
        allowed = max(1e-3 * float(np.max(np.abs(gold))), 5.0 * ref_gap)
        cmp = compare_arrays("scores after the shift", got_shift, got_base,
                             Tolerance(rtol=0.0, atol=allowed, dtype="float32"))
        details = {"shift": shift, "allowed": allowed, **cmp.details}
        if not cmp.ok:
            return Outcome(Verdict.FAILED, f"The score of a rotated query and key changed when both positions "
                           f"moved by {shift}: RoPE's scores depend only on the position difference "
                           f"(a rotation by theta_m then by -theta_n).\n{cmp.message}", details)
        q0 = np.asarray(JudgeContext(step=ctx.plan.step(steps[0]), plan=ctx.plan, got=None, expected=ctx.expected,
                                     golden=ctx.golden).arg(0))
        k0 = np.asarray(JudgeContext(step=ctx.plan.step(steps[1]), plan=ctx.plan, got=None, expected=ctx.expected,
                                     golden=ctx.golden).arg(0))
        if float(np.max(np.abs(got_base - _scores(q0, k0)))) <= allowed:
            return Outcome(Verdict.FAILED, "The scores are those of the unrotated query and key: the "
                           "positions were not applied.", details)
        return Outcome(Verdict.PASSED, "", details)

    return judge


# -- cases --------------------------------------------------------------------------------------------

class _Cases:
    """Adds cases to a ``PlanBuilder``; array names are numbered, so cases never collide."""

    def __init__(self, b: PlanBuilder, track: str):
        self.b = b
        self.n = 0
        self.track = track

    def positions(self, name: str, pos: list[int], kind: str) -> dict:
        """``pos`` as a list (``kind='list'``) or as an integer tensor (torch) / array (numpy) of dtype ``kind``."""
        if kind == "list":
            return self.b.value([int(p) for p in pos])
        if self.track == "numpy":
            return self.b.array(name, np.asarray(pos, dtype=kind), label="positions")
        return self.b.tensor(name, np.asarray(pos, dtype=np.int64), dtype=kind, label="positions")

    def x(self, name: str, x: np.ndarray, dtype: str, requires_grad: bool = False) -> dict:
        """``x`` as a tensor of ``dtype`` (torch) or an array of ``dtype`` (numpy; no bfloat16 there)."""
        if self.track == "numpy":
            return self.b.array(name, x.astype(dtype), label="x")
        store = np.float64 if dtype == "float64" else np.float32
        return self.b.tensor(name, x.astype(store), dtype=dtype, requires_grad=requires_grad, label="x")

    def add(self, check: str, rng: np.random.Generator, shape: tuple[int, ...], *, positions=None,
            offset: int = 0, dtype: str = "float32", pos_kind: str = "int64", base: float | None = None,
            grad: bool = False, judge=None, note: str = "") -> str:
        self.n += 1
        n, b = self.n, self.b
        L = shape[-2]
        pos = list(positions) if positions is not None else list(range(offset, offset + L))
        x = rng.standard_normal(shape)
        store = np.float64 if dtype == "float64" else np.float32
        args = [self.x(f"x{n}", x, dtype, grad), self.positions(f"positions{n}", pos, pos_kind)]
        if base is not None:
            args.append(b.value(base))
        backward = None
        if grad:
            b.array(f"grad_out{n}", rng.standard_normal(shape).astype(store))
            backward = {"grad_output": f"grad_out{n}", "wrt": ["x"]}
        kind = "tensor" if self.track == "torch" else "array"
        shown = pos if len(pos) <= 6 else f"[{pos[0]}, {pos[1]}, ..., {pos[-1]}]"
        describe = (f"x: shape {shape}, {dtype}; positions {shown} as "
                    f"{'a list' if pos_kind == 'list' else 'a ' + pos_kind + ' ' + kind}"
                    + (f"; base={base:g}" if base is not None else "") + ("; gradient of x" if grad else "")
                    + (f"; {note}" if note else ""))
        step = b.call(check, ENTRY, args, judge=judge or close(diagnose=diagnose),
                      describe=describe,
                      backward=backward)
        return step.id

    def relative(self, check: str, rng: np.random.Generator, lead: tuple[int, ...], L_q: int, L_k: int, d: int,
                 shift: int) -> None:
        b = self.b
        self.n += 1
        n = self.n
        q = rng.standard_normal((*lead, L_q, d)).astype(np.float32)
        k = rng.standard_normal((*lead, L_k, d)).astype(np.float32)
        p_q = [int(p) for p in rng.integers(0, 64, size=L_q)]
        p_k = [int(p) for p in rng.integers(0, 64, size=L_k)]
        ids = []
        for tag, x, pos in (("q", q, p_q), ("k", k, p_k), ("q_shift", q, [p + shift for p in p_q]),
                            ("k_shift", k, [p + shift for p in p_k])):
            name = f"rel{n}_{tag}"
            args = [self.x(f"{name}_x", x, "float32"), self.positions(f"{name}_pos", pos, "int64")]
            ids.append(b.call(check, ENTRY, args, describe=f"{tag}: shape {x.shape}, float32, positions {pos}").id)
        b.plan.steps[-1].judge = relative_position(tuple(ids), shift)
        b.plan.steps[-1].describe = (f"query {(*lead, L_q, d)} at positions {p_q} and key {(*lead, L_k, d)} at "
                                     f"{p_k}, then both shifted by {shift}; float32")

    def odd(self, check: str, rng: np.random.Generator, shape: tuple[int, ...]) -> None:
        self.n += 1
        b = self.b
        args = [self.x(f"x{self.n}", rng.standard_normal(shape), "float32"), b.value(list(range(shape[-2])))]
        b.call(check, ENTRY, args, judge=raises("ValueError", when=f"d={shape[-1]} is odd"),
               describe=f"x: shape {shape} (d odd), float32")


def build_plan(public_seed: int, hidden_seed: int, track: str = "torch") -> Plan:
    """Build the rope plan of ``track``: public cases from ``public_seed``, hidden ones from ``hidden_seed``.

    Raises:
        ValueError: an unknown track.
    """
    if track not in ("numpy", "torch"):
        raise ValueError(f"rope has no {track!r} track")
    b = PlanBuilder()
    c = _Cases(b, track)
    halves = ("float16", "bfloat16") if track == "torch" else ("float16",)
    rng = np.random.default_rng(public_seed)

    c.add("values", rng, (2, 3, 6, 8))
    c.add("values", rng, (5, 16))
    c.add("values", rng, (2, 7, 12), note="d = 12: not a power of two")
    c.add("values", rng, (1, 2, 4, 2), note="d = 2: one pair")
    c.add("cache_offset", rng, (2, 2, 3, 8), offset=37, note="decoding after 37 cached tokens")
    c.add("cache_offset", rng, (1, 4, 1, 16), offset=511, note="one new token after 511 cached tokens")
    c.add("cache_offset", rng, (3, 6, 8), positions=[9, 3, 3, 0, 12, 5], note="positions in any order")
    c.add("float64", rng, (2, 2, 5, 16), dtype="float64")
    # float64 positions stay below ~4100: beyond, float64's own rounding of the angle (~p * 2e-16 rad)
    # nears the float64 floor (atol 1e-11) and two correct formulations could disagree by more
    c.add("float64", rng, (2, 3, 32), offset=4000, dtype="float64", note="positions around 4000")
    c.add("float64", rng, (6, 8), dtype="float64", positions=[1000, 4095, 2048, 7, 3333, 1], note="positions up to 4095")
    for kind in ("list", "int32", "int16", "uint8"):
        c.add("positions_types", rng, (2, 4, 8), offset=3, pos_kind=kind)
    # any integer dtype means its whole range: uint8 positions past 127 overflow arithmetic done in uint8
    # (pos * 2, pos + pos) or a cast through int8; its own stream, so the cases after it keep their inputs
    c.add("positions_types", np.random.default_rng([public_seed, 41]), (2, 4, 8), offset=250, pos_kind="uint8",
          note="uint8 positions 250 .. 253")
    c.add("base", rng, (2, 5, 8), offset=2, base=500.0)
    c.add("base", rng, (2, 2, 4, 16), offset=10, base=500000.0, dtype="float64", note="LLaMA 3's base")
    for dtype in halves:
        c.add("half_precision", rng, (2, 2, 6, 16), dtype=dtype, offset=5)
        c.add("half_precision", rng, (3, 9, 8), dtype=dtype, offset=100)
    # its own stream, so the cases after it keep their inputs: positions past the integers that half
    # precision holds exactly (bfloat16 up to 256, float16 up to 2048), so positions cast to x's dtype
    # before the angles are formed are rounded (the contract forms them at float32 for half inputs)
    far = np.random.default_rng([public_seed, 47])
    for dtype in halves:
        c.add("half_precision", far, (2, 5, 16), dtype=dtype, offset=3001, note="positions 3001..3005 after a cache")
    for dtype in ("float32", "float64", *halves):
        c.add("dtype_preserved", rng, (2, 3, 8), dtype=dtype, judge=dtype_preserved())
    c.relative("relative_position", rng, (2, 2), 4, 6, 8, shift=97)
    c.relative("relative_position", rng, (3,), 5, 5, 16, shift=1000)
    for dtype in ("float64", "float32") if track == "torch" else ():
        c.add("grad_x", rng, (2, 2, 5, 8), dtype=dtype, offset=7, grad=True, judge=gradients_close(("x",)))
    unchanged = inputs_unchanged()
    c.add("input_unchanged", rng, (2, 5, 8), offset=4, judge=unchanged)
    c.add("input_unchanged", rng, (2, 2, 3, 6), dtype="float64", pos_kind="int32", offset=9, judge=unchanged)
    c.odd("odd_d", rng, (2, 4, 7))
    c.odd("odd_d", rng, (3, 1))

    hidden = np.random.default_rng(hidden_seed)
    for i in range(6):
        d = 2 * int(hidden.integers(1, 17))
        L = int(hidden.integers(1, 9))
        lead = tuple(int(v) for v in hidden.integers(1, 4, size=int(hidden.integers(0, 3))))
        dtype = "float64" if i % 2 else "float32"
        offset = int(hidden.integers(1, 300))
        c.add("hidden_values", hidden, (*lead, L, d), offset=offset, dtype=dtype,
              pos_kind=["list", "int64", "int32"][i % 3])
    return b.plan
