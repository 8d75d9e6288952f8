"""attention_scores: the mistake bank names one-line mistakes written in another style than the
reference's (whose patches are the bank's mutants).

``correct_einsum.py`` uses einsum, a ``finfo.min`` fill and explicit zeroing of masked weights; the
reference uses matmul, a ``-inf`` fill and a guarded division. Each (old, new) edit below writes one
mistake of the bank into the einsum style; replay must name that mistake and no other, and the
mutant's ``Must fail:`` checks must fail. The same for the PyTorch track, in
``torch/correct_masked_fill_softmax.py`` (a bool ``keep``, ``masked_fill`` with ``finfo.min``, rows
zeroed by ``keep.any``).
"""
from __future__ import annotations

import pytest

from grader.grading.exercise import get_exercise
from grader.grading.grade import _MEASURE_LOCK, grade_submission
from grader.grading.trusted import TrustedInProcess
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
    ("mask_applied_after_softmax", [("scores = np.where(allowed, scores, np.finfo(scores.dtype).min)", "pass")]),
    ("scaled_after_softmax", [(" / np.sqrt(d_k).astype(query.dtype)", ""),
                              ("weights = weights / weights.sum(axis=-1, keepdims=True)",
                               "weights = weights / weights.sum(axis=-1, keepdims=True) / np.sqrt(d_k)")]),
    ("softmax_over_query_axis", [("scores.max(axis=-1, keepdims=True)", "scores.max(axis=-2, keepdims=True)"),
                                 ("weights.sum(axis=-1, keepdims=True)", "weights.sum(axis=-2, keepdims=True)")]),
]


@pytest.mark.parametrize("name, patch", EINSUM_MISTAKES, ids=[n for n, _ in EINSUM_MISTAKES])
def test_one_line_mistakes_in_the_einsum_style_are_named_by_their_mutant(name, patch, tmp_path):
    ex = get_exercise("attention_scores")
    source = apply_patch((ex.samples_path / "correct_einsum.py").read_text(encoding="utf-8"), patch, name)
    assert_named_as(ex, source, name, tmp_path)


MASK_TIMES_SCORES = '''
import numpy as np
def compute_attention_scores(query, key, mask=None):
    s = query @ np.swapaxes(key, -1, -2) / np.sqrt(query.shape[-1]).astype(query.dtype)
    if mask is not None:
        s = s * np.asarray(mask).astype(s.dtype)
    e = np.exp(s - s.max(axis=-1, keepdims=True))
    return e / e.sum(axis=-1, keepdims=True)
def scaled_dot_product_attention(query, key, value, mask=None):
    w = compute_attention_scores(query, key, mask)
    return w @ value, w
'''


def test_a_mistake_outside_the_bank_is_not_named_by_a_mutant_it_resembles_on_one_check(tmp_path):
    """A mask that multiplies the scores leaves masked keys at score 0. On large_logits (scores around
    -1e5) that is what a -1e4 fill does, so with no mutant of its own the -1e4 fill was the only one
    explaining that check and was named, though the file also fails every masked case the -1e4 fill
    gets right. A mutant right where the candidate is wrong is not named (``diagnosis.contradicted``);
    with the bank's own mask_multiplies_scores mutant, every failed check names it."""
    import copy

    from grader.grading.grade import _MEASURE_LOCK, grade_submission
    from grader.grading.trusted import TrustedInProcess

    path = tmp_path / "mask_times_scores.py"
    path.write_text(MASK_TIMES_SCORES)
    full = get_exercise("attention_scores")
    without = copy.copy(full)
    without.__dict__["mistakes"] = tuple(m for m in full.mistakes if m.name != "mask_multiplies_scores")
    for ex, want in ((without, set()), (full, {"mask_multiplies_scores"})):
        card = grade_submission(ex, path, seed=2, trusted_runner=TrustedInProcess(path.name, _MEASURE_LOCK))
        failed = {c.id for c in card.checks if c.verdict != "passed"}
        assert {"mask_2d", "mask_padding", "large_logits", "fully_masked_rows"} <= failed
        assert {c.details.get("mistake") for c in card.checks if c.details.get("mistake")} == want


TORCH_MISTAKES = [
    ("mask_equals_one", [("keep = mask.bool() if mask.dtype != torch.bool else mask", "keep = mask == 1")]),
    ("mask_polarity_inverted", [("keep = mask.bool() if mask.dtype != torch.bool else mask",
                                 "keep = ~mask.bool() if mask.dtype != torch.bool else ~mask")]),
    ("unscaled", [(" / math.sqrt(query.size(-1))", "")]),
    ("weights_detached", [("return torch.softmax(scores, dim=-1)", "return torch.softmax(scores, dim=-1).detach()"),
                          ("weights = torch.softmax(scores, dim=-1)", "weights = torch.softmax(scores, dim=-1).detach()")]),
]


@pytest.mark.parametrize("name, patch", TORCH_MISTAKES, ids=[n for n, _ in TORCH_MISTAKES])
def test_one_line_mistakes_in_the_masked_fill_style_are_named_by_their_mutant(name, patch, tmp_path):
    ex = get_exercise("attention_scores", track="torch")
    source = apply_patch((ex.samples_path / "correct_masked_fill_softmax.py").read_text(encoding="utf-8"),
                         patch, name)
    assert_named_as(ex, source, name, tmp_path)


def test_a_detached_key_is_named_in_a_style_of_its_own(tmp_path):
    """torch/bug_key_detached.py (key.detach() before the scores, a finfo.min fill, rows zeroed by keep.any):
    right output, query and value gradients; no key gradient. Named as the bank's key_detached, never as
    weights_detached (which also loses query's gradient)."""
    ex = get_exercise("attention_scores", track="torch")
    card = assert_named_as(ex, (ex.samples_path / "bug_key_detached.py").read_text(encoding="utf-8"),
                           "key_detached", tmp_path)
    assert {c.id for c in card.checks if c.verdict != "passed"} == {"gradients"}


EINSUM_WHERE_STYLE = '''
import math
import torch

def compute_attention_scores(query, key, mask=None):
    if query.shape[-1] != key.shape[-1]:
        raise ValueError("d_k differs")
    q = SCALED_QUERY
    s = torch.einsum("...qd,...kd->...qk", q, key)
    if mask is not None:
        keep = KEEP
        s = torch.where(keep, s, torch.full_like(s, -math.inf))
        w = torch.softmax(s, dim=-1)
        return torch.where(keep.any(-1, keepdim=True), w, torch.zeros_like(w))
    return torch.softmax(s, dim=-1)

def scaled_dot_product_attention(query, key, value, mask=None):
    w = compute_attention_scores(query, key, mask)
    return w @ value, w
'''
RIGHT = {"SCALED_QUERY": "query * query.shape[-1] ** -0.5", "KEEP": "torch.as_tensor(mask).bool()"}


@pytest.mark.parametrize("name, edit", [
    ("mask_truncated_to_integer", {"KEEP": "torch.as_tensor(mask).to(torch.int32).bool()"}),
    ("query_scaled_in_place", {"SCALED_QUERY": "query.mul_(query.shape[-1] ** -0.5)"}),
])
def test_truncated_mask_and_in_place_query_scaling_are_named_in_another_style(name, edit, tmp_path):
    """The torch bank's mask_truncated_to_integer and query_scaled_in_place (one-line edits of the
    reference) name the same mistakes written with einsum, torch.where and .to(int32)/.mul_; the
    style's correct form gets full marks. Before they were in the bank, the two samples had no name."""
    ex = get_exercise("attention_scores", track="torch")

    def source(values):
        text = EINSUM_WHERE_STYLE
        for key, value in values.items():
            text = text.replace(key, value)
        return text
    right = tmp_path / "right.py"
    right.write_text(source(RIGHT), encoding="utf-8")
    card = grade_submission(ex, right, seed=5, trusted_runner=TrustedInProcess(right.name, _MEASURE_LOCK))
    assert card.score == card.max_score, [(c.id, c.message) for c in card.checks if c.verdict != "passed"]
    assert_named_as(ex, source({**RIGHT, **edit}), name, tmp_path)
