"""Host-side checks for `positional_encoding`: the plan of public and hidden cases, and how each is judged.

Every case calls ``sinusoidal_positional_encoding(seq_len, d_model[, offset])`` with the arguments
positional and compares the float32 result with the reference, whose angles are formed in float64
(so the expected values are the exact encoding rounded once to float32), under the float32
tolerance floor of ``grader.judge.tolerance``. Public value cases keep positions below 64, where a
float32 angle is off by less than the tolerance; ``large_positions`` goes up to 10^6, where it is
off by up to 0.03. Diagnoses replay known mistakes in float64 (``encoding64``) and name one only
when exactly that one reproduces the candidate's output.

Two tracks build the same cases (``build_plan(..., track=...)``): the inputs are integers either way;
``numpy`` must return a NumPy array and ``torch`` a ``torch.Tensor``, judged by ``dtype_float32`` alone
(``dtype_preserved``: one mistake, one deduction; value checks judge values only). There is nothing
to differentiate (the inputs are integers), so the torch track grades no gradients.
"""

from __future__ import annotations

import numpy as np

from grader.judge.judges import JudgeContext, close, dtype_preserved, raises, replayed_mistakes
from grader.judge.tolerance import Tolerance
from grader.run.plan import Plan, PlanBuilder

ENTRY = "sinusoidal_positional_encoding"


def encoding64(seq_len: int, d_model: int, offset: int = 0, *, layout: str = "interleaved",
               exponent: str = "2i", swap: bool = False, use_offset: bool = True) -> np.ndarray:
    """The encoding in float64, with switches for known mistakes (host only).

    Args:
        seq_len, d_model, offset: as in the contract (d_model even).
        layout: ``interleaved`` (right: sin in column 2i, cos in 2i+1) or ``concat`` (the
            tensor2tensor / MAE layout: sin of every frequency in the first half, cos in the second).
        exponent: ``2i`` (right: 10000^(-2i/d_model) for pair i), ``i`` (10000^(-i/d_model)), or
            ``column`` (column j uses 10000^(-j/d_model), so a pair's cos has another frequency).
        swap: cos in the even columns and sin in the odd ones.
        use_offset: False ignores ``offset`` (positions 0 .. seq_len-1).

    Returns:
        (seq_len, d_model) float64 array.
    """
    p = (offset if use_offset else 0) + np.arange(seq_len, dtype=np.float64)   # (L,)
    half = d_model // 2
    i = np.arange(half, dtype=np.float64)                                        # (d/2,)
    if exponent == "2i":
        freq_sin = freq_cos = np.power(10000.0, -2.0 * i / d_model)
    elif exponent == "i":
        freq_sin = freq_cos = np.power(10000.0, -i / d_model)
    else:  # column
        freq_sin, freq_cos = np.power(10000.0, -2.0 * i / d_model), np.power(10000.0, -(2.0 * i + 1) / d_model)
    s, c = np.sin(p[:, None] * freq_sin), np.cos(p[:, None] * freq_cos)        # (L, d/2) each
    if swap:
        s, c = c, s
    if layout == "concat":
        return np.concatenate([s, c], axis=1)                                   # (L, d)
    out = np.empty((seq_len, d_model))
    out[:, 0::2], out[:, 1::2] = s, c
    return out


MISTAKES = (
    ({"layout": "concat"}, "the sines and cosines were concatenated as [sin | cos] halves: that is the "
                           "tensor2tensor / MAE layout, a valid convention, but this exercise asks for the "
                           "interleaved one of Vaswani et al.: PE[:, 2i] = sin, PE[:, 2i+1] = cos of the "
                           "same angle."),
    ({"exponent": "i"}, "the frequencies used 10000^(i/d_model) for pair i; the exponent is 2i/d_model "
                        "(pair i owns columns 2i and 2i+1)."),
    ({"exponent": "column"}, "each column j used its own exponent j/d_model, so the cos column of a pair has "
                             "a different frequency from its sin column; both use 10000^(2i/d_model)."),
    ({"swap": True}, "sin and cos were swapped: PE[:, 2i] is the sin and PE[:, 2i+1] the cos."),
    ({"use_offset": False}, "the offset was ignored: row r encodes position offset + r, not r."),
)

FLOAT32_ANGLES = ("the encoding is right only to the precision of float32 angles: at position ~{pos:.3g} it is off "
                  "by as much as a float32 angle makes it (up to {err:.2g} radians), as when the angles "
                  "p / 10000^(2i/d_model) are computed in float32 (the positions, the frequencies or their "
                  "product, or a step such as a reduction by a float32 2*pi), or a constant such as 2*pi, "
                  "pi/2 or ln(10000) is typed to 6 or 7 digits. Form the angles in float64 from "
                  "full-precision constants and cast only the result to float32.")


def _call(ctx: JudgeContext) -> tuple[int, int, int]:
    n = len(ctx.step.wire["args"])
    return int(ctx.arg(0)), int(ctx.arg(1)), int(ctx.arg(2)) if n > 2 else 0


def _float32_angles(got: np.ndarray, seq_len: int, d_model: int, offset: int) -> bool:
    """Whether ``got`` is the encoding up to the rounding of float32 angles (a few ulp of each angle)."""
    p = offset + np.arange(seq_len, dtype=np.float64)
    angle = np.repeat(p[:, None] * np.power(10000.0, -np.arange(0, d_model, 2) / d_model), 2, axis=1)  # (L, d)
    bound = 8.0 * np.abs(angle) * np.finfo(np.float32).eps + 1e-5
    return bool(np.all(np.abs(got.astype(np.float64) - encoding64(seq_len, d_model, offset)) <= bound))


def diagnose(ctx: JudgeContext, got: np.ndarray, tol: Tolerance) -> str | None:
    """Name the mistake behind a wrong encoding when exactly one known mistake reproduces it and every
    other call of the run is right or that mistake's (``right_or_variant_in_every_call``), or None."""
    seq_len, d_model, offset = _call(ctx)
    golden = encoding64(seq_len, d_model, offset)
    if got.shape != golden.shape or not np.isfinite(got).all():
        return None
    named = replayed_mistakes(ctx, got, golden, tol, MISTAKES,
                              lambda c, switches: encoding64(*_call(c), **switches))
    if _float32_angles(got, seq_len, d_model, offset):
        top = offset + seq_len - 1
        named.append(FLOAT32_ANGLES.format(pos=top, err=top * float(np.finfo(np.float32).eps)))
    return named[0] if len(named) == 1 else None


def _describe(seq_len: int, d_model: int, offset: int | None) -> str:
    off = "" if offset is None else f", offset={offset}"
    return f"seq_len={seq_len}, d_model={d_model}{off}"


def build_plan(public_seed: int, hidden_seed: int, track: str = "numpy") -> Plan:
    """Build the positional_encoding plan of ``track``: fixed public cases, hidden ones from ``hidden_seed``.

    ``public_seed`` is unused: every public case is a fixed triple of integers.

    Raises:
        ValueError: an unknown track.
    """
    if track not in ("numpy", "torch"):
        raise ValueError(f"positional_encoding has no {track!r} track")
    b = PlanBuilder()
    judge = close(diagnose=diagnose)

    def add(check: str, seq_len: int, d_model: int, offset: int | None = None, *, judge_fn=judge,
            note: str = "") -> None:
        args = [b.value(seq_len), b.value(d_model)] + ([] if offset is None else [b.value(offset)])
        b.call(check, ENTRY, args, judge=judge_fn, describe=_describe(seq_len, d_model, offset) + note)

    for L, d in [(1, 2), (4, 4), (10, 16), (12, 6), (50, 64), (7, 10)]:
        add("values", L, d)
    for L, d, off in [(5, 8, 0), (6, 8, 3), (9, 12, 40), (1, 16, 17), (4, 2, 55)]:
        add("offset", L, d, off)
    for L, d, off in [(8, 64, 1_000_000 - 7), (4, 512, 999_000), (16, 32, 65_536), (3, 128, 123_457)]:
        add("large_positions", L, d, off, note=" (positions up to 10^6)")
    add("zero_length", 0, 8)
    add("zero_length", 0, 4, 10)
    for L, d in [(3, 5), (2, 1), (4, 7)]:
        add("odd_d_model", L, d, judge_fn=raises("ValueError", when=f"d_model={d} is odd"))
    add("negative_arguments", -1, 8, judge_fn=raises("ValueError", when="seq_len=-1 < 0"))
    add("negative_arguments", 4, 8, -3, judge_fn=raises("ValueError", when="offset=-3 < 0"))
    for L, d, off in [(3, 8, None), (5, 6, 2)]:
        add("dtype_float32", L, d, off, judge_fn=dtype_preserved())

    hidden = np.random.default_rng(hidden_seed)
    for i in range(6):
        L = int(hidden.integers(1, 20))
        d = 2 * int(hidden.integers(1, 40))
        # positions stay below 64 or go beyond 10^4: a float32-angle solution fails these cases at
        # every seed (or passes them at every seed), never by the luck of the draw
        off = int(hidden.integers(0, 40)) if i % 2 else int(hidden.integers(10_000, 1_000_000))
        add("hidden_values", L, d, off)
    return b.plan
