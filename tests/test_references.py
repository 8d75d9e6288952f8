"""The NumPy references against code nobody here wrote: torch.softmax and torch's SDPA (float64)."""
import importlib.util

import numpy as np
import pytest
import torch
import torch.nn.functional as F

from grader.grading.exercise import get_exercise


def load(exercise_id):
    path = get_exercise(exercise_id).reference_path
    spec = importlib.util.spec_from_file_location(f"ref_{exercise_id}", path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


@pytest.mark.parametrize("shape, axis", [((7,), 0), ((3, 5), 0), ((3, 5), -1), ((2, 3, 4, 5), 2), ((4, 1, 6), -3)])
def test_softmax_matches_torch(shape, axis):
    x = np.random.default_rng(0).standard_normal(shape) * 20
    ours = load("softmax").softmax(x, axis)
    theirs = torch.softmax(torch.from_numpy(x), dim=axis).numpy()
    np.testing.assert_allclose(ours, theirs, rtol=1e-12, atol=1e-15)


def test_softmax_edge_values_match_the_contract():
    sm = load("softmax").softmax
    x = np.array([[0.0, -np.inf, 1.0], [-np.inf, -np.inf, -np.inf]], dtype=np.float32)
    out = sm(x)
    assert out.dtype == np.float32
    np.testing.assert_allclose(out[0], torch.softmax(torch.tensor([0.0, 1.0]), 0).numpy()[[0, 0, 1]] * [1, 0, 1], rtol=1e-6)
    np.testing.assert_array_equal(out[1], 0)
    big = np.finfo(np.float32).max
    np.testing.assert_array_equal(sm(np.array([big, -big], dtype=np.float32)), [1, 0])


@pytest.mark.parametrize("mask_kind", [None, "causal", "padding"])
def test_attention_matches_torch_sdpa(mask_kind):
    rng = np.random.default_rng(1)
    q, k, v = (rng.standard_normal((2, 3, 5, 8)) for _ in range(3))
    mask = None
    if mask_kind == "causal":
        mask = np.tril(np.ones((5, 5), dtype=bool))
    elif mask_kind == "padding":
        mask = np.ones((2, 1, 1, 5), dtype=bool)
        mask[1, ..., 3:] = False
    out, weights = load("attention_scores").scaled_dot_product_attention(q, k, v, mask)
    t = [torch.from_numpy(a) for a in (q, k, v)]
    expected = F.scaled_dot_product_attention(*t, attn_mask=None if mask is None else torch.from_numpy(mask))
    np.testing.assert_allclose(out, expected.numpy(), rtol=1e-10, atol=1e-12)
    np.testing.assert_allclose(weights.sum(-1), 1.0, rtol=1e-12)


def test_attention_fully_masked_row_is_zero_where_torch_gives_nan():
    rng = np.random.default_rng(2)
    q, k, v = (rng.standard_normal((1, 4, 8)) for _ in range(3))
    mask = np.tril(np.ones((4, 4), dtype=bool))
    mask[1] = False
    out, w = load("attention_scores").scaled_dot_product_attention(q, k, v, mask)
    np.testing.assert_array_equal(w[0, 1], 0)
    np.testing.assert_array_equal(out[0, 1], 0)
    t = F.scaled_dot_product_attention(*(torch.from_numpy(a) for a in (q, k, v)), attn_mask=torch.from_numpy(mask))
    keep = [0, 2, 3]
    np.testing.assert_allclose(out[0, keep], t.numpy()[0, keep], rtol=1e-10, atol=1e-12)
