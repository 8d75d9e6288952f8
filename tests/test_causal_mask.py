"""Tests for the `causal_mask` exercise: the reference against independent constructions, and the
grader's verdicts and messages on known-correct and known-wrong solutions."""

from __future__ import annotations

import importlib.util
from pathlib import Path

import numpy as np
import pytest

from grader.grading.exercise import get_exercise, project_root
from grader.grading.grade import grade_submission
from grader.judge.mistakes import apply_patch
from attention_helpers import judge_in_process
from mutant_helpers import assert_named_as, mutant_file

SAMPLES = project_root() / "submissions" / "samples" / "causal_mask"


@pytest.fixture(scope="module")
def ref():
    path = project_root() / "reference" / "causal_mask.py"
    spec = importlib.util.spec_from_file_location("ref_causal_mask", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.fixture(scope="module")
def exercise():
    return get_exercise("causal_mask")


def grade(exercise, path: Path, seed: int = 11):
    card = grade_submission(exercise, path, sandbox="process", seed=seed)
    return card, {c.id: c for c in card.checks}


@pytest.mark.parametrize("L,S", [(1, 1), (1, 7), (4, 4), (3, 8), (5, 6), (2, 40)])
def test_causal_mask_is_the_offset_lower_triangle(ref, L, S):
    mask = ref.create_causal_mask(L, S)
    assert mask.shape == (1, 1, L, S)
    np.testing.assert_array_equal(mask[0, 0] != 0, np.tril(np.ones((L, S)), k=S - L) != 0)


def test_causal_mask_default_is_square_triangle(ref):
    np.testing.assert_array_equal(ref.create_causal_mask(4)[0, 0],
                                  np.array([[1, 0, 0, 0], [1, 1, 0, 0], [1, 1, 1, 0], [1, 1, 1, 1]], bool))
    np.testing.assert_array_equal(ref.create_causal_mask(3, None), ref.create_causal_mask(3))


def test_kv_len_shorter_than_seq_len_raises(ref):
    with pytest.raises(ValueError):
        ref.create_causal_mask(5, 3)


def test_padding_and_combined_masks_match_loops(ref):
    seq = np.array([[4, 0, 9, 3, 3], [3, 3, 1, 2, 0], [3, 3, 3, 3, 3]])
    pad = ref.create_padding_mask(seq, pad_token=3)
    comb = ref.create_combined_mask(seq, pad_token=3)
    assert pad.shape == (3, 1, 1, 5) and comb.shape == (3, 1, 5, 5)
    for b in range(3):
        for i in range(5):
            for j in range(5):
                assert bool(pad[b, 0, 0, j]) == (seq[b, j] != 3)
                assert bool(comb[b, 0, i, j]) == (j <= i and seq[b, j] != 3)
    assert not comb[2].any()                       # an all-padding row hides every key


def test_reference_gets_full_marks(exercise):
    card, _ = grade(exercise, exercise.reference_path)
    assert card.status == "graded" and card.score == card.max_score == exercise.max_score


def test_unseen_style_float32_masks_get_full_marks(exercise, tmp_path):
    src = tmp_path / "fromfunction.py"
    src.write_text('''
import numpy as np

def create_causal_mask(seq_len, kv_len=None):
    kv_len = seq_len if kv_len is None else kv_len
    if kv_len < seq_len:
        raise ValueError("too short")
    m = np.fromfunction(lambda i, j: (j <= i + kv_len - seq_len), (seq_len, kv_len)).astype(np.float32)
    return m.reshape(1, 1, seq_len, kv_len)

def create_padding_mask(seq, pad_token=0):
    return np.expand_dims(np.float32(1) - (seq == pad_token).astype(np.float32), axis=(1, 2))

def create_combined_mask(seq, pad_token=0):
    return create_causal_mask(seq.shape[1]) * create_padding_mask(seq, pad_token)
''')
    card, checks = grade(exercise, src)
    assert card.score == card.max_score, {k: c.message for k, c in checks.items() if c.verdict != "passed"}


def test_combined_or_is_caught_and_named(exercise, tmp_path):
    card, checks = grade(exercise, mutant_file("causal_mask", "combined_or", tmp_path))
    assert checks["combined_mask"].verdict == "failed"
    assert "combined with OR" in checks["combined_mask"].message
    assert checks["causal_square"].verdict == "passed" and checks["padding_mask"].verdict == "passed"


def test_leakage_probe_names_first_leaking_pair(exercise, tmp_path):
    _, checks = grade(exercise, mutant_file("causal_mask", "causal_polarity_inverted", tmp_path))
    leak = checks["no_future_leakage"]
    assert leak.verdict == "failed"
    assert leak.details["first_leak"] == {"batch": 0, "query": 0, "key": 1}
    assert "query 0" in leak.message and "key/value 1" in leak.message and "future token" in leak.message


def test_padding_on_query_axis_leaks_padded_keys(exercise, tmp_path):
    _, checks = grade(exercise, mutant_file("causal_mask", "combined_pads_query_axis", tmp_path))
    leak = checks["no_padding_leakage"]
    assert leak.verdict == "failed" and "a padding token" in leak.message
    assert "query axis" in checks["combined_mask"].message


def test_top_left_alignment_diagnosed(exercise, tmp_path):
    _, checks = grade(exercise, mutant_file("causal_mask", "causal_top_left", tmp_path))
    assert checks["causal_kv_len"].verdict == "failed"
    assert "top-left" in checks["causal_kv_len"].message
    assert checks["causal_square"].verdict == "passed"
    assert checks["no_future_leakage"].verdict == "passed"    # over-masking leaks nothing


def test_modifying_seq_costs_seq_unchanged_alone(exercise):
    """A right mask built by overwriting ``seq`` fails ``seq_unchanged`` only (issue 15: one mistake,
    one deduction); the mask checks judge the returned mask, which equals seq != pad_token."""
    path = SAMPLES / "bug_modifies_seq.py"
    ns: dict = {}
    exec(compile(path.read_text(), str(path), "exec"), ns)  # noqa: S102 - a repository sample
    seq = np.array([[5, 3, 0, 0], [0, 7, 1, 2]])
    mask = ns["create_padding_mask"](seq.copy())
    np.testing.assert_array_equal(mask[:, 0, 0], np.array([[5, 3, 0, 0], [0, 7, 1, 2]]) != 0)
    before = seq.copy()
    ns["create_padding_mask"](seq)
    assert not np.array_equal(seq, before)                     # the mistake, shown independently
    card, checks = grade(exercise, path)
    failed = {k for k, c in checks.items() if c.verdict != "passed"}
    assert failed == {"seq_unchanged"}
    assert "seq" in checks["seq_unchanged"].message
    assert card.score == card.max_score - 1


# One-line mistakes written into the np.tril / torch.tril style of the correct samples (the bank's
# mutants patch the reference, written with arange comparisons): replay names each of them in this
# style too, and nothing else. They were bug samples, each a copy of the correct one with these lines
# changed; the (old, new) pairs below are those edits.
TRIL = ("numpy", "correct_tril_bool.py")
TRIL_TORCH = ("torch", "torch/correct_tril.py")
TRIL_MISTAKES = [
    (TRIL, "combined_or", [("create_causal_mask(seq.shape[1]) & create_padding_mask",
                            "create_causal_mask(seq.shape[1]) | create_padding_mask")]),
    (TRIL, "combined_pads_query_axis", [("& create_padding_mask(seq, pad_token)",
                                         "& (seq != pad_token)[:, None, :, None]")]),
    (TRIL, "padding_polarity_inverted", [("return (seq != pad_token)[:, None, None, :]",
                                          "return (seq == pad_token)[:, None, None, :]"),
                                         ("& create_padding_mask(seq, pad_token)",
                                          "& (seq != pad_token)[:, None, None, :]")]),
    (TRIL, "pad_token_ignored", [("return (seq != pad_token)", "return (seq != 0)")]),
    (TRIL, "causal_top_left", [("dtype=bool), k=kv_len - seq_len)", "dtype=bool))")]),
    (TRIL, "causal_diagonal_masked", [("k=kv_len - seq_len)", "k=kv_len - seq_len - 1)")]),
    (TRIL, "causal_polarity_inverted", [("np.tril(np.ones((seq_len, kv_len), dtype=bool), k=kv_len - seq_len)",
                                         "np.triu(np.ones((seq_len, kv_len), dtype=bool), k=kv_len - seq_len + 1)"),
                                        ("return create_causal_mask(seq.shape[1]) &",
                                         "return ~create_causal_mask(seq.shape[1]) &")]),
    (TRIL, "kv_len_ignored", [("np.ones((seq_len, kv_len), dtype=bool), k=kv_len - seq_len)",
                               "np.ones((seq_len, seq_len), dtype=bool))")]),
    (TRIL, "no_value_error", [("    if kv_len < seq_len:\n        raise", "    if False:\n        raise")]),
    (TRIL, "causal_mask_2d", [("k=kv_len - seq_len)[None, None]", "k=kv_len - seq_len)"),
                              ("create_causal_mask(seq.shape[1]) &", "create_causal_mask(seq.shape[1])[None, None] &")]),
    (TRIL, "additive_causal_mask", [("return np.tril(np.ones((seq_len, kv_len), dtype=bool), k=kv_len - seq_len)[None, None]",
                                     "allowed = np.tril(np.ones((seq_len, kv_len), dtype=bool), k=kv_len - seq_len)\n"
                                     "    return np.where(allowed, 0.0, -np.inf)[None, None]"),
                                    ("create_causal_mask(seq.shape[1]) &", "(create_causal_mask(seq.shape[1]) == 0) &")]),
    (TRIL, "cache_offset_negated", [("k=kv_len - seq_len)", "k=seq_len - kv_len)")]),
    (TRIL, "pad_compared_greater", [("return (seq != pad_token)", "return (seq > pad_token)")]),
    (TRIL_TORCH, "combined_or", [("create_causal_mask(seq.shape[1]) & create_padding_mask",
                                  "create_causal_mask(seq.shape[1]) | create_padding_mask")]),
    (TRIL_TORCH, "causal_top_left", [("diagonal=kv_len - seq_len)", "diagonal=0)")]),
    (TRIL_TORCH, "causal_upper_triangle", [("torch.tril(ones,", "torch.triu(ones,")]),
    (TRIL_TORCH, "no_value_error", [("    if kv_len < seq_len:\n        raise", "    if False:\n        raise")]),
]


@pytest.mark.parametrize("where, name, patch", TRIL_MISTAKES,
                         ids=[f"{w[0]}-{n}" for w, n, _ in TRIL_MISTAKES])
def test_one_line_mistakes_in_the_tril_style_are_named_by_their_mutant(where, name, patch, tmp_path):
    track, correct = where
    source = apply_patch((SAMPLES / correct).read_text(encoding="utf-8"), patch, name)
    assert_named_as(get_exercise("causal_mask", track=track), source, name, tmp_path)


SHAPE_AND_KV_EDITS = [
    ("padding_mask", [("return (seq != pad_token)[:, None, None, :]",
                       "keep = np.squeeze(seq != pad_token)\n"
                       "    return keep[:, None, None, :] if keep.ndim == 2 else keep[:, None, None]")]),
    ("kv_len_too_short", [("kv_len = seq_len if kv_len is None else kv_len", "kv_len = kv_len or seq_len")]),
    ("padding_mask", [("return (seq != pad_token)[:, None, None, :]",
                       "return (seq.astype(np.uint8) != pad_token % 256)[:, None, None, :]")]),
]


@pytest.mark.parametrize("check, patch", SHAPE_AND_KV_EDITS, ids=[c for c, _ in SHAPE_AND_KV_EDITS])
def test_a_squeezed_batch_of_one_kv_len_zero_and_ids_cast_to_bytes_are_caught(check, patch, tmp_path):
    """Shapes are exact and kv_len < seq_len raises: a padding mask squeezed (a batch of one, or
    sequences of one token, lose an axis) and `kv_len or seq_len` (kv_len=0 becomes seq_len) both
    had full marks while no case had B=1, L=1 or kv_len=0; ids cast to uint8 (256 wraps onto pad 0)
    while every id was below 256."""
    from grader.grading.grade import _MEASURE_LOCK, grade_submission
    from grader.grading.trusted import TrustedInProcess

    source = apply_patch((SAMPLES / "correct_tril_bool.py").read_text(encoding="utf-8"), patch, check)
    path = tmp_path / "edited.py"
    path.write_text(source, encoding="utf-8")
    card = grade_submission(get_exercise("causal_mask"), path, seed=3,
                            trusted_runner=TrustedInProcess(path.name, _MEASURE_LOCK))
    assert check in {c.id for c in card.checks if c.verdict != "passed"}
    assert card.score < card.max_score


STYLED_MASKS = '''
import numpy as np

def create_causal_mask(seq_len, kv_len=None):
    kv_len = seq_len if kv_len is None else kv_len
    if kv_len < seq_len:
        raise ValueError("kv_len must be >= seq_len")
    q = np.arange(seq_len)[:, None] + (kv_len - seq_len)
    return (np.arange(kv_len)[None, :] <= q)[np.newaxis, np.newaxis]

def create_padding_mask(seq, pad_token=0):
    keep = np.not_equal(np.asarray(seq), pad_token)
    return PADDING

def create_combined_mask(seq, pad_token=0):
    pad = create_padding_mask(seq, pad_token)
    return COMBINED
'''

RIGHT_PADDING = "np.expand_dims(keep, axis=(1, 2))"
RIGHT_COMBINED = "np.logical_and(create_causal_mask(np.shape(seq)[1]), pad)"


@pytest.mark.parametrize("name, padding, combined", [
    ("padding_on_query_axis", "np.expand_dims(keep, axis=(1, 3))", RIGHT_COMBINED),
    ("padding_mask_three_dims", "np.expand_dims(keep, axis=1)", RIGHT_COMBINED),
    ("combined_pads_both_axes", RIGHT_PADDING, RIGHT_COMBINED + " & np.moveaxis(pad, -1, -2)"),
])
def test_padding_axis_mistakes_are_named_in_another_style(name, padding, combined, tmp_path):
    """The bank's padding-axis mistakes (one-line edits of the reference) name the same mistakes written
    with np.expand_dims / np.logical_and: padding on the query axis (the issue's "padding applied to
    queries"), a three-dimensional padding mask, and a combined mask that pads queries and keys."""
    source = STYLED_MASKS.replace("PADDING", padding).replace("COMBINED", combined)
    correct = STYLED_MASKS.replace("PADDING", RIGHT_PADDING).replace("COMBINED", RIGHT_COMBINED)
    exercise = get_exercise("causal_mask", track="numpy")
    assert_named_as(exercise, source, name, tmp_path)
    right = tmp_path / "styled_correct.py"
    right.write_text(correct)
    outcomes = judge_in_process("causal_mask", right)
    assert all(o.verdict == "passed" for outs in outcomes.values() for o in outs)
