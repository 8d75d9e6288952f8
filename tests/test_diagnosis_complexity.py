"""Diagnosis of the two kinds of wrong file that value replay cannot name (issue 15, item 1):
forbidden API use (named from direct evidence: the static scan, the import guard, the op audit) and
complexity mistakes (named by replaying the bank's complexity mutants through the probe's measured
steps, ``grader.grading.diagnosis.explaining_cost``)."""
import tempfile
from pathlib import Path

import pytest

from grader.grading import diagnosis
from grader.grading.exercise import get_exercise, project_root
from grader.grading.grade import FORBIDDEN_MISTAKE, _MEASURE_LOCK, grade_submission
from grader.grading.trusted import TrustedInProcess

SAMPLES = project_root() / "submissions" / "samples"


def _grade(exercise, path: Path, seed: int = 3):
    return grade_submission(exercise, path, seed=seed, trusted_runner=TrustedInProcess(path.name, _MEASURE_LOCK))


def _grade_source(exercise, source: str, seed: int = 3):
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "candidate.py"
        path.write_text(source, encoding="utf-8")
        return _grade(exercise, path, seed)


def _named(card) -> list[str]:
    return sorted({c.details["mistake"] for c in card.checks if c.details.get("mistake")})


# -- same_cost: the matching rule, checked against figures computed by hand --------------------------

def test_same_cost_needs_the_large_sizes_within_a_few_percent_and_the_same_growth():
    sizes = [16, 32, 64, 128]
    cubic = [float(n ** 3) for n in sizes]
    # small sizes may differ (fixed costs of two styles), the larger half may not
    assert diagnosis.same_cost(sizes, cubic, [2 * cubic[0], 1.5 * cubic[1], 1.01 * cubic[2], 0.99 * cubic[3]])
    assert not diagnosis.same_cost(sizes, cubic, [cubic[0], cubic[1], 1.08 * cubic[2], cubic[3]])
    # same figure at the largest size but a different growth exponent over the larger half: n^3 vs n^2
    squared_matching_at_top = [c * 128 / n for c, n in zip(cubic, sizes)]  # n^2 * 128
    assert squared_matching_at_top[-1] == cubic[-1]
    assert not diagnosis.same_cost(sizes, cubic, squared_matching_at_top)
    assert not diagnosis.same_cost(sizes, cubic, cubic[:3])


# -- forbidden API -------------------------------------------------------------------------------

@pytest.mark.parametrize("exercise_id, track, sample, seen", [
    ("softmax", None, "softmax/bug_scipy.py", "scipy.special.softmax"),          # static scan
    ("mha", "numpy", "mha/numpy/bug_uses_torch.py", "torch"),                     # a module of another track
])
def test_forbidden_api_is_named_with_the_call_seen(exercise_id, track, sample, seen):
    card = _grade(get_exercise(exercise_id, track=track), SAMPLES / sample)
    assert card.score == 0
    assert {c.verdict for c in card.checks} == {"forbidden"}
    assert _named(card) == [FORBIDDEN_MISTAKE]
    assert all(seen in c.details["diagnosis"] and "rule:" in c.details["diagnosis"] for c in card.checks)


@pytest.mark.slow
def test_forbidden_op_seen_by_the_audit_is_named():
    """The sdpa reached through torch.ops is invisible to the static scan; the op audit saw it run."""
    card = _grade(get_exercise("gqa"), SAMPLES / "gqa" / "bug_sdpa_via_ops.py")
    assert _named(card) == [FORBIDDEN_MISTAKE]
    assert "op audit saw aten._scaled_dot_product" in card.checks[0].details["diagnosis"]


def test_a_forbidden_name_in_a_comment_or_string_is_not_named():
    exercise = get_exercise("softmax")
    source = (SAMPLES / "softmax" / "correct_logsumexp.py").read_text()
    source += '\n# scipy.special.softmax would do this\nNOTE = "scipy.special.softmax"\n'
    card = _grade_source(exercise, source)
    assert card.all_passed and _named(card) == []


# -- complexity ----------------------------------------------------------------------------------

@pytest.mark.parametrize("exercise_id, track, sample, check, mistake", [
    ("attention_scores", None, "attention_scores/bug_per_row_recompute.py", "work_scaling", "per_row_recompute"),
    ("causal_mask", None, "causal_mask/bug_cubic_combined.py", "memory_scaling", "cubic_position_comparison"),
    ("softmax", None, "softmax/bug_pairwise_quadratic.py", "memory_scaling", "pairwise_quadratic"),
    ("gqa", "numpy", "gqa/numpy/bug_expand_weights.py", "kv_flops", "kv_weights_expanded"),
    ("mha", "numpy", "mha/numpy/bug_full_projection_per_head.py", "flops_scaling", "full_projection_per_head"),
    ("kv_cache", None, "kv_cache/bug_recompute_kv.py", "decode_complexity", "recompute_kv"),
    ("flash_attention", "numpy", "flash_attention/numpy/bug_full_score_matrix.py", "memory_scaling",
     "full_score_matrix"),
])
def test_complexity_sample_is_named_by_its_own_mistake(exercise_id, track, sample, check, mistake):
    card = _grade(get_exercise(exercise_id, track=track), SAMPLES / sample)
    failed = {c.id: c for c in card.checks if c.verdict != "passed"}
    assert set(failed) == {check}
    assert failed[check].details["mistake"] == mistake
    assert failed[check].message.startswith("Likely mistake: ")
    assert _named(card) == [mistake]


@pytest.mark.slow
def test_expanded_weights_are_not_blamed_on_the_look_alike_that_also_fails_values():
    """In torch gqa, K/V repeated along the sequence costs exactly the kv FLOPs of W_k/W_v expanded to
    full width; it also fails ``values``, which this candidate passes, so only one mistake explains it."""
    exercise = get_exercise("gqa")
    look_alike = next(m for m in exercise.mistakes if m.name == "kv_repeated_along_sequence")
    assert "kv_flops" in look_alike.must_fail and "values" in look_alike.must_fail
    card = _grade(exercise, SAMPLES / "gqa" / "bug_expand_weights.py")
    assert [c.id for c in card.checks if c.verdict != "passed"] == ["kv_flops"]
    assert _named(card) == ["kv_weights_expanded"]


@pytest.mark.parametrize("exercise_id, sample", [
    ("softmax", "correct_logsumexp.py"),
    ("attention_scores", "correct_einsum.py"),
])
def test_correct_files_get_no_complexity_diagnosis(exercise_id, sample):
    path = SAMPLES / exercise_id / sample
    if not path.exists():
        pytest.skip(f"{sample} not in this checkout")
    card = _grade(get_exercise(exercise_id), path)
    assert card.all_passed and _named(card) == []


#: Quadratic memory reached another way than the bank's pairwise differences: the row sums are a
#: product with an (n, n) matrix of ones. Right values; not the bank's mistake.
ONES_MATRIX_SOFTMAX = '''
import numpy as np


def softmax(x, axis=-1):
    z = np.moveaxis(np.asarray(x), axis, -1)
    m = np.max(z, axis=-1, keepdims=True)
    m = np.where(np.isfinite(m), m, 0)
    e = np.exp(z - m)
    n = z.shape[-1]
    s = e @ np.ones((n, n), dtype=z.dtype)        # every entry of a row holds the row's sum
    out = np.divide(e, s, out=np.zeros_like(e), where=s > 0)
    return np.moveaxis(out, -1, axis)
'''


def test_a_quadratic_memory_style_not_in_the_bank_gets_no_wrong_name():
    card = _grade_source(get_exercise("softmax"), ONES_MATRIX_SOFTMAX)
    failed = {c.id: c for c in card.checks if c.verdict != "passed"}
    assert "memory_scaling" in failed
    # its memory grows like the bank's pairwise mutant, but not by the same figures: no name
    assert "mistake" not in failed["memory_scaling"].details


@pytest.mark.slow
def test_a_look_alike_is_replayed_even_after_a_candidate_that_excluded_it():
    """Mutant measurements are cached per mutant: after a candidate for which only kv_weights_expanded
    was a suspect, the K/V-repeated-along-the-sequence mutant (same kv FLOPs, also fails values) still
    has both mutants reproduce its kv_flops figures, so that check names none."""
    exercise = get_exercise("gqa")
    _grade(exercise, SAMPLES / "gqa" / "bug_expand_weights.py")
    mistake = next(m for m in exercise.mistakes if m.name == "kv_repeated_along_sequence")
    card = _grade_source(exercise, mistake.source)
    kv = next(c for c in card.checks if c.id == "kv_flops")
    assert kv.verdict == "failed" and "mistake" not in kv.details
    assert sorted(kv.details["mistakes_matching"]) == ["kv_repeated_along_sequence", "kv_weights_expanded"]
    assert _named(card) == ["kv_repeated_along_sequence"]


# -- waste on some paths only: the replay on those paths (``diagnosis.explaining_cost_on_paths``) ----

@pytest.mark.slow
@pytest.mark.parametrize("exercise_id, track, sample, check, mistake, paths", [
    ("gqa", None, "gqa/bug_expand_weights_unless_mqa.py", "kv_flops", "kv_weights_expanded", ["batched"]),
    ("kv_cache", "torch", "kv_cache/torch/bug_reprojects_history_when_batched.py", "decode_complexity",
     "recompute_kv", ["batched decode-step"]),
    ("linear_attention", "torch", "linear_attention/torch/bug_quadratic_when_batched.py", "flops_scaling",
     "quadratic_both_paths", ["causal=False, batch of 2", "causal=True, batch of 2"]),
])
def test_waste_on_some_paths_is_named_by_the_mutant_that_costs_the_same_there(exercise_id, track, sample, check,
                                                                              mistake, paths):
    """The mutant is wasteful on every path and the candidate only for a batch or several KV heads: the
    sums differ, so the whole-probe replay names nothing; on the paths where the candidate's own cost
    fails, the figures are the mutant's, and the message says which paths the claim is about."""
    card = _grade(get_exercise(exercise_id, track=track), SAMPLES / sample)
    failed = {c.id: c for c in card.checks if c.verdict != "passed"}
    assert failed[check].details["mistake"] == mistake
    assert failed[check].details["evidence"] == "cost_on_paths"
    assert failed[check].details["wasteful_paths"] == paths
    assert failed[check].message.startswith(f"Likely mistake: on the path{'s' if len(paths) > 1 else ''} where your "
                                            f"cost grows too fast ({'; '.join(paths)})")


#: gqa expanding W_k/W_v only for a batch, and projecting the keys twice there: wasteful on the same
#: path as the bank's kv_weights_expanded, by other figures (twice its key FLOPs on that path).
EXPAND_TWICE_WHEN_BATCHED = (SAMPLES / "gqa" / "bug_expand_weights_unless_mqa.py").read_text()


def test_waste_on_some_paths_by_other_figures_gets_no_name():
    source = EXPAND_TWICE_WHEN_BATCHED
    marker = "def grouped_query_attention("
    assert marker in source
    # the candidate calls itself once more on a batch: its batched path costs twice the sample's
    source = source.replace(marker, "def _gqa_once(", 1) + (
        "\n\ndef grouped_query_attention(x, *args, **kwargs):\n"
        "    out = _gqa_once(x, *args, **kwargs)\n"
        "    if x.shape[0] > 1:\n"
        "        out = _gqa_once(x, *args, **kwargs)\n"
        "    return out\n")
    card = _grade_source(get_exercise("gqa"), source)
    failed = {c.id: c for c in card.checks if c.verdict != "passed"}
    assert list(failed) == ["kv_flops"]
    assert "mistake" not in failed["kv_flops"].details and "wasteful_paths" not in failed["kv_flops"].details


@pytest.mark.slow
def test_dense_attention_with_a_band_mask_is_named_in_both_tracks():
    """Full scores, a dense band mask, the softmax and weights @ V over every key (Mistral's one-file
    reference): the bank's ``full_scores`` picks the band out of the full scores and costs less; the
    ``dense_band_attention`` mutant reproduces the figures."""
    for track, sample in (("numpy", "sliding_window_attention/numpy/bug_full_scores.py"),
                          ("torch", "sliding_window_attention/bug_dense_band_mask.py")):
        card = _grade(get_exercise("sliding_window_attention", track=track), SAMPLES / sample)
        assert _named(card) == ["dense_band_attention"], track
        memory = next(c for c in card.checks if c.id == "memory_scaling")
        assert memory.details["mistake"] == "dense_band_attention" and memory.details["evidence"] == "cost"
