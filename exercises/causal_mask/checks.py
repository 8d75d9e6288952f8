"""Host-side checks for `causal_mask`: exact masks, ValueError, and a leakage probe.

Masks are compared by truthiness (nonzero / ``True`` = may attend), so bool, int and float 0/1
masks are all accepted; the shape must be exact. Beyond equality, the **leakage probe** feeds the
candidate's mask to a plain attention computed here on the host and changes one key/value position
at a time: every query the reference mask hides that position from must keep its output bit for bit,
otherwise the first leaking (query, key) pair is named.

Two tracks build the same cases (``build_plan(..., track=...)``): ``numpy`` hands over token ids as
arrays, ``torch`` as integer tensors (of the same dtype); masks come back as arrays or tensors and
are judged the same way. Masks are not differentiable: no gradient checks in either track.
"""

from __future__ import annotations

import numpy as np

from grader.judge.compare import shape_message
from grader.judge.judges import (JudgeContext, Outcome, Symptom, with_hint, describe_value, failure_from_exception,
                           holds_in_every_call, inputs_unchanged, output_array, output_descriptor, raises,
                           GraderBug)
from grader.run.plan import Plan, PlanBuilder
from grader.judge.verdicts import Verdict

#: Heads and per-head width of the probe's attention.
PROBE_HEADS, PROBE_DK = 2, 4


# -- masks computed independently of the reference, for diagnoses ------------------------------------

def _tril(seq_len: int, kv_len: int, offset: int) -> np.ndarray:
    """(L_q, L_k): key j visible to query i iff j <= i + offset."""
    return np.arange(kv_len)[None, :] <= np.arange(seq_len)[:, None] + offset


def _candidate_array(ctx: JudgeContext) -> tuple[np.ndarray | None, Outcome | None]:
    failed = failure_from_exception(ctx)
    if failed:
        return None, failed
    desc = output_descriptor(ctx.got)
    if not desc or desc.get("kind") != "array":
        return None, Outcome(Verdict.FAILED, f"'mask' should be an array (bool or 0/1), got {describe_value(desc)}.")
    return ctx.got.arrays[desc["key"]], None


def _additive_hint(got: np.ndarray) -> str | None:
    """An additive mask, named only when its values are one (0 where allowed and -inf, or one large
    negative number, where masked: nothing else). A NaN anywhere is no additive mask (a mask built as
    (1 - allowed) * -inf has NaN where it allows and no 0 at all: confuser additive_nan)."""
    if got.dtype.kind != "f" or not got.size or np.isnan(got).any():
        return None
    values = np.unique(got)
    negative = values[values != 0]
    if len(negative) == 1 and (np.isneginf(negative[0]) or negative[0] < -1e3) and len(values) == 2:
        return ("this looks like an additive mask (0 where allowed, -inf or a large negative number where "
                "masked); return a boolean mask where True (or 1) means 'may attend'.")
    return None


def _square_causal(got: np.ndarray, L: int) -> bool:
    """Whether ``got`` is the square causal mask of ``L`` queries (any leading singleton axes)."""
    return got.ndim >= 2 and got.size == L * L and tuple(got.shape[-2:]) == (L, L) \
        and np.array_equal((got != 0).reshape(L, L), _tril(L, L, 0))


def _kv_len_ignored_there(sub: JudgeContext, out: np.ndarray) -> bool:
    """Another create_causal_mask call ignored its kv_len too: where kv_len != seq_len it returned the
    square seq_len mask (a call without a distinct kv_len is no evidence either way)."""
    meta = sub.step.meta or {}
    L, S = meta.get("seq_len"), meta.get("kv_len")
    if L is None or S is None or S == L:
        return True
    return _square_causal(np.asarray(out), L)


def _diagnose_causal(meta: dict, truth: np.ndarray) -> str | None:
    L, S = meta["seq_len"], meta["kv_len"]
    off = S - L
    t = truth.reshape(L, S)
    if np.array_equal(~_tril(L, S, off), _tril(L, S, off - 1)):
        return None                                  # 1 x 1: too small to tell the mistakes apart
    if np.array_equal(t, ~_tril(L, S, off)):
        return ("the mask has the opposite polarity (it marks the keys to hide, e.g. the upper triangle); "
                "here True/nonzero means 'may attend'.")
    if np.array_equal(t, _tril(L, S, off - 1)):
        return "the diagonal is masked: query i must be allowed to attend to its own position (use j <= i, not j < i)."
    if off and np.array_equal(t, _tril(L, S, 0)):
        return (f"the mask is aligned top-left; with kv_len > seq_len the queries are the last seq_len positions, "
                f"so query i may attend to keys j <= i + (kv_len - seq_len) = i + {off} (bottom-right aligned).")
    if L == S and np.array_equal(t, _tril(L, S, 0).T):
        return ("the mask is the upper triangle (transposed): query i must see keys j <= i, not j >= i; "
                "True/nonzero means 'may attend'.")
    if t.all():
        return Symptom("Nothing is masked: every entry is True.")
    return None


ZERO_COMPARED = "padding was compared with 0 instead of pad_token={pad}."
PADDING_TARGETS = ("create_padding_mask", "create_combined_mask")


def _zero_compared_there(sub: JudgeContext, out: np.ndarray) -> bool:
    """Whether another padding or combined call is right where a comparison with 0 is right too, or is
    that comparison's mask: a hint read on one case (where 0 is the batch's smallest id, say) must
    explain every call (confuser pad_is_batch_min: `seq != seq.min()` is `seq != 0` there only)."""
    seq, pad = np.asarray(sub.arg(0)), sub.step.meta["pad_token"]
    L = seq.shape[1]
    causal = _tril(L, L, 0)[None, None] if sub.step.wire.get("target") == "create_combined_mask" else True
    right, variant = causal & (seq != pad)[:, None, None, :], causal & (seq != 0)[:, None, None, :]
    try:
        truth = np.broadcast_to(out != 0, right.shape)
    except ValueError:
        return False
    if np.array_equal(truth, right):
        return bool(np.array_equal(variant, right))
    return bool(np.array_equal(truth, variant))


def _diagnose_padding(meta: dict, seq: np.ndarray, got: np.ndarray, combined: bool) -> str | None:
    pad = meta["pad_token"]
    B, L = seq.shape
    keep = seq != pad                                              # (B, L)
    causal = _tril(L, L, 0)[None, None]                            # (1, 1, L, L)
    truth = got != 0
    shape = (B, 1, L, L) if combined else (B, 1, 1, L)

    def same(candidate: np.ndarray) -> bool:
        try:
            return np.array_equal(np.broadcast_to(truth, shape), np.broadcast_to(candidate, shape))
        except ValueError:
            return False

    def on_queries(k: np.ndarray) -> np.ndarray:
        return k[:, None, :, None]                                  # (B, 1, L, 1) hides query rows

    key_pad = keep[:, None, None, :]
    if combined:
        if same(causal | key_pad):
            return "causal and padding were combined with OR; a key must pass both: use AND (causal & padding)."
        if same(causal & on_queries(keep)):
            return ("padding was applied on the query axis (rows); padding hides keys, i.e. the last axis: "
                    "mask[b, 0, i, j] is False when token j is padding.")
        if pad != 0 and same(causal & ((seq != 0)[:, None, None, :])):
            return ZERO_COMPARED.format(pad=pad)
        if same(causal & ~key_pad) or same(~causal & key_pad) or same(~(causal & key_pad)):
            return "a part of the mask has the opposite polarity; True/nonzero means 'may attend'."
        if same(np.broadcast_to(causal, shape)):
            return "the padding part is missing: only the causal mask was returned."
        if same(np.broadcast_to(key_pad, shape)):
            return "the causal part is missing: only the padding mask was returned."
        return None
    if pad != 0 and same((seq != 0)[:, None, None, :]):
        return ZERO_COMPARED.format(pad=pad)
    if same(~key_pad):
        return "the mask has the opposite polarity: it is True at padding; True/nonzero means 'may attend'."
    on_rows = truth.shape in ((B, 1, L, 1), (B, L, 1)) and np.array_equal(truth.reshape(B, L), keep)
    if same(on_queries(keep)) or on_rows:  # evidence: the values are the padding, on the query axis
        return ("padding was applied on the query axis; padding hides keys, so the mask is (B, 1, 1, L) and "
                "broadcasts over queries.")
    if truth.shape in ((B, 1, L, 1), (B, L, 1)):
        return Symptom(f"The mask's axis of length L = {L} is the query axis (shape {truth.shape}); "
                       "the expected mask has it last (keys).")
    return None


# -- judges ----------------------------------------------------------------------------------------

def mask_equal(kind: str):
    """Judge: the mask has exactly the reference's shape and truth values (dtype is free)."""

    def judge(ctx: JudgeContext) -> Outcome:
        got, failed = _candidate_array(ctx)
        if failed:
            return failed
        expected = output_array(ctx.golden)
        if expected is None:
            raise GraderBug(f"reference returned no mask in step {ctx.step.id}")
        expected = expected != 0
        meta = ctx.step.meta
        hint = _additive_hint(got)
        if hint is None and kind != "causal":
            hint = _diagnose_padding(meta, np.asarray(ctx.arg(0)), got, kind == "combined")
            if hint == ZERO_COMPARED.format(pad=meta["pad_token"]) and not holds_in_every_call(
                    ctx, _zero_compared_there, targets=PADDING_TARGETS, which=lambda a: True):
                hint = None
        if tuple(got.shape) != tuple(expected.shape):
            msg = shape_message("mask", got.shape, expected.shape)
            L, S = meta.get("seq_len"), meta.get("kv_len")
            if hint is None and kind == "causal" and S != L and _square_causal(got, L) \
                    and holds_in_every_call(ctx, _kv_len_ignored_there, which=lambda a: True):
                # evidence: the square mask of seq_len alone (a transposed (kv_len, seq_len) one is not
                # this), and so in every call with kv_len != seq_len (a mask cached by seq_len alone is
                # right on the first kv_len it sees: confuser mask_cached_by_seq_len)
                hint = "kv_len was ignored: the mask needs one column per key, (1, 1, seq_len, kv_len)."
            elif hint is None and got.squeeze().shape == expected.squeeze().shape \
                    and np.array_equal((got != 0).reshape(expected.shape), expected):
                # evidence: fewer axes, the same values in order (singleton axes kept in other places,
                # (L, 1, 1, S), is another mistake with the same squeezed values: a symptom)
                hint = ("keep the singleton axes so the mask broadcasts against scores (B, H, L_q, L_k): "
                        f"return shape {tuple(expected.shape)}.") if got.ndim < expected.ndim else Symptom(
                    f"The mask's values are right with its singleton axes in other places: the axes must be "
                    f"{tuple(expected.shape)} (B, H, L_q, L_k).")
            elif hint is None and got.size == expected.size:
                hint = Symptom("The mask has the expected number of entries in another shape.")
            message, noted = with_hint(msg + ".", hint)
            return Outcome(Verdict.FAILED, message,
                           {"got_shape": list(got.shape), "expected_shape": list(expected.shape), **noted})
        truth = got != 0
        wrong = truth != expected
        if not wrong.any():
            return Outcome(Verdict.PASSED, "", {"numel": int(expected.size), "got_dtype": str(got.dtype)})
        if hint is None and kind == "causal":
            hint = _diagnose_causal(meta, truth)
        idx = tuple(int(i) for i in np.argwhere(wrong)[0])
        n_bad = int(wrong.sum())
        sentence = ("'mask' differs from the expected mask.\n"
                    f"Mismatched elements: {n_bad} / {expected.size} ({100.0 * n_bad / expected.size:.1f}%)\n"
                    f"First mismatch at index {idx} (query {idx[2]}, key {idx[3]}): got "
                    f"{'may attend' if truth[idx] else 'masked'}, expected "
                    f"{'may attend' if expected[idx] else 'masked'}")
        message, noted = with_hint(sentence, hint)
        return Outcome(Verdict.FAILED, message, {"mismatched": n_bad, "first_mismatch_index": list(idx), **noted})

    return judge


def _attention(q: np.ndarray, k: np.ndarray, v: np.ndarray, allowed: np.ndarray) -> np.ndarray:
    """Plain float64 masked attention; a query with no visible key gives a zero row."""
    scores = q @ np.swapaxes(k, -1, -2) / np.sqrt(q.shape[-1])         # (B, H, L_q, L_k)
    scores = np.where(allowed, scores, -np.inf)
    m = scores.max(axis=-1, keepdims=True)
    m = np.where(np.isfinite(m), m, 0.0)
    e = np.exp(scores - m)                                               # 0 where masked
    s = e.sum(axis=-1, keepdims=True)
    w = np.divide(e, s, out=np.zeros_like(e), where=s > 0)
    return w @ v                                                         # (B, H, L_q, d)


def no_leakage(kind: str):
    """Judge: with the candidate's mask driving attention, changing a key/value position changes no
    output of a query the reference mask hides that position from."""

    def judge(ctx: JudgeContext) -> Outcome:
        got, failed = _candidate_array(ctx)
        if failed:
            return failed
        expected = output_array(ctx.golden)
        if expected is None:
            raise GraderBug(f"reference returned no mask in step {ctx.step.id}")
        B0, _, Lq, Lk = expected.shape
        if kind == "padding":
            Lq = Lk                                  # a padding mask broadcasts over every query
        B = max(B0, 2)
        shape = (B, PROBE_HEADS, Lq, Lk)
        try:
            allowed = np.broadcast_to(got != 0, shape)
        except ValueError:
            return Outcome(Verdict.FAILED, f"The mask of shape {tuple(got.shape)} cannot broadcast against "
                           f"attention scores of shape {shape} (B, H, L_q, L_k), so it cannot drive attention.")
        protect = ~np.broadcast_to(expected != 0, shape)                 # pairs that must not see each other
        rng = np.random.default_rng(ctx.step.meta.get("probe_seed", 0))
        q = rng.standard_normal((B, PROBE_HEADS, Lq, PROBE_DK))
        k = rng.standard_normal((B, PROBE_HEADS, Lk, PROBE_DK))
        v = rng.standard_normal((B, PROBE_HEADS, Lk, PROBE_DK))
        base = _attention(q, k, v, allowed)
        leaks = []
        for j in range(Lk):
            k2, v2 = k.copy(), v.copy()
            k2[:, :, j] = rng.standard_normal(k2[:, :, j].shape) * 3.0
            v2[:, :, j] = rng.standard_normal(v2[:, :, j].shape) * 3.0 + 5.0
            changed = np.abs(_attention(q, k2, v2, allowed) - base).max(axis=-1) > 1e-12   # (B, H, L_q)
            bad = changed & protect[..., j]
            for b, h, i in np.argwhere(bad):
                leaks.append((int(b), int(i), j, int(h)))
        if not leaks:
            return Outcome(Verdict.PASSED, "", {"probed_keys": Lk, "queries": Lq})
        b, i, j, _h = min(leaks)
        pairs = sorted({(bb, ii, jj) for bb, ii, jj, _ in leaks})
        what = ctx.step.meta.get("what", "")
        seq = ctx.step.meta.get("seq")
        if seq is not None and seq[b % len(seq)][j] == ctx.step.meta.get("pad_token"):
            why = "a padding token"
        else:
            why = f"a future token (key {j} > query {i}" + (f" + {Lk - Lq}" if Lk != Lq else "") + ")"
        where = f"batch {b}, " if B0 > 1 else ""
        msg = (f"Leak: the output of query {i} ({where}{what}) changed when only key/value {j}, {why}, was "
               f"changed, so the mask lets query {i} attend to key {j}. {len(pairs)} leaking (query, key) "
               f"pair(s) in all.")
        return Outcome(Verdict.FAILED, msg, {"first_leak": {"batch": b, "query": i, "key": j},
                                             "leaking_pairs": len(pairs)})

    return judge


# -- the plan --------------------------------------------------------------------------------------

def _padded(rng: np.random.Generator, B: int, L: int, pad: int, *, left: bool = False,
            lengths: list[int] | None = None, vocab: int = 9) -> np.ndarray:
    """(B, L) int64 token ids with ``pad`` after (or before) each sequence's tokens; real tokens may
    include 0 and other small ids, never ``pad``."""
    lengths = lengths if lengths is not None else [int(n) for n in rng.integers(1, L + 1, size=B)]
    seq = np.full((B, L), pad, dtype=np.int64)
    for b, n in enumerate(lengths):
        tokens = rng.integers(0, vocab, size=n)
        tokens[tokens == pad] = (pad + 1) % vocab if (pad + 1) % vocab != pad else pad + 2
        if n:
            if left:
                seq[b, L - n:] = tokens
            else:
                seq[b, :n] = tokens
    return seq


def build_plan(public_seed: int, hidden_seed: int, track: str = "numpy") -> Plan:
    """Build the causal_mask plan of ``track`` (``numpy`` or ``torch``): public cases from
    ``public_seed``, hidden ones from ``hidden_seed``.

    Raises:
        ValueError: an unknown track.
    """
    if track not in ("numpy", "torch"):
        raise ValueError(f"causal_mask has no {track!r} track")
    b = PlanBuilder()
    rng = np.random.default_rng(public_seed)
    n = 0

    def causal(check: str, seq_len: int, kv_len: int | None = None, *, keyword: bool = False, judge=None,
               note: str = "") -> None:
        args = [b.value(seq_len)]
        kwargs = {}
        if kv_len is not None or keyword:
            if keyword:
                kwargs["kv_len"] = b.value(kv_len)
            else:
                args.append(b.value(kv_len))
        call = (f"create_causal_mask({seq_len}" + (f", kv_len={kv_len}" if keyword else
                                                   (f", {kv_len}" if kv_len is not None else "")) + ")")
        S = seq_len if kv_len is None else kv_len
        b.call(check, "create_causal_mask", args, kwargs, judge=judge or mask_equal("causal"),
               describe=call + (f", {note}" if note else ""),
               meta={"seq_len": seq_len, "kv_len": S, "what": call, "probe_seed": seq_len * 100 + S})

    def padding(check: str, fn: str, seq: np.ndarray, pad: int | None, *, judge=None, note: str = "") -> None:
        nonlocal n
        n += 1
        arg = b.input(f"seq{n}", seq, track=track, label="seq")
        kwargs = {} if pad is None else {"pad_token": b.value(pad)}
        call = f"{fn}(seq {seq.shape} {seq.dtype}" + ("" if pad is None else f", pad_token={pad}") + ")"
        kind = "combined" if fn == "create_combined_mask" else "padding"
        b.call(check, fn, [arg], kwargs, judge=judge or mask_equal(kind),
               describe=call + (f", {note}" if note else "") + f"; seq = {seq.tolist()}",
               meta={"pad_token": 0 if pad is None else pad, "what": call, "seq": seq.tolist(), "probe_seed": n})

    # create_causal_mask(seq_len): the lower triangle
    for L in (5, 2, 12, 1):
        causal("causal_square", L)
    causal("causal_square", 6, 6, note="kv_len equal to seq_len")
    causal("causal_square", 4, None, keyword=True, note="kv_len=None passed explicitly")
    # create_causal_mask(seq_len, kv_len): bottom-right aligned
    for L, S in ((3, 8), (1, 7), (5, 6), (2, 40), (1, 1)):
        causal("causal_kv_len", L, S)
    causal("causal_kv_len", 4, 9, keyword=True)
    causal("causal_kv_len", 3, 300)  # a long cache: positions past 127 and 255
    for L, S in ((5, 3), (2, 1), (3, 0)):  # kv_len=0 too (`kv_len or seq_len` swallows it)
        b.call("kv_len_too_short", "create_causal_mask", [b.value(L), b.value(S)],
               judge=raises("ValueError", when="kv_len < seq_len"), describe=f"create_causal_mask({L}, {S})")

    # padding masks: default pad 0, a pad_token other than 0 (with 0 a real token), left padding
    padding("padding_mask", "create_padding_mask", _padded(rng, 3, 6, 0, lengths=[6, 4, 2]), None)
    ids = _padded(rng, 2, 7, 3, lengths=[5, 2])
    ids[0, :4] = [0, 1, 2, 4]  # tokens below and above pad_token: `!= pad_token`, not `> pad_token`
    padding("padding_mask", "create_padding_mask", ids, 3, note="0, 1, 2 and 4 are real tokens here")
    padding("padding_mask", "create_padding_mask", _padded(rng, 3, 5, -1, left=True, lengths=[3, 5, 1]), -1,
            note="left padding")
    padding("padding_mask", "create_padding_mask",
            _padded(rng, 2, 8, 0, lengths=[7, 3]).astype(np.int32), None, note="int32 ids")
    padding("padding_all_pad", "create_padding_mask", _padded(rng, 3, 5, 0, lengths=[5, 0, 2]), None,
            note="row 1 is all padding")
    padding("padding_all_pad", "create_padding_mask", _padded(rng, 2, 4, 7, lengths=[0, 0]), 7,
            note="every row is all padding")
    # combined
    padding("combined_mask", "create_combined_mask", _padded(rng, 3, 6, 0, lengths=[6, 4, 1]), None)
    padding("combined_mask", "create_combined_mask", _padded(rng, 2, 7, 5, left=True, lengths=[4, 7]), 5,
            note="left padding, 0 is a real token")
    padding("combined_mask", "create_combined_mask", _padded(rng, 2, 5, 0, lengths=[3, 0]), None,
            note="row 1 is all padding")

    # seq left as it was: judged on its own (one mistake, one deduction), whatever the mask's values;
    # drawn from its own stream so later cases keep their inputs
    keep_rng = np.random.default_rng([public_seed, 16])
    padding("seq_unchanged", "create_padding_mask", _padded(keep_rng, 3, 6, 0, lengths=[6, 4, 2]), None,
            judge=inputs_unchanged())
    padding("seq_unchanged", "create_combined_mask", _padded(keep_rng, 2, 5, 3, left=True, lengths=[3, 5]), 3,
            judge=inputs_unchanged())

    # leakage probes: the candidate's mask drives attention computed on the host
    for L, S in ((6, None), (3, 8), (1, 5), (4, 4)):
        causal("no_future_leakage", L, S, judge=no_leakage("causal"))
    padding("no_padding_leakage", "create_padding_mask", _padded(rng, 3, 6, 0, lengths=[6, 3, 1]), None,
            judge=no_leakage("padding"))
    padding("no_padding_leakage", "create_padding_mask", _padded(rng, 2, 6, 2, left=True, lengths=[4, 2]), 2,
            judge=no_leakage("padding"))
    padding("no_padding_leakage", "create_combined_mask", _padded(rng, 3, 7, 0, lengths=[7, 5, 2]), None,
            judge=no_leakage("combined"))
    padding("no_padding_leakage", "create_combined_mask", _padded(rng, 2, 6, 4, left=True, lengths=[3, 6]), 4,
            judge=no_leakage("combined"))

    # Exact shapes where a squeeze drops an axis: a batch of one sequence, sequences of one token; large
    # token ids (own stream: the cases before keep their inputs)
    one_rng = np.random.default_rng([public_seed, 17])
    padding("padding_mask", "create_padding_mask", _padded(one_rng, 1, 6, 0, lengths=[4]), None,
            note="a batch of one sequence")
    padding("padding_mask", "create_padding_mask", _padded(one_rng, 3, 1, 0, lengths=[1, 0, 1]), None,
            note="sequences of one token")
    padding("combined_mask", "create_combined_mask", _padded(one_rng, 1, 5, 2, lengths=[3]), 2,
            note="a batch of one sequence")
    # ids of a real vocabulary: a cast to uint8 or int16 before comparing wraps 256 and 65536 onto pad 0
    big = one_rng.integers(1, 128_000, size=(2, 7))
    big[0, :2] = [256, 65_536]
    big[1, 5:] = 0
    padding("padding_mask", "create_padding_mask", big, None, note="ids of a 128k vocabulary, 256 and 65536 among them")
    # no 0 among the ids, pad_token 5: comparing with 0 hides nothing, while taking the batch's smallest
    # id for the pad hides a real token (4); the hint "compared with 0" must hold on every failed case
    # (helper hunt: `seq != seq.min()` was told it compared with 0, as 0 was the smallest id elsewhere)
    no_zero = np.random.default_rng([public_seed, 18]).integers(6, 60, size=(2, 6))
    no_zero[0, 2], no_zero[1, 4:] = 4, 5
    padding("padding_mask", "create_padding_mask", no_zero, 5, note="no 0 among the ids; 4 is a real token")

    # Hidden cases: the same kinds at every seed (square, kv_len > seq_len, one query; padding and
    # combined masks, right- and left-padded, every batch holding a full and a padded sequence whose
    # real tokens include ids just below and just above pad_token); the seed draws only the sizes, the
    # pad token and the other token ids.
    hidden = np.random.default_rng(hidden_seed)
    L = int(hidden.integers(2, 10))
    causal("hidden_masks", L, L)
    L = int(hidden.integers(2, 10))
    causal("hidden_masks", L, L + int(hidden.integers(1, 12)))
    causal("hidden_masks", 1, int(hidden.integers(2, 12)))
    for fn, left in (("create_padding_mask", False), ("create_combined_mask", False), ("create_combined_mask", True)):
        B, L = int(hidden.integers(2, 5)), int(hidden.integers(3, 10))
        first = fn == "create_padding_mask"
        pad = int(hidden.integers(2, 7) if first else hidden.integers(1, 6))
        lengths = [L] + [int(n) for n in hidden.integers(1, L, size=B - 1)]
        seq = _padded(hidden, B, L, pad, left=left, lengths=lengths)
        seq[0, :2] = [pad - 1, pad + 1]  # real tokens below and above pad_token at every seed: `!=`, not `>`
        if first:  # no 0 among the ids (pad >= 2): a comparison with 0 hides nothing here, and the
            seq[seq == 0] = pad + 2  # batch's smallest id is a real token (pad_is_batch_min, confuser)
        padding("hidden_masks", fn, seq, pad)
    return b.plan


#: Queries of the probe's decoding-with-a-cache call: ``create_causal_mask(PROBE_NEW, kv_len=size)``.
PROBE_NEW = 8


def probe_steps(b: PlanBuilder, probe, size: int, rng: np.random.Generator, track: str = "numpy") -> None:
    """Steps of the memory probe at ``seq_len=size``, one per path of the three functions:
    ``create_combined_mask`` on two padded sequences (an int64 array, or tensor in the torch track; it
    covers the padding mask and the square causal mask), and the decoding-with-a-cache
    ``create_causal_mask(PROBE_NEW, kv_len=size)`` (a few queries over a long cache, whose mask is
    ``(PROBE_NEW, size)``, not ``(size, size)``). The probe judges the sum and each path alone. The square
    ``create_causal_mask(size)`` has no call of its own: its (L, L) mask is the causal part of the combined
    one, and a lone call's few-hundred-kB fixed cost of tracemalloc would dominate the sum's growth."""
    seq = rng.integers(1, 50, size=(2, size))
    seq[1, size // 2:] = 0
    b.call(probe.check, "create_combined_mask", [b.input(f"probe_seq{size}", seq, track=track, label="seq")],
           measure=probe.measure(), meta={"probe": probe.check, "size": size, "path": "create_combined_mask"},
           describe=f"create_combined_mask(seq of shape (2, {size}))")
    measure = {**probe.measure(), "torch": track == "torch"}  # int arguments: say how to measure
    b.call(probe.check, "create_causal_mask", [b.value(PROBE_NEW), b.value(size)],
           measure=measure, meta={"probe": probe.check, "size": size, "path": "kv_len create_causal_mask"},
           describe=f"create_causal_mask({PROBE_NEW}, kv_len={size}): {PROBE_NEW} new queries over a cache")
