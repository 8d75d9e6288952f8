"""Confusers (issue 24): wrong solutions whose symptom matches a hint while their cause is another get
no wrong name, and the mistake a hint names still gets it. Each test grades a confuser of
``exercises/<id>/confusers*/`` (or a file written here in another style) in this process, the way
``grade selfcheck`` does."""
from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from grader.cohort.selfcheck import HINT_PREFIX, allowed_name, card_names, confuser_rules
from grader.grading.exercise import get_exercise

ROOT = Path(__file__).resolve().parent.parent


def grade(exercise_id: str, path: Path, track: str | None = None, seed: int = 5):
    """The scorecard of ``path`` graded in this process (trusted), as ``grade selfcheck`` grades it."""
    from grader.grading.grade import _MEASURE_LOCK, grade_submission  # noqa: PLC0415
    from grader.grading.trusted import TrustedInProcess  # noqa: PLC0415

    return grade_submission(get_exercise(exercise_id, track=track), path, seed=seed,
                            trusted_runner=TrustedInProcess(path.name, _MEASURE_LOCK))


def failed(card) -> dict[str, str]:
    return {c.id: c.message for c in card.checks if c.verdict != "passed"}


def hints(card) -> list[str]:
    return [n[len(HINT_PREFIX):] for n in card_names(card) if n.startswith(HINT_PREFIX)]


def confuser(exercise_id: str, name: str, track: str | None = None) -> Path:
    ex = get_exercise(exercise_id, track=track)
    return ex.confusers_dir / f"{name}.py"


def edited_confuser(exercise_id: str, name: str, old: str, new: str, folder: Path, track: str | None = None) -> Path:
    """A copy of confuser ``name`` in ``folder`` with ``old`` replaced by ``new`` (the mistake it
    imitates, written in its style); fails when ``old`` is not in it."""
    source = confuser(exercise_id, name, track).read_text()
    assert old in source, (name, old)
    path = folder / f"{name}_edited.py"
    path.write_text(source.replace(old, new))
    return path


def assert_no_wrong_name(card, path: Path) -> None:
    _must_not, may = confuser_rules(path)
    wrong = [n for n in card_names(card) if not allowed_name(n, may)]
    assert not wrong, wrong
    assert card.score < card.max_score


# -- kv_cache ----------------------------------------------------------------------------------------

@pytest.mark.parametrize("track", ["numpy", "torch"])
def test_kv_cache_decode_tokens_appended_twice_is_not_called_a_preallocated_buffer(track):
    """The issue's case: a cache longer than T whose first T positions are not the true keys (a decoded
    token sits twice in it) gets the symptom (how many positions, whether the first T are right), not
    "a preallocated buffer must be exposed as its filled part"."""
    path = confuser("kv_cache", "decode_tokens_appended_twice", track)
    card = grade("kv_cache", path, track)
    assert_no_wrong_name(card, path)
    shapes = failed(card)["cache_shapes"]
    assert "preallocated" not in shapes and not shapes.startswith("Likely mistake")
    assert "positions after T = " in shapes


PREALLOC_50 = (ROOT / "submissions/samples/kv_cache/bug_prealloc_whole_buffer.py").read_text().replace(
    "MAX_LEN = 64", "MAX_LEN = 50")


def test_kv_cache_a_preallocated_buffer_is_still_named(tmp_path):
    """The real mistake, in a style the bank's mutant (64 positions) does not reproduce (50): the
    hand-written hint checks its cause (the first T positions are the true keys, the rest zeros) and
    names it."""
    path = tmp_path / "prealloc_50.py"
    path.write_text(PREALLOC_50)
    shapes = failed(grade("kv_cache", path))["cache_shapes"]
    assert shapes.startswith("Likely mistake: ") and "preallocated buffer" in shapes.splitlines()[0]


def test_kv_cache_nan_from_a_mask_times_inf_is_not_called_a_fully_masked_row():
    path = confuser("kv_cache", "mask_multiplied_by_neg_inf")
    card = grade("kv_cache", path)
    assert_no_wrong_name(card, path)
    assert not any("fully masked" in m for m in failed(card).values())
    assert "The output contains NaN in " in failed(card)["prefill_decode"]


# -- softmax -----------------------------------------------------------------------------------------

@pytest.mark.parametrize("track, name", [("torch", "torch_softmax_in_float32"), ("torch", "stable_in_float32"),
                                         ("numpy", "stable_in_float32")])
def test_softmax_float32_internals_are_not_told_to_subtract_the_maximum(track, name):
    """The issue's case: a stable softmax computing a float64 input in float32 has NaN at float64's
    largest logits; it subtracts the maximum, so it must not be told to."""
    path = confuser("softmax", name, track)
    card = grade("softmax", path, track)
    assert_no_wrong_name(card, path)
    assert "dtype_max" in failed(card)
    assert not any("subtract the maximum" in m for m in failed(card).values())


def test_softmax_an_underflow_is_not_called_an_overflow():
    path = confuser("softmax", "underflow_margin")
    card = grade("softmax", path)
    assert_no_wrong_name(card, path)
    assert not any("overflow" in h for h in hints(card))
    assert "NaN/inf entries" in failed(card)["large_logits"]


def test_softmax_does_not_sum_to_one_is_a_symptom_not_a_mistake():
    path = confuser("softmax", "normalised_by_global_sum")
    card = grade("softmax", path)
    assert_no_wrong_name(card, path)
    messages = failed(card).values()
    assert any("does not sum to 1" in m for m in messages)
    assert not any("sum to 1" in h for h in hints(card))


UNSHIFTED = '''
import numpy as np
def softmax(x, axis=-1):
    with np.errstate(over="ignore", invalid="ignore", divide="ignore"):
        e = np.exp(x)
        s = np.sum(e, axis=axis, keepdims=True)
        out = e / s
    out[np.isneginf(x) & ~np.isnan(out)] = 0.0
    return out
'''


def test_softmax_a_missing_max_shift_is_still_named(tmp_path):
    """The real mistake (no max shift), written so that no single mutant reproduces it: its overflow on
    large logits still gets its name (by the bank's replay, or by the hand-written hint, which checks
    that the unshifted softmax replayed in its dtype is its output)."""
    path = tmp_path / "unshifted.py"
    path.write_text(UNSHIFTED)
    large = failed(grade("softmax", path))["large_logits"]
    first = large.splitlines()[0]
    assert first.startswith("Likely mistake: ") and "overflow" in first and "subtract the max" in first


def test_softmax_overflow_hint_checks_the_replay_itself():
    """The hand-written hint alone (no bank): NaN that the unshifted softmax in the output's dtype
    reproduces is named an overflow; the same NaN from a stable float32 run on float64 input (the
    output cast back to float64) is a symptom."""
    import numpy as np  # noqa: PLC0415

    from grader.judge.judges import Symptom  # noqa: PLC0415
    from grader.judge.tolerance import Tolerance  # noqa: PLC0415
    checks = get_exercise("softmax").checks_module

    x = np.array([[1000.0, 1.0, 2.0], [0.5, 0.25, -1.0]])
    tol = Tolerance(rtol=1e-7, atol=1e-7, dtype="float64")
    with np.errstate(all="ignore"):
        unshifted = np.exp(x) / np.exp(x).sum(axis=-1, keepdims=True)
        x32 = x.astype(np.float32)
        stable32 = (np.exp(x32 - x32.max(-1, keepdims=True)) / np.exp(x32 - x32.max(-1, keepdims=True)).sum(-1, keepdims=True))
    assert np.isnan(unshifted).any()
    named = checks._nonfinite_hint(x, 1, -1, unshifted, tol)
    assert not isinstance(named, Symptom) and "subtract the maximum" in named
    huge = np.array([[1e300, 1.0, 2.0], [0.5, 0.25, -1.0]])
    with np.errstate(all="ignore"):
        h32 = huge.astype(np.float32)
        got = (np.exp(h32 - h32.max(-1, keepdims=True)) / np.exp(h32 - h32.max(-1, keepdims=True)).sum(-1, keepdims=True)).astype(np.float64)
    assert np.isnan(got).any() and np.isfinite(stable32).all()
    symptom = checks._nonfinite_hint(huge, 1, -1, got, tol)
    assert isinstance(symptom, Symptom) and "subtract" not in symptom


# -- NaN: a fully masked row, or another cause -------------------------------------------------------

@pytest.mark.parametrize("exercise_id", ["attention_scores", "mha", "gqa", "transformer_block"])
def test_nan_from_a_mask_times_inf_is_not_called_a_fully_masked_row(exercise_id):
    """Every row of a masked case is NaN (0 * -inf), fully masked or not: the hint that names a fully
    masked row checks that every NaN row is one, so this file gets the symptom."""
    path = confuser(exercise_id, "mask_times_neg_inf")
    card = grade(exercise_id, path)
    assert_no_wrong_name(card, path)
    messages = failed(card)
    assert not any("all masked" in h or "fully masked" in h for h in hints(card))
    assert any("The result contains NaN in " in m for m in messages.values())


FULLY_MASKED_NAN = (ROOT / "reference/attention_scores.py").read_text().replace(
    "    m = np.where(np.isfinite(m), m, 0).astype(scores.dtype)\n", "").replace(
    "    return np.divide(e, s, out=np.zeros_like(e), where=s > 0)       # (..., L_q, L_k)",
    "    return e / s")


def test_a_fully_masked_row_giving_nan_is_still_named(tmp_path):
    path = tmp_path / "nan_rows.py"
    path.write_text(FULLY_MASKED_NAN)
    first = failed(grade("attention_scores", path))["fully_masked_rows"].splitlines()[0]
    assert first.startswith("Likely mistake: ") and ("all masked" in first or "fully masked" in first), first


def test_nan_rows_fully_masked_reads_the_rows_of_every_layout():
    import numpy as np  # noqa: PLC0415

    from grader.judge.judges import nan_rows_fully_masked  # noqa: PLC0415

    keep = np.ones((2, 1, 3, 4), bool)
    keep[1, 0, 2] = False                                  # batch 1, query 2: fully masked
    merged = np.zeros((2, 3, 8))
    merged[1, 2, 0] = np.nan
    assert nan_rows_fully_masked(merged, keep)
    merged[0, 1, 3] = np.nan                               # a NaN on a row that sees keys
    assert not nan_rows_fully_masked(merged, keep)
    weights = np.zeros((2, 2, 3, 4))
    weights[1, :, 2] = np.nan
    assert nan_rows_fully_masked(weights, keep) and not nan_rows_fully_masked(weights, None)
    assert not nan_rows_fully_masked(np.zeros((2, 3, 8)), keep)  # no NaN: nothing to explain


# -- causal_mask -------------------------------------------------------------------------------------

def test_causal_mask_a_transposed_kv_mask_is_not_told_kv_len_was_ignored():
    """Its last axis has seq_len entries, as when kv_len is ignored, but it uses kv_len (it is the
    transpose): "kv_len was ignored" is named only for the square seq_len mask."""
    path = confuser("causal_mask", "transposed_kv_mask")
    card = grade("causal_mask", path)
    assert_no_wrong_name(card, path)
    assert not any("kv_len was ignored" in h for h in hints(card))
    assert "causal_kv_len" in failed(card)


IGNORES_KV_LEN = (ROOT / "reference/causal_mask.py").read_text().replace(
    "    offset = kv_len - seq_len\n", "    offset, kv_len = 0, seq_len\n")


def test_causal_mask_ignoring_kv_len_is_still_named(tmp_path):
    path = tmp_path / "ignores_kv_len.py"
    path.write_text(IGNORES_KV_LEN)
    card = grade("causal_mask", path)
    first = failed(card)["causal_kv_len"].splitlines()[0]
    assert first.startswith("Likely mistake: ") and "kv_len" in first, first


def test_causal_mask_nothing_masked_is_a_symptom(tmp_path):
    path = tmp_path / "all_true.py"
    path.write_text((ROOT / "reference/causal_mask.py").read_text().replace(
        "    mask = j <= i + offset ", "    mask = j >= -1 + 0 * i ", 1))
    card = grade("causal_mask", path)
    assert any("Nothing is masked" in m for m in failed(card).values())
    assert not any("Likely mistake: nothing is masked" in m for m in failed(card).values())


def test_causal_mask_singleton_axes_in_other_places_are_not_told_to_keep_them():
    """(seq_len, 1, 1, kv_len) squeezes to the right mask, as a 2-D mask does, but no axis was dropped:
    "keep the singleton axes" is named only when the mask has fewer axes; here it is a symptom."""
    path = confuser("causal_mask", "singleton_axes_misplaced")
    card = grade("causal_mask", path)
    assert_no_wrong_name(card, path)
    assert {"causal_square", "causal_kv_len"} <= set(failed(card))
    assert "singleton axes in other places" in failed(card)["causal_square"]


def test_causal_mask_dropped_singleton_axes_are_still_named(tmp_path):
    path = edited_confuser("causal_mask", "singleton_axes_misplaced", "    return allowed[:, None, None, :]\n",
                           "    return allowed\n", tmp_path)
    from attention_helpers import judge_in_process, messages  # noqa: PLC0415 - the hint alone, no bank

    assert "keep the singleton axes" in messages(judge_in_process("causal_mask", path), "causal_square")
    assert failed(grade("causal_mask", path))["causal_square"].startswith("Likely mistake: ")  # the bank's


def test_attention_scores_a_hard_coded_scale_is_not_called_one_over_d_k():
    """A scale hard-coded as 1/8 is 1/d_k on the d_k = 8 cases and neither 1/d_k nor the answer on the
    others: the replay names 1/d_k only when every other call is right or 1/d_k's, and the bank's
    logits_divided_by_d_k is contradicted by those calls (both were named on every d_k = 8 check)."""
    path = confuser("attention_scores", "scale_fixed_at_one_eighth")
    card = grade("attention_scores", path)
    assert_no_wrong_name(card, path)
    assert {"weights_basic", "scaling"} <= set(failed(card))
    assert not any("1/d_k" in m or "divided by d_k" in m for m in failed(card).values())


def test_attention_scores_one_over_d_k_is_still_named(tmp_path):
    path = edited_confuser("attention_scores", "scale_fixed_at_one_eighth", "query.dtype.type(SCALE)",
                           "query.dtype.type(1.0 / query.shape[-1])", tmp_path)
    card = grade("attention_scores", path)
    named = failed(card)["scaling"]
    assert named.startswith("Likely mistake: ") and ("1/d_k" in named or "divided by d_k" in named), named


# -- mha: a double scale vs a wrong width ------------------------------------------------------------

def test_mha_a_double_scale_is_not_called_a_wrong_width():
    """With num_heads == d_k, 1/d_k (the scale applied twice) equals 1/sqrt(D): the hand-written replay
    names a scale only when exactly one of its mistakes gives the output."""
    path = confuser("mha", "double_scale_when_masked")
    card = grade("mha", path)
    assert_no_wrong_name(card, path)
    assert not any("1/sqrt(D)" in h for h in hints(card))


def test_mha_a_wrong_width_is_still_named(tmp_path):
    path = tmp_path / "sqrt_D.py"
    path.write_text((ROOT / "reference/mha.py").read_text().replace(
        "(1.0 / math.sqrt(d_k))  # (B, H, L_q, L_k)", "(1.0 / math.sqrt(D))  # (B, H, L_q, L_k)"))
    card = grade("mha", path)
    firsts = [m.splitlines()[0] for m in failed(card).values()]
    assert any(f.startswith("Likely mistake: ") and ("sqrt(D)" in f or "d_model" in f) for f in firsts), firsts


def test_kv_cache_one_wrong_attribute_is_not_called_a_swap(tmp_path):
    """k_cache exposing the values (v_cache right) is told what k_cache holds, never "swapped"; a real
    swap is told the same (of the attribute its check reads first)."""
    path = confuser("kv_cache", "values_in_both_caches")
    card = grade("kv_cache", path)
    assert_no_wrong_name(card, path)
    messages = failed(card)
    assert "cache_contents" in messages and all("swapped" not in m for m in messages.values())
    assert messages["cache_contents"].startswith("Likely mistake: 'k_cache' holds the values of the tokens seen")
    swap = tmp_path / "swap.py"
    swap.write_text((ROOT / "reference/kv_cache.py").read_text().replace(
        "            self.k_cache, self.v_cache = k, v\n",
        "            self.k_cache, self.v_cache = k, v\n        k, v = (k, v) if not use_cache else (self.k_cache, self.v_cache)\n"
        "        if use_cache:\n            self.k_cache, self.v_cache = v, k\n").replace(
        "                k = np.concatenate([self.k_cache, k], axis=2)      # (B, H, T + L, d_k)\n"
        "                v = np.concatenate([self.v_cache, v], axis=2)      # (B, H, T + L, d_k)\n",
        "                k = np.concatenate([self.v_cache, k], axis=2)      # (B, H, T + L, d_k)\n"
        "                v = np.concatenate([self.k_cache, v], axis=2)      # (B, H, T + L, d_k)\n"))
    swapped = failed(grade("kv_cache", swap))["cache_contents"]
    assert swapped.startswith("Likely mistake: 'k_cache' holds the values of the tokens seen")  # its first failed case


def test_positional_encoding_a_float32_two_pi_is_not_told_its_angles_were_float32():
    """float64 angles reduced by a float32 2*pi drift as much as float32 angles do near 10^6: the
    bank replay may match (its error is at that precision) but says what it proves, the precision,
    not that the angles were float32."""
    path = confuser("positional_encoding", "float32_two_pi_reduction")
    card = grade("positional_encoding", path)
    assert_no_wrong_name(card, path)
    large = failed(card)["large_positions"]
    assert "only to the precision of float32 angles" in large and "were computed in float32" not in large


def test_mha_a_zero_over_zero_row_is_not_told_it_used_a_minus_inf_mask():
    """A hand-written softmax over the kept keys makes a fully masked row 0/0, repaired with
    nan_to_num: the gradient is NaN exactly as with an additive -inf mask, so the replay of that
    mutant may match, but neither its sentence nor the hint may claim the -inf mask as the cause."""
    path = confuser("mha", "empty_row_zero_over_zero")
    card = grade("mha", path)
    assert_no_wrong_name(card, path)
    edge = failed(card)["grad_edge_cases"]
    assert "fully masked" in edge and "0/0" in edge
    assert "-inf mask makes" not in edge.split(";")[0]
    assert "grad_inputs" not in failed(card) and "fully_masked_rows" not in failed(card)  # its forward is right there


@pytest.mark.parametrize("exercise_id, name", [("flash_attention", "running_max_zero_unguarded"),
                                               ("sliding_window_attention", "mask_times_neg_inf")])
def test_nan_on_rows_that_see_keys_is_not_called_a_row_that_sees_no_key(exercise_id, name):
    """NaN from an underflow (a running max started at 0) or from a mask built as 0 * -inf lies on rows
    that see keys: the hint about rows that see no key is not given."""
    path = confuser(exercise_id, name)
    card = grade(exercise_id, path)
    assert_no_wrong_name(card, path)
    assert not any("no key" in h for h in hints(card))
    assert any("NaN" in m for m in failed(card).values())


def test_linear_attention_quadratic_work_without_an_l_by_l_matrix_is_not_told_it_forms_one():
    """A causal state recomputed per query costs L^2 like an L x L matrix: the probe's hint, read from
    growth alone, is a symptom that names no structure as the cause; the bank's
    causal_state_recomputed, which is this structure, reproduces its figures and is the one name."""
    path = confuser("linear_attention", "state_recomputed_per_query")
    card = grade("linear_attention", path)
    assert_no_wrong_name(card, path)
    flops = next(c for c in card.checks if c.id == "flops_scaling")
    assert flops.details["mistake"] == "causal_state_recomputed" and flops.details["evidence"] == "cost"
    likely = flops.message.split("\n")[0]
    assert likely.startswith("Likely mistake: your measured cost equals") and "L x L matrix" not in likely
    assert "The work grows like L^2" in flops.message


@pytest.mark.parametrize("track", ["numpy", "torch"])
def test_kv_cache_values_reprojected_is_not_a_chunk_that_reprojects_history(track):
    """Re-projecting only the values, in decode steps and chunks alike, costs summed over the probe's
    paths what the bank's chunk_reprojects_history (keys and values, chunks only) costs: its replay
    named it in both tracks until each path had to match. The probe hint that reads the W_k/W_v work
    may say only that keys or values are re-projected."""
    path = confuser("kv_cache", "values_reprojected_keys_cached", track)
    card = grade("kv_cache", path, track)
    assert_no_wrong_name(card, path)
    assert set(failed(card)) == {"decode_complexity"}
    message = failed(card)["decode_complexity"]
    assert message.startswith("Likely mistake: the keys or the values (or both)")
    assert card.checks[[c.id for c in card.checks].index("decode_complexity")].details.get("mistake") is None


@pytest.mark.parametrize("exercise_id", ["attention_scores", "mha"])
def test_a_max_taken_before_the_mask_is_not_called_a_fully_masked_row(exercise_id):
    """The softmax shifted by a max over the masked scores too is 0/0 on fully masked rows and on rows
    whose masked scores sit far above the kept ones. On the fully masked rows case alone its NaN lie on
    fully masked rows, so the hint's evidence must span every call of the function: at seed 1235 the
    fully masked case of attention_scores calls the other function than the case that shows the rest."""
    path = confuser(exercise_id, "max_before_mask")
    for seed in (5, 1234, 1235):
        card = grade(exercise_id, path, seed=seed)
        assert_no_wrong_name(card, path)
        assert not any("all masked" in m for m in failed(card).values()), (seed, failed(card))
        assert any("NaN" in m for m in failed(card).values())


def test_nan_on_fully_masked_rows_alone_is_still_named(tmp_path):
    """The bank's mistake (NaN only on fully masked rows), written here as a plain softmax without a
    guard: every call's NaN lie on fully masked rows, so the hint still names it."""
    src = (ROOT / "exercises/attention_scores/confusers/max_before_mask.py").read_text()
    src = src.replace("m = np.max(scores, axis=-1, keepdims=True)                      # (..., L_q, 1): masked scores too",
                      "m = np.max(np.where(allowed, scores, -np.inf) if allowed is not None else scores, axis=-1, keepdims=True)")
    assert "np.where(allowed, scores, -np.inf)" in src
    path = tmp_path / "nan_fully_masked_plain.py"
    path.write_text(src)
    card = grade("attention_scores", path)
    assert "fully_masked_rows" in failed(card)
    assert "all masked" in failed(card)["fully_masked_rows"]
    assert set(failed(card)) <= {"fully_masked_rows", "hidden_cases"}, failed(card)


def test_flash_block_max_before_the_causal_mask_is_not_called_a_row_that_sees_no_key():
    """A block max taken before the causal mask, division unguarded: NaN on the rows that see no key
    (L_q > L_k) and, where masked scores sit far above kept ones (large_scores), on rows that see keys.
    On the causal case alone the NaN lie on rows that see no key, and that case was told so."""
    path = confuser("flash_attention", "block_max_before_causal_mask")
    card = grade("flash_attention", path)
    assert_no_wrong_name(card, path)
    assert {"causal_bottom_right", "large_scores"} <= set(failed(card))
    assert not any("see no key" in m or "sees no key" in m for m in failed(card).values())


# -- rope ----------------------------------------------------------------------------------------------

@pytest.mark.parametrize("track", ["numpy", "torch"])
def test_rope_a_fixed_base_is_not_called_base_to_the_minus_i_over_d(track):
    """A fixed base of 100 with the right exponent equals base^(-i/d) at the default base 10000 and
    neither that nor the answer at base=500: the bank replay and the hand-written diagnosis both saw
    only the default-base cases and named freq_over_d on every check but ``base``."""
    path = confuser("rope", "base_fixed_at_100", track)
    card = grade("rope", path, track)
    assert_no_wrong_name(card, path)
    assert {"values", "base"} <= set(failed(card))
    assert not any("base^(-i/d)" in m for m in failed(card).values())


@pytest.mark.parametrize("track", ["numpy", "torch"])
def test_rope_freq_over_d_is_still_named(track, tmp_path):
    """The mistake the confuser imitates, in a file of its own (the exponent -i/d at every base), is
    still named on the checks it fails."""
    ex = get_exercise("rope", track=track)
    source = confuser("rope", "base_fixed_at_100", track).read_text()
    if track == "numpy":
        source = source.replace("inv[i] = 100.0 ** (-2.0 * i / d)", "inv[i] = float(base) ** (-1.0 * i / d)")
    else:
        source = source.replace("torch.pow(torch.tensor(100.0, dtype=work), -torch.arange(0, d, 2, dtype=work) / d)",
                                "torch.pow(torch.tensor(float(base), dtype=work), -torch.arange(0, d // 2, dtype=work) / d)")
    assert source != confuser("rope", "base_fixed_at_100", track).read_text()
    path = tmp_path / "freq_over_d.py"
    path.write_text(source)
    card = grade("rope", path, track)
    assert {"values", "base"} <= set(failed(card)), ex.id
    assert all("base^(-i/d)" in m for m in failed(card).values() if "not close" in m), failed(card)


# -- softmax: a NaN gradient made by a custom backward -----------------------------------------------

def test_softmax_a_custom_backward_nan_is_not_told_the_forward_hid_it():
    """A custom autograd.Function whose forward never computes a NaN and whose backward recomputes
    exp(x - max) / sum unguarded has a NaN gradient exactly in the all -inf slices, as a forward NaN
    hidden with torch.where does: the bank's sentence (and the hint) said "the forward pass hides the
    NaN", which the replay cannot tell; they now name the place and both passes."""
    path = confuser("softmax", "backward_recomputes_unguarded", "torch")
    card = grade("softmax", path, "torch")
    assert_no_wrong_name(card, path)
    assert set(failed(card)) == {"gradients"}
    grad = failed(card)["gradients"]
    assert "entirely -inf" in grad and "custom backward" in grad
    assert "forward pass hides" not in grad and "replaced in the forward" not in grad


# -- gqa: a group size taken for the KV head count ---------------------------------------------------

def test_gqa_a_group_width_scale_is_not_called_the_kv_width():
    """1/sqrt(group * d_k) is 1/sqrt(num_kv_heads * d_k) where group == num_kv_heads (4 query heads over
    2) and neither that nor the answer at 6 over 3, 8 over 2 or one KV head: no name."""
    path = confuser("gqa", "scaled_by_group_width")
    card = grade("gqa", path)
    assert_no_wrong_name(card, path)
    assert {"values", "mqa", "head_mapping"} <= set(failed(card))
    assert not any("num_kv_heads * d_k" in m for m in failed(card).values())


def test_gqa_the_kv_width_scale_is_still_named(tmp_path):
    path = edited_confuser("gqa", "scaled_by_group_width", "math.sqrt(group * d_k)",
                           "math.sqrt(num_kv_heads * d_k)", tmp_path)
    card = grade("gqa", path)
    firsts = [m.splitlines()[0] for m in failed(card).values()]
    assert any(f.startswith("Likely mistake: ") and "num_kv_heads * d_k" in f for f in firsts), firsts


def test_gqa_a_head_index_modulo_the_group_is_not_called_repeat():
    """KV head h % group is `repeat`'s h % num_kv_heads where group == num_kv_heads and out of range or
    neither mapping elsewhere: no call but those may name `repeat`."""
    path = confuser("gqa", "heads_mapped_modulo_group")
    card = grade("gqa", path)
    assert_no_wrong_name(card, path)
    assert "equals_mha" in failed(card)
    assert not any("h % num_kv_heads" in m for m in failed(card).values())


def test_gqa_heads_mapped_with_repeat_are_still_named(tmp_path):
    path = edited_confuser("gqa", "heads_mapped_modulo_group", "torch.arange(num_query_heads) % group",
                           "torch.arange(num_query_heads) % num_kv_heads", tmp_path)
    card = grade("gqa", path)
    named = failed(card)["head_mapping"]
    assert named.startswith("Likely mistake: ") and "h % num_kv_heads" in named, named


# -- kv_cache: a cache of another layout's shape holding scrambled values ----------------------------

@pytest.mark.parametrize("name, old, new, cause", [
    ("keys_exposed_by_reshape", "k.reshape(B, T_all, self.num_heads, self.d_k)", "k.transpose(0, 2, 1, 3)",
     "axes are swapped"),
    ("keys_merged_by_reshape", "k.reshape(B, T_all, self.num_heads * self.d_k)",
     "k.transpose(0, 2, 1, 3).reshape(B, T_all, self.num_heads * self.d_k)", "before splitting heads")])
def test_kv_cache_a_reshaped_cache_is_not_called_another_layout(name, old, new, cause, tmp_path):
    """A cache exposed as a reshape of (B, H, T, d_k) has the shape of a (B, T, H, d_k) or (B, T, D)
    cache with time and heads mixed: a symptom, while the same shape holding the true keys in that
    layout (a transpose) is still named."""
    path = confuser("kv_cache", name)
    card = grade("kv_cache", path)
    assert_no_wrong_name(card, path)
    contents = failed(card)["cache_contents"]
    assert "wrong shape" in contents and cause not in contents and "Likely mistake" not in contents
    named = failed(grade("kv_cache", edited_confuser("kv_cache", name, old, new, tmp_path)))["cache_contents"]
    assert cause in named, named


# -- causal_mask: 0 and -1 are not an additive mask --------------------------------------------------

def test_causal_mask_an_offset_mask_is_not_called_additive(tmp_path):
    """allowed - 1 has the values of an additive mask's kind (0 and one negative number) and masks
    nothing when added: named by its truth values (the polarity), never "additive"; a 0/-inf mask
    still is."""
    path = confuser("causal_mask", "mask_offset_by_one")
    card = grade("causal_mask", path)
    assert_no_wrong_name(card, path)
    assert not any("additive" in m for m in failed(card).values())
    assert "polarity" in failed(card)["causal_square"]
    edited = edited_confuser("causal_mask", "mask_offset_by_one", "allowed.astype(np.float32) - 1.0",
                             "np.where(allowed, 0.0, -np.inf)", tmp_path)
    assert "additive mask" in failed(grade("causal_mask", edited))["causal_square"]


# -- kv_cache: a hard-coded scale ----------------------------------------------------------------------

@pytest.mark.parametrize("track", ["numpy", "torch"])
def test_kv_cache_a_hard_coded_scale_is_not_called_a_formula(track):
    """A scale fixed at 0.25 is 1/sqrt(d_model) on the d_model = 16 sequences and 1/d_k on the d_k = 4
    ones: forward's replays named the first on some checks and the second on others (10 checks at
    seed 5); a replay is now named only when every forward call of the run is right or its."""
    path = confuser("kv_cache", "scale_fixed_at_one_quarter", track)
    card = grade("kv_cache", path, track)
    assert_no_wrong_name(card, path)
    assert {"chunked_prefill", "no_cache_output", "float64"} <= set(failed(card))
    assert not any("1/sqrt(d_model)" in m or "divided by d_k" in m for m in failed(card).values())


@pytest.mark.parametrize("track", ["numpy", "torch"])
@pytest.mark.parametrize("bank", [True, False])
def test_kv_cache_one_over_sqrt_d_model_is_still_named(track, bank, tmp_path, monkeypatch):
    """The mistake the confuser imitates is named by the bank's replay, and without the bank (its
    replay off: ``apply_bank`` returns the checks as judged) by forward's own replay."""
    if not bank:
        import grader.grading.grade as grade_module  # noqa: PLC0415

        monkeypatch.setattr(grade_module, "apply_bank", lambda exercise, plan, seed, device, checks, *a, **k: checks)
    path = edited_confuser("kv_cache", "scale_fixed_at_one_quarter", "* SCALE", "/ math.sqrt(self.d_model)",
                           tmp_path, track)
    card = grade("kv_cache", path, track)
    named = [m for m in failed(card).values() if m.startswith("Likely mistake: ") and "1/sqrt(d_model)" in m]
    assert len(named) >= 3, failed(card)
    assert any(c.details.get("mistake") for c in card.checks) is bank


# -- softmax: NaN on an all -inf slice ---------------------------------------------------------------

@pytest.mark.parametrize("track", ["numpy", "torch"])
@pytest.mark.parametrize("bank", [True, False])
def test_softmax_an_unguarded_shift_is_not_told_its_nan_is_zero_over_zero(track, bank, monkeypatch):
    """The textbook stable softmax gets NaN on an all -inf slice from x - max = -inf - (-inf), before
    any division; the bank's sentence and the hint said "(0/0)", the mechanism of a guarded shift
    with an unguarded division only. Both now name the two ways (the evidence, NaN exactly on those
    slices, does not tell them apart), with the bank's replay and without it (the hint)."""
    if not bank:
        import grader.grading.grade as grade_module  # noqa: PLC0415

        monkeypatch.setattr(grade_module, "apply_bank", lambda exercise, plan, seed, device, checks, *a, **k: checks)
    path = confuser("softmax", "max_shift_unguarded", track)
    card = grade("softmax", path, track)
    assert_no_wrong_name(card, path)
    message = failed(card)["all_neg_inf"]
    assert message.startswith("Likely mistake: a slice that is entirely -inf gave NaN"), message
    assert "-inf - (-inf)" in message and "0/0" in message and "gave NaN (0/0)" not in message
    assert any(c.details.get("mistake") == "nan_all_neg_inf" for c in card.checks) is bank


# -- kv_cache: a cache scaled by a constant ------------------------------------------------------------

def test_kv_cache_a_constant_folded_into_the_keys_is_not_called_divided_by_sqrt_d_k():
    """Keys cached times a fixed 0.5: on the d_k = 4 sequences that is the true cache divided by
    sqrt(d_k), on the d_k = 8 ones it is not; the hint now needs every read of the attribute in the
    run to be right or scaled by its own d_k's factor."""
    path = confuser("kv_cache", "key_scale_folded_fixed")
    card = grade("kv_cache", path)
    assert_no_wrong_name(card, path)
    assert {"cache_contents", "long_sequence", "chunked_prefill"} <= set(failed(card))
    assert not any("sqrt(d_k)" in m for m in failed(card).values())


def test_kv_cache_keys_cached_divided_by_sqrt_d_k_are_still_named(tmp_path):
    path = edited_confuser("kv_cache", "key_scale_folded_fixed", "* KEY_SCALE ", "/ math.sqrt(self.d_k)",
                           tmp_path)
    card = grade("kv_cache", path)
    fails = failed(card)
    assert set(fails) == {"cache_contents", "long_sequence"}, fails  # the output is right: only the cache
    for check in ("cache_contents", "long_sequence"):
        assert fails[check].startswith("Likely mistake: the cached k-projections are divided by sqrt(d_k)")
    # the hint goes through judges.with_hint: the sentence is the check's diagnosis and the headline's
    for c in card.checks:
        if c.id in fails:
            assert c.details.get("mistake") or c.details["diagnosis"].startswith("the cached k-projections")
    assert [m["message"] for m in card.mistakes if set(m["checks"]) & set(fails)][0].startswith("the cached k-projections")


# -- transformer_block: near misses of the replayed mistakes --------------------------------------------

@pytest.mark.parametrize("name, cause", [
    ("layernorm_eps_one_millionth", "eps"), ("gelu_sigmoid_approximation", "GELU"),
    ("residual_halved", "residual")])
def test_transformer_block_near_misses_get_no_replayed_name(name, cause):
    """A wrong eps inside the root, the sigmoid GELU and a halved residual sit near the replays of eps
    outside the root, the tanh GELU and a missing residual; none is either, and none gets a name."""
    path = confuser("transformer_block", name)
    card = grade("transformer_block", path)
    assert_no_wrong_name(card, path)
    assert {"values", "float64"} <= set(failed(card))
    assert not any(m.startswith("Likely mistake") for m in failed(card).values()), cause


# -- flash_attention: near misses of the replayed mistakes ----------------------------------------------

@pytest.mark.parametrize("name, check", [("causal_bound_top_left", "causal_bottom_right"),
                                         ("inverse_rescale", "values")])
def test_flash_near_misses_get_no_replayed_name(name, check):
    """A causal loop bounded top-left (it skips the blocks of the offset, one block only where the offset
    is one block) and a rescale by the inverse factor (sum and output both rescaled, wrongly) sit near
    causal_block_short and the unrescaled sum/output; none of those is named."""
    path = confuser("flash_attention", name, "numpy")
    card = grade("flash_attention", path, "numpy")
    assert_no_wrong_name(card, path)
    assert check in failed(card)
    assert not any(m.startswith("Likely mistake") for m in failed(card).values())


# -- softmax: an axis ignored on some calls only ---------------------------------------------------------

def test_softmax_an_axis_ignored_for_3d_inputs_only_is_not_called_ignored_always():
    """The bank's ignores_axis reproduced this file's 3-D cases and was named on three checks, though
    the file gets the 2-D axis=0 cases right; a lone mutant is now refused when its values are wrong
    on a call of the same function that the candidate got right (and so is the hand-written hint)."""
    path = confuser("softmax", "axis_ignored_for_3d")
    card = grade("softmax", path)
    assert_no_wrong_name(card, path)
    assert {"axes", "float64", "non_contiguous"} <= set(failed(card))
    assert not any("ignored" in m for m in failed(card).values())


def test_softmax_an_axis_ignored_always_is_one_headline_beside_another_mistake():
    """bug_ignores_axis also gives NaN on an all -inf slice, so no lone mutant explains it; the hint
    names the ignored axis once for every axis it was asked (it said 'axis 1 instead of axis 0' on one
    case and 'axis 2 instead of axis 1' on another: two headlines for one mistake)."""
    path = ROOT / "submissions/samples/softmax/bug_ignores_axis.py"
    card = grade("softmax", path)
    headlines = [m["message"] for m in card.mistakes]
    assert headlines.count("the axis argument is ignored: the softmax is always taken over the last axis.") == 1
    assert not any("instead of axis" in h for h in headlines), headlines
    assert len(headlines) == 2 and "entirely -inf gave NaN" in headlines[1]


def test_only_calls_of_the_same_function_can_contradict_a_mutant():
    """``_same_function``: the passed steps that may contradict a lone mutant call what a failed step
    calls (attention_scores: a mistake in scaled_dot_product_attention alone is not contradicted by
    compute_attention_scores' right answers, which a mutant patching a shared helper may get wrong)."""
    from grader.grading.grade import _same_function, build_plan  # noqa: PLC0415

    plan = build_plan(get_exercise("attention_scores"), 5)
    calls = {}
    for step in plan.steps:
        calls.setdefault(step.wire.get("target"), []).append(step.id)
    sdpa, scores = calls["scaled_dot_product_attention"], calls["compute_attention_scores"]
    same = _same_function(plan, sdpa[:1], sdpa[1:] + scores)
    assert same == sdpa[1:] and not set(same) & set(scores)


# -- found by a hunt for wrong names (issue 24): each was named wrongly before ----------------------------

@pytest.mark.parametrize("exercise_id, track, name, check", [
    ("attention_scores", "numpy", "max_shift_unguarded", "fully_masked_rows"),
    ("attention_scores", "torch", "max_shift_unguarded", "fully_masked_rows"),
    ("gqa", "numpy", "max_shift_unguarded", "fully_masked_rows"),
    ("sliding_window_attention", "torch", "division_unguarded", "fully_masked_rows"),
    ("flash_attention", "torch", "final_division_unguarded", "causal_bottom_right")])
def test_nan_on_rows_that_see_no_key_names_both_ways_it_arises(exercise_id, track, name, check):
    """An unguarded max (-inf - (-inf)) and an unguarded division (0/0) give NaN on the same rows; the
    sentences named one (attention_scores, gqa: "(0/0)"; sliding, flash: exp(-inf - (-inf))) and the
    confusers here take the other way. The sentence now names both."""
    path = confuser(exercise_id, name, track)
    card = grade(exercise_id, path, track)
    assert_no_wrong_name(card, path)
    message = failed(card)[check]
    assert message.startswith("Likely mistake: ") and "-inf - (-inf)" in message and "0/0" in message, message


def test_gqa_a_mutant_failing_a_cost_check_the_candidate_passes_is_not_named():
    """K and V projected once and then repeated along the sequence give kv_repeated_along_sequence's
    values, but that mutant repeats x before the projection and fails kv_flops, which this file passes:
    it was named on ten checks."""
    path = confuser("gqa", "projected_kv_repeated_along_sequence")
    card = grade("gqa", path)
    assert_no_wrong_name(card, path)
    assert "kv_flops" not in failed(card) and "values" in failed(card)
    assert not any(c.details.get("mistake") == "kv_repeated_along_sequence" for c in card.checks)


@pytest.mark.parametrize("track", ["numpy", "torch"])
def test_causal_mask_a_mask_cached_by_seq_len_is_not_told_kv_len_was_ignored(track):
    """A mask cache keyed by seq_len alone returns a stale square mask for (5, 6) after (5, 5), but it is
    right on (3, 8): the hint now needs every call with kv_len != seq_len to return the square mask."""
    path = confuser("causal_mask", "mask_cached_by_seq_len", track)
    card = grade("causal_mask", path, track)
    assert_no_wrong_name(card, path)
    assert "causal_kv_len" in failed(card)
    assert not any("kv_len was ignored" in m for m in failed(card).values())


@pytest.mark.parametrize("track", ["numpy", "torch"])
def test_causal_mask_ignoring_kv_len_everywhere_is_still_named(track, tmp_path):
    path = edited_confuser("causal_mask", "mask_cached_by_seq_len", "if seq_len not in _MASKS:",
                           "kv_len = seq_len  # ignored\n    if seq_len not in _MASKS:", tmp_path, track)
    card = grade("causal_mask", path, track)
    assert failed(card)["causal_kv_len"].startswith("Likely mistake: kv_len was ignored"), failed(card)
    assert {c.details.get("mistake") for c in card.checks if c.id == "causal_kv_len"} == {"kv_len_ignored"}


# -- rope and positional_encoding: precision look-alikes, a one-row coincidence, the same output --------

@pytest.mark.parametrize("track", ["torch", "numpy"])
@pytest.mark.parametrize("name", ["twopi_remainder_float32_const", "float32_output_buffer", "cos_as_shifted_sin",
                                  "returns_float32_except_half"])
def test_rope_float32_precision_look_alikes_get_a_symptom_not_a_table(track, name):
    """A float64 table reduced by a float32 2*pi, a float32 output buffer, a float32 pi/2 phase and a float32
    return all leave float64 inputs at about float32 precision; none builds a float32 angle table. The
    hand-written sentence is now a symptom (no "Likely mistake"), and the bank's float32 mutants, whose
    errors are larger (a float32 angle at position ~1000), are not within their replay ratio from below."""
    path = confuser("rope", name, track)
    card = grade("rope", path, track)
    assert_no_wrong_name(card, path)
    float64 = next(c for c in card.checks if c.id == "float64")
    assert float64.verdict == "failed" and not float64.message.startswith("Likely mistake")
    assert not {"float32_table_for_float64", "float32_cos_sin_for_float64"} & set(card_names(card))


@pytest.mark.parametrize("track, name", [("torch", "float32_table_for_float64"), ("numpy", "float32_table_for_float64"),
                                         ("numpy", "float32_cos_sin_for_float64")])
def test_rope_a_float32_table_is_still_named_by_its_replay(tmp_path, track, name):
    """The bank's own float32 tables keep their names: their error is their own, within the ratio both ways."""
    mistake = next(m for m in get_exercise("rope", track=track).mistakes if m.name == name)
    path = tmp_path / f"{name}.py"
    path.write_text(mistake.source)
    card = grade("rope", path, track)
    assert card_names(card) == [name]


@pytest.mark.parametrize("track", ["torch", "numpy"])
def test_rope_positions_relative_to_the_first_are_not_positions_restarted(track):
    """positions - positions[0] equals positions restarted at 0 on contiguous positions, and on the
    unsorted case only on its first row (both 0): one shared row of four wrong ones is no longer enough
    for the restart's replay (diagnosis.SHARED_WRONG_FRACTION), so nothing is named."""
    path = confuser("rope", "positions_relative_to_first", track)
    card = grade("rope", path, track)
    assert_no_wrong_name(card, path)
    assert "positions_restart" not in card_names(card) and "positions_types" in failed(card)


def test_a_mutant_within_its_ratio_from_above_only():
    """diagnosis._within_error_ratio: a candidate wrong by the mutant's order of error is the mutant's,
    one wrong by a hundredth of it is rounding of another kind."""
    from grader.grading import diagnosis  # noqa: PLC0415
    from grader.judge.tolerance import Tolerance  # noqa: PLC0415
    from grader.run.channel import StepResult  # noqa: PLC0415

    rng = np.random.default_rng(0)
    golden = rng.standard_normal((4, 8))
    mutant = golden + 1e-5 * rng.standard_normal((4, 8))            # a float32-table-sized error
    gold = StepResult(report={"ok": True}, arrays={"g": golden})
    tol = Tolerance(rtol=1e-10, atol=1e-12, dtype="float64")
    same_order = golden + 1e-5 * rng.standard_normal((4, 8))
    far_smaller = golden + 1e-7 * rng.standard_normal((4, 8))      # a float32 output rounding
    desc = {"kind": "array", "key": "g"}
    assert diagnosis._within_error_ratio(same_order, mutant, gold, desc, 10.0, tol)
    assert not diagnosis._within_error_ratio(far_smaller, mutant, gold, desc, 10.0, tol)
    assert not diagnosis._within_error_ratio(golden, mutant, gold, desc, 10.0, tol)  # right values


# -- cost replays and growth hints: a cost, not a structure --------------------------------------------

def test_a_plain_probe_hint_is_a_symptom():
    """A probe's ``hint = "..."`` has no conditions: it is read from the failure alone (something grows),
    so it is shown as a symptom, never as a cause (sliding_window_attention's "q @ k^T over all L_k keys"
    was said of band scores whose full weights @ V cost the same: confuser band_scores_full_pv)."""
    from grader.judge.judges import Symptom  # noqa: PLC0415
    from grader.judge.probes import ProbeSpec  # noqa: PLC0415

    spec = ProbeSpec.from_toml({"check": "flops_scaling", "quantity": "flops", "sweep": "seq_len",
                                "sizes": [64, 128], "max_ratio": 4.0, "max_ratio_slope": 0.3, "hint": "grows."})
    assert [isinstance(h.text, str) and h.symptom for h in spec.hints] == [True]
    for ex_id in ("sliding_window_attention", "flash_attention"):
        for track in get_exercise(ex_id).tracks:
            for probe in get_exercise(ex_id, track=track).probes:
                assert probe.hints and all(h.symptom for h in probe.hints), probe.check  # plain hints only
    assert isinstance(spec.hints[0].text, str) and not isinstance(spec.hints[0].text, Symptom)


@pytest.mark.parametrize("exercise_id, name, track, mutant", [
    ("mha", "masked_output_per_row", "torch", "masked_scores_per_query_row"),
    ("sliding_window_attention", "band_scores_full_pv", "numpy", "full_scores"),
])
def test_a_cost_replay_leads_with_the_cost(exercise_id, name, track, mutant):
    """Right values and the cost of a bank mutant, through another structure of the same size: the
    name comes from the cost alone, so its sentence leads with the cost ("your measured cost equals
    ... that of this mistake (a different structure of the same size costs the same): ...") and no
    check states the structure as a bare cause."""
    path = confuser(exercise_id, name, track)
    card = grade(exercise_id, path, track)
    assert_no_wrong_name(card, path)
    costly = [c for c in card.checks if c.category == "complexity" and c.verdict == "failed"]
    assert any(c.details.get("mistake") == mutant for c in costly)  # the cost replay does name it
    for c in costly:
        if c.details.get("mistake"):
            assert c.details["mistake"] == mutant and c.details["evidence"] == "cost"
            assert c.message.startswith("Likely mistake: your measured cost equals, at the larger sizes, that of this mistake")
        else:
            assert not c.message.startswith("Likely mistake"), c.message
    assert [c.id for c in card.checks if c.category != "complexity" and c.verdict != "passed"] == []



def test_a_mutant_is_refused_where_the_candidate_passes_a_check_it_fails(tmp_path):
    """-inf replaced by the dtype's minimum makes an all -inf slice uniform, as a clamp at -80 does, but
    keeps -inf beside finite logits exactly 0: it passes neg_inf_entries, which exponent_clamped is
    declared (and proven) to fail, so that mutant is not named; the clamp itself still is."""
    path = confuser("softmax", "neg_inf_to_finfo_min", "torch")
    card = grade("softmax", path, "torch")
    assert_no_wrong_name(card, path)
    assert "neg_inf_entries" not in failed(card) and "all_neg_inf" in failed(card)
    clamp = next(m for m in get_exercise("softmax", track="torch").mistakes if m.name == "exponent_clamped")
    mutant = tmp_path / "exponent_clamped.py"
    mutant.write_text(clamp.source)
    assert "exponent_clamped" in card_names(grade("softmax", mutant, "torch"))


def test_hints_that_reproduce_an_output_lead_with_what_they_prove():
    """kv_cache's missing-mask replay and softmax's overflow hint reproduce the output, which a mask
    offset that hides nothing and a shift skipped on one path reproduce too: the sentences lead with
    the output's property and give the mechanism as an example (or ask for the fix on every path)."""
    kv = grade("kv_cache", confuser("kv_cache", "offset_after_update", "torch"), "torch")
    assert_no_wrong_name(kv, confuser("kv_cache", "offset_after_update", "torch"))
    # its uncached calls keep the right mask, where a missing mask would be wrong: the replay is refused
    # (right_or_variant_in_every_call), and where a replay does name it, the sentence leads with the output
    assert all(h.startswith("with ") and "(or a mask whose offset hides nothing)" in h
               for h in hints(kv) if "attended to the new tokens after it" in h)
    assert not any("no causal mask inside a multi-token prefill:" in h for h in hints(kv))
    sm = grade("softmax", confuser("softmax", "shift_above_threshold"))
    assert_no_wrong_name(sm, confuser("softmax", "shift_above_threshold"))
    assert any(h.startswith("exp overflowed: the output is the softmax computed without subtracting") for h in hints(sm))


def test_a_replay_is_refused_where_a_call_is_right_and_the_mistake_would_not_be(tmp_path):
    """rope's hand-written replays (judges.right_or_variant_in_every_call): a sign vector negated in
    place at every call makes every other call a reflection and the rest right; a missing minus sign
    would be wrong on the right calls too, so it is not named. The mistake itself, every call, still is."""
    path = confuser("rope", "cached_sign_flipped")
    card = grade("rope", path)
    assert_no_wrong_name(card, path)
    assert not any("lost its minus sign" in h for h in hints(card))
    mistake = next(m for m in get_exercise("rope").mistakes if m.name == "rotate_half_no_minus")
    real = tmp_path / "no_minus.py"
    real.write_text(mistake.source)
    card = grade("rope", real)
    assert "rotate_half_no_minus" in card_names(card) or any("lost its minus sign" in h for h in hints(card))


# -- bank sentences that led with a mechanism their replay does not prove ----------------------------

@pytest.mark.parametrize("exercise_id, name, check, mistake, proves, mechanism", [
    ("flash_attention", "running_max_clamped_at_zero", "large_scores", "running_max_init_zero",
     "the running max stayed above every score of a row", "the running max started at 0"),
    ("linear_attention", "causal_total_minus_inclusive_suffix", "single_token", "state_read_before_update",
     "query i saw keys j < i, not j <= i", "the causal state was read before"),
    ("causal_mask", "ids_cast_to_int8", "padding_mask", "ids_cast_to_uint8",
     "wrapped modulo 256", "were cast to uint8"),
])
def test_a_bank_sentence_leads_with_what_its_replay_proves(exercise_id, name, check, mistake, proves, mechanism):
    """A clamp at 0 on a running max that starts at -inf, inclusive suffix sums subtracted from the
    total, ids cast to int8: each output is the named mutant's (the name stays), but the mutant's
    mechanism (m started at 0, the state read before its update, a uint8 cast) is not the file's, so
    the sentence leads with the effect and gives the mechanism as an example."""
    path = confuser(exercise_id, name)
    card = grade(exercise_id, path)
    assert_no_wrong_name(card, path)
    [named] = [c for c in card.checks if c.id == check]
    assert named.details.get("mistake") == mistake
    assert proves in named.message and mechanism not in named.message



@pytest.mark.parametrize("name", ["running_max_floor_minus_50", "padded_zero_in_block_max"])
def test_flash_a_running_max_above_a_row_is_not_said_never_to_go_below_zero(name):
    """A running max floored at -50, or a block max that takes in the zero scores of padded keys, goes
    below 0 (helper hunt): the replay of m = 0 proves only that m stayed above the row's scores, and the
    sentence says that, with the ways it happens as examples."""
    path = confuser("flash_attention", name, "numpy")
    card = grade("flash_attention", path, "numpy")
    assert_no_wrong_name(card, path)
    [named] = [c for c in card.checks if c.id == "large_scores"]
    assert named.details.get("mistake") == "running_max_init_zero"
    assert "stayed above every score of a row" in named.message and "never went below 0" not in named.message

def test_causal_mask_nan_where_allowed_is_not_called_an_additive_mask(tmp_path):
    """(1 - allowed) * -inf is NaN where allowed and -inf where masked: no 0 anywhere, so "additive mask
    (0 where allowed ...)" is not said of it; the same file returning 0 where allowed still is."""
    path = confuser("causal_mask", "additive_mask_times_inf")
    card = grade("causal_mask", path)
    assert_no_wrong_name(card, path)
    assert "causal_square" in failed(card) and not any("additive mask" in m for m in failed(card).values())
    edited = edited_confuser("causal_mask", "additive_mask_times_inf",
                             "((1.0 - mask.astype(np.float64)) * -np.inf)", "np.where(mask, 0.0, -np.inf)", tmp_path)
    assert "additive mask" in failed(grade("causal_mask", edited))["causal_square"]


@pytest.mark.parametrize("exercise_id, track, name, check, mistake, proves, mechanism", [
    ("attention_scores", "torch", "scores_times_mask", "mask_2d", "mask_filled_with_tiny_positive",
     "masked keys kept a score of about 0", "the masked scores were filled with 1e-9"),
    ("attention_scores", "torch", "scale_exponent_sign_flipped", "scaling", "divided_by_inverse_scale",
     "multiplied by sqrt(d_k) instead of divided by it", "the scores were divided by the scale"),
    ("attention_scores", "torch", "mask_magnitude_threshold", "mask_numeric", "mask_truncated_to_integer",
     "fractional mask entries such as 0.5 were read as 0", "a float mask was converted to an integer"),
    ("gqa", "numpy", "scores_as_mean_of_products", "values", "logits_divided_by_d_k",
     "as when the 1/sqrt(d_k) scale is applied twice", "(the 1/sqrt(d_k) scale applied twice)"),
    ("mha", "numpy", "empty_rows_reset_to_zero_scores", "fully_masked_rows", "finite_mask_fill",
     "a query row whose keys are all masked got uniform weights", "masked scores were filled with a finite"),
])
def test_a_bank_sentence_of_a_hunt_leads_with_its_effect(exercise_id, track, name, check, mistake, proves,
                                                          mechanism):
    """Scores times the 0/1 mask, d_k ** 0.5 as the scale, a magnitude threshold on the mask, a mean over
    d_k, fully masked rows reset to 0 scores: each output is the named mutant's, whose mechanism the file
    does not have, so the sentence states the effect and gives the mechanism as an example."""
    path = confuser(exercise_id, name, track)
    card = grade(exercise_id, path, track)
    assert_no_wrong_name(card, path)
    [named] = [c for c in card.checks if c.id == check]
    assert named.details.get("mistake") == mistake
    assert proves in named.message and mechanism not in named.message


@pytest.mark.parametrize("exercise_id, track, name", [
    ("attention_scores", "torch", "softmax_denominator_epsilon"),
    ("mha", "numpy", "softmax_denominator_epsilon"),
    ("transformer_block", "torch", "gelu_approximate_erf"),
])
def test_an_error_of_float32_size_in_float64_values_is_not_called_float32_internals(exercise_id, track, name,
                                                                                     tmp_path):
    """A softmax dividing by sum + 1e-7, an approximate erf: float64 throughout, off by about float32's
    precision, within float32_internals's REPLAY_ERROR_RATIO. That replay now also needs the output's
    values to be float32 numbers (REPLAY_EVIDENCE), so these get no name, and the bank's own mutant
    (computed in float32, cast back) is still named."""
    path = confuser(exercise_id, name, track)
    card = grade(exercise_id, path, track)
    assert_no_wrong_name(card, path)
    assert "float64" in failed(card)
    assert not any(c.details.get("mistake") == "float32_internals" for c in card.checks)
    [mutant] = [m for m in get_exercise(exercise_id, track=track).mistakes if m.name == "float32_internals"]
    assert mutant.error_ratio.float32_values
    written = tmp_path / "float32_internals.py"
    written.write_text(mutant.source)
    named = grade(exercise_id, written, track)
    assert [c.details.get("mistake") for c in named.checks if c.id == "float64"] == ["float32_internals"]
    assert "came out as float32 numbers" in failed(named)["float64"]


# -- float32_internals (every exercise with REPLAY_EVIDENCE = "float32_values") ---------------------------

@pytest.mark.parametrize("exercise_id,track", [("flash_attention", "numpy"), ("gqa", "numpy"),
                                               ("linear_attention", "torch"), ("sliding_window_attention", "torch"),
                                               ("sliding_window_attention", "numpy"), ("transformer_block", "numpy")])
def test_a_float64_result_rounded_to_float32_at_the_end_is_not_called_float32_internals(exercise_id, track):
    """A float64 computation whose result alone is rounded to float32 (a float32 output buffer, a cast
    down and back) leaves float32 numbers, as float32 internals do, but each is the right answer rounded
    once: the replay's evidence tells them apart, and the comparison says what it proved."""
    path = confuser(exercise_id, "output_rounded_to_float32", track)
    card = grade(exercise_id, path, track)
    assert_no_wrong_name(card, path)
    assert "float32_internals" not in card_names(card)
    assert "Every value is the expected value rounded to float32" in failed(card)["float64"]


@pytest.mark.parametrize("exercise_id,track", [("gqa", "numpy"), ("flash_attention", "numpy"),
                                               ("transformer_block", "numpy"), ("rope", "numpy")])
def test_float32_internals_are_still_named(exercise_id, track, tmp_path):
    """The mutant of the bank, graded as a candidate's file: its errors exceed one float32 rounding. In
    rope's NumPy track float32_cos_sin_for_float64 explained it too (neither was named) until that
    replay asked for values that are no float32 numbers (REPLAY_EVIDENCE = "float64_values")."""
    from grader.judge.mistakes import load_mistake  # noqa: PLC0415

    ex = get_exercise(exercise_id, track=track)
    mistake = load_mistake(ex.mistakes_dir / "float32_internals.py", ex.reference_path)
    path = tmp_path / "float32_internals_candidate.py"
    path.write_text(mistake.source)
    card = grade(exercise_id, path, track)
    assert "float32_internals" in card_names(card)
    assert "Every value is the expected value rounded to float32" not in failed(card)["float64"]


def test_rounded_to_float32_needs_every_value_within_one_float32_step():
    from grader.judge.compare import rounded_to_float32  # noqa: PLC0415

    golden = np.random.default_rng(0).standard_normal(200)
    assert rounded_to_float32(golden.astype(np.float32).astype(np.float64), golden)
    drift = golden.astype(np.float32)
    drift[7] = np.nextafter(np.nextafter(drift[7], np.float32(np.inf)), np.float32(np.inf))  # two steps off
    assert not rounded_to_float32(drift.astype(np.float64), golden)
    assert not rounded_to_float32(golden, golden + 1.0)
    assert not rounded_to_float32(np.full(3, np.nan), np.zeros(3))


@pytest.mark.parametrize("name", ["cos_as_sin_with_typed_half_pi", "two_pi_typed_to_7_digits"])
def test_positional_encoding_typed_constants_are_given_as_a_cause_of_float32_precision(name):
    """float64 angles reduced by a typed 2*pi, or cos as sin(a + 1.5707964), drift as float32 angles do
    (helper hunt): the hint and the bank say what is proven (float32 precision) and give typed
    constants among its causes, not only a float32 computation."""
    path = confuser("positional_encoding", name, "torch")
    card = grade("positional_encoding", path, "torch")
    assert_no_wrong_name(card, path)
    large = failed(card)["large_positions"]
    assert "only to the precision of float32 angles" in large
    assert "pi/2 or ln(10000) is typed to 6 or 7 digits" in large


def test_causal_mask_the_batch_minimum_as_pad_is_not_told_it_compared_with_zero(tmp_path):
    """`seq != seq.min()` equals `seq != 0` on a case where 0 is the smallest id, and not on a case
    with no 0 among the ids (public and hidden): the hint must explain every padding and combined call
    of the run, each right where a comparison with 0 is right too or equal to it (as the bank's
    replay). The mistake itself, a comparison with 0, is still named."""
    path = confuser("causal_mask", "pad_is_batch_min", "torch")
    card = grade("causal_mask", path, "torch")
    assert_no_wrong_name(card, path)
    assert "padding_mask" in failed(card)
    assert not any("compared with 0" in h for h in hints(card))
    real = tmp_path / "compared_with_zero.py"
    real.write_text(path.read_text().replace("seq != seq.min()", "seq != 0"))
    assert real.read_text() != path.read_text()
    card = grade("causal_mask", real, "torch")
    assert "pad_token_ignored" in card_names(card) or any("compared with 0" in h for h in hints(card))


def test_transformer_block_eps_squared_is_told_what_was_added_not_which_eps_was_used():
    """sqrt(var + eps**2) with eps = 1e-5 reproduces an eps of 1e-10 (helper hunt): the name stands, and
    its sentence leads with what the replay proves (much less than 1e-5 added to the variance), not
    that the candidate's eps was a smaller constant."""
    path = confuser("transformer_block", "eps_squared", "numpy")
    card = grade("transformer_block", path, "numpy")
    assert_no_wrong_name(card, path)
    [named] = [c for c in card.checks if c.id == "layer_norm_scale"]
    assert named.details.get("mistake") == "eps_too_small"
    assert "added much less than 1e-5 to the variance" in named.message and "used an eps much smaller" not in named.message
