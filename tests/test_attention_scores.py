"""attention_scores: the mistake bank names one-line mistakes written in another style than the
reference's (whose patches are the bank's mutants).

``correct_einsum.py`` uses einsum, a ``finfo.min`` fill and explicit zeroing of masked weights; the
reference uses matmul, a ``-inf`` fill and a guarded division. Each (old, new) edit below writes one
mistake of the bank into the einsum style; replay must name that mistake and no other, and the
mutant's ``Must fail:`` checks must fail.
"""
from __future__ import annotations

import pytest

from grader.grading.exercise import get_exercise
from grader.judge.mistakes import apply_patch
from mutant_helpers import assert_named_as

EINSUM_MISTAKES = [
    ("returns_weights_first", [('return np.einsum("...qk,...kv->...qv", weights, value), weights',
                                'return weights, np.einsum("...qk,...kv->...qv", weights, value)')]),
    ("mask_polarity_inverted", [("np.asarray(mask).astype(bool)", "~np.asarray(mask).astype(bool)")]),
    ("mask_equals_one", [("np.asarray(mask).astype(bool)", "(np.asarray(mask) == 1)")]),
    ("mask_ignored", [("allowed = np.broadcast_to(np.asarray(mask).astype(bool), scores.shape)",
                       "allowed = np.ones(scores.shape, dtype=bool)")]),
    ("unscaled", [(" / np.sqrt(d_k).astype(query.dtype)", "")]),
    ("logits_divided_by_d_k", [("/ np.sqrt(d_k).astype(query.dtype)", "/ query.dtype.type(d_k)")]),
    ("softmax_over_query_axis", [("scores.max(axis=-1, keepdims=True)", "scores.max(axis=-2, keepdims=True)"),
                                 ("weights.sum(axis=-1, keepdims=True)", "weights.sum(axis=-2, keepdims=True)")]),
]


@pytest.mark.parametrize("name, patch", EINSUM_MISTAKES, ids=[n for n, _ in EINSUM_MISTAKES])
def test_one_line_mistakes_in_the_einsum_style_are_named_by_their_mutant(name, patch, tmp_path):
    ex = get_exercise("attention_scores")
    source = apply_patch((ex.samples_path / "correct_einsum.py").read_text(encoding="utf-8"), patch, name)
    assert_named_as(ex, source, name, tmp_path)
