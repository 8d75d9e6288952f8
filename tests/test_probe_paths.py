"""Probes on every path (issue 24, item 4): each complexity probe measures every option that changes the
algorithm (masked and not, causal and not, decode and chunked prefill, L_q == L_k and L_q < L_k, ...),
and the exercise says where an option cannot change the cost. Each bank mutant below is wasteful on one
path only (its docstring names the path and the probe check that must fail): a probe that measured the
other paths alone would pass it; the probe of its path must fail it. The correct samples pass every
probe, on every path."""
import pytest

from grader.grading.exercise import get_exercise
from probe_helpers import SAMPLES, probe_outcome

# (exercise, track, mutant wasteful on one path, the probe check of that path)
ONE_PATH_MUTANTS = [
    ("attention_scores", "numpy", "mask_rebuilt_per_query_row", "work_scaling"),
    ("attention_scores", "torch", "mask_rebuilt_per_query_row", "work_scaling"),
    ("mha", "torch", "masked_scores_per_query_row", "flops_scaling"),
    ("mha", "numpy", "masked_scores_per_query_row", "flops_scaling"),
    ("gqa", "torch", "kv_weights_expanded_with_mask", "kv_flops"),
    ("gqa", "numpy", "kv_weights_expanded_with_mask", "kv_flops"),
    ("kv_cache", "numpy", "chunk_reprojects_history", "decode_complexity"),
    ("causal_mask", "numpy", "kv_len_square_triangle", "memory_scaling"),
    ("causal_mask", "torch", "kv_len_square_triangle", "memory_scaling"),
    ("kv_cache", "torch", "chunk_reprojects_history", "decode_complexity"),
    ("flash_attention", "torch", "causal_bias_materialised", "memory_scaling"),
    ("flash_attention", "numpy", "causal_bias_materialised", "memory_scaling"),
    ("flash_attention", "torch", "cross_lengths_plain_attention", "memory_scaling"),
    ("flash_attention", "numpy", "cross_lengths_plain_attention", "memory_scaling"),
    ("sliding_window_attention", "torch", "cross_lengths_full_scores", "memory_scaling"),
    ("sliding_window_attention", "numpy", "cross_lengths_full_scores", "memory_scaling"),
    ("sliding_window_attention", "torch", "cross_lengths_full_scores", "flops_scaling"),
    ("sliding_window_attention", "numpy", "cross_lengths_full_scores", "flops_scaling"),
    # linear_attention judges the sum of its two paths (causal and not): an L x L matrix on either alone
    ("linear_attention", "numpy", "causal_quadratic_detour", "flops_scaling"),
    ("linear_attention", "numpy", "causal_quadratic_detour", "memory_scaling"),
    ("linear_attention", "torch", "causal_quadratic_detour", "flops_scaling"),
    ("linear_attention", "torch", "causal_quadratic_detour", "memory_scaling"),
    ("linear_attention", "numpy", "quadratic_detour", "flops_scaling"),
    ("linear_attention", "numpy", "quadratic_detour", "memory_scaling"),
    ("linear_attention", "torch", "quadratic_detour", "flops_scaling"),
    ("linear_attention", "torch", "quadratic_detour", "memory_scaling"),
]


@pytest.mark.parametrize("exercise_id, track, mistake, check", ONE_PATH_MUTANTS)
def test_a_mutant_wasteful_on_one_path_fails_the_probe_of_that_path(exercise_id, track, mistake, check):
    ex = get_exercise(exercise_id, track=track)
    assert check in next(m for m in ex.mistakes if m.name == mistake).must_fail
    outcome = probe_outcome(exercise_id, track, check, mistake=mistake)
    assert outcome.verdict == "failed", outcome.details
    assert outcome.details["method"] == "count"  # counts (or bytes), never the clock
    assert outcome.details["ratio_slope"] > outcome.details["max_ratio_slope"] or \
        max(outcome.details["ratios"]) > outcome.details["max_ratio"]


PROBED_TRACKS = sorted({(e, t) for e, t, _, _ in ONE_PATH_MUTANTS})


@pytest.mark.slow
@pytest.mark.parametrize("exercise_id, track", PROBED_TRACKS)
def test_every_correct_sample_passes_every_probe_on_every_path(exercise_id, track):
    ex = get_exercise(exercise_id, track=track)
    folder = SAMPLES / exercise_id
    if (folder / track).is_dir():
        folder = folder / track
    samples = sorted(folder.glob("correct_*.py"))
    assert samples, folder
    for path in samples:
        for probe in ex.probes:
            outcome = probe_outcome(exercise_id, track, probe.check, path=path)
            assert outcome.verdict == "passed", (path.name, probe.check, outcome.message)
