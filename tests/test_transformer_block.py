"""The transformer_block exercise: the reference against torch's own modules, the plan, the dict
argument, and every sample judged for the reason its docstring names."""

import importlib.util
import math

import numpy as np
import pytest
import torch

from attention_helpers import ROOT, failed, judge_in_process, messages
from mutant_helpers import assert_named_as, mutant_file
from grader.grading.api_rules import scan_source
from grader.grading.exercise import get_exercise
from grader.grading.grade import build_plan
from grader.run.runner import PlanExecutor

SAMPLES = ROOT / "submissions" / "samples" / "transformer_block"


def _reference():
    spec = importlib.util.spec_from_file_location("test_reference_tb", ROOT / "reference" / "transformer_block.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


ref = _reference()


def _params(D, d_ff, dtype=torch.float64, seed=0):
    g = torch.Generator().manual_seed(seed)
    r = lambda *s: torch.randn(*s, generator=g, dtype=dtype)  # noqa: E731
    return {"ln1_weight": 1 + 0.3 * r(D), "ln1_bias": 0.3 * r(D), "ln2_weight": 1 + 0.3 * r(D),
            "ln2_bias": 0.3 * r(D), "W_q": r(D, D) / math.sqrt(D), "W_k": r(D, D) / math.sqrt(D),
            "W_v": r(D, D) / math.sqrt(D), "W_o": r(D, D) / math.sqrt(D), "W_1": r(D, d_ff) / math.sqrt(D),
            "b_1": 0.5 * r(d_ff), "W_2": r(d_ff, D) / math.sqrt(d_ff), "b_2": 0.3 * r(D)}


def _oracle(x, p, num_heads, keep=None):
    """The seed's block from torch.nn modules: LayerNorm, GELU, MultiheadAttention (bias=False,
    batch_first, weights transposed since they act as x @ W^T; its bool masks mean 'masked out')."""
    B, L, D = x.shape
    ln1, ln2 = torch.nn.LayerNorm(D, dtype=x.dtype), torch.nn.LayerNorm(D, dtype=x.dtype)
    mha = torch.nn.MultiheadAttention(D, num_heads, bias=False, batch_first=True, dtype=x.dtype)
    with torch.no_grad():
        ln1.weight.copy_(p["ln1_weight"]), ln1.bias.copy_(p["ln1_bias"])
        ln2.weight.copy_(p["ln2_weight"]), ln2.bias.copy_(p["ln2_bias"])
        mha.in_proj_weight.copy_(torch.cat([p["W_q"].T, p["W_k"].T, p["W_v"].T]))
        mha.out_proj.weight.copy_(p["W_o"].T)
    mha.eval()
    attn_mask = None
    if keep is not None:
        attn_mask = ~torch.broadcast_to(keep, (B, num_heads, L, L)).reshape(B * num_heads, L, L)
    a = ln1(x)
    h = x + mha(a, a, a, attn_mask=attn_mask, need_weights=False)[0]
    return h + torch.nn.GELU()(ln2(h) @ p["W_1"] + p["b_1"]) @ p["W_2"] + p["b_2"]


@pytest.mark.parametrize("B,L,D,H,d_ff", [(2, 6, 16, 4, 64), (1, 5, 12, 3, 20), (3, 4, 8, 1, 8)])
def test_reference_matches_torch_nn_modules(B, L, D, H, d_ff):
    x = torch.randn(B, L, D, dtype=torch.float64, generator=torch.Generator().manual_seed(B * L))
    p = _params(D, d_ff)
    with torch.no_grad():
        torch.testing.assert_close(ref.transformer_block(x, p, H), _oracle(x, p, H), rtol=1e-10, atol=1e-10)


@pytest.mark.parametrize("kind", ["causal", "padding"])
def test_reference_matches_torch_nn_modules_with_masks(kind):
    B, L, D, H = 2, 6, 12, 3
    x = torch.randn(B, L, D, dtype=torch.float64, generator=torch.Generator().manual_seed(5))
    p = _params(D, 24, seed=1)
    if kind == "causal":
        keep = torch.tril(torch.ones(L, L, dtype=torch.bool))[None, None]
    else:
        keep = torch.ones(B, 1, 1, L, dtype=torch.bool)
        keep[0, ..., 4:] = False
    with torch.no_grad():
        torch.testing.assert_close(ref.transformer_block(x, p, H, keep), _oracle(x, p, H, keep),
                                   rtol=1e-10, atol=1e-10)


def _functional_oracle(x, p, num_heads):
    """The same block from torch's functional forms (differentiable in every parameter):
    F.layer_norm, F.gelu and F.multi_head_attention_forward (sequence-first, weights transposed)."""
    F = torch.nn.functional
    D = x.shape[-1]
    a = F.layer_norm(x, (D,), p["ln1_weight"], p["ln1_bias"], 1e-5).transpose(0, 1)  # (L, B, D)
    att = F.multi_head_attention_forward(a, a, a, D, num_heads, torch.cat([p["W_q"].T, p["W_k"].T, p["W_v"].T]),
                                         None, None, None, False, 0.0, p["W_o"].T, None, training=False,
                                         need_weights=False)[0].transpose(0, 1)
    h = x + att
    return h + F.gelu(F.layer_norm(h, (D,), p["ln2_weight"], p["ln2_bias"], 1e-5) @ p["W_1"] + p["b_1"]) @ p["W_2"] + p["b_2"]


def test_reference_gradients_match_the_oracle():
    x = torch.randn(2, 5, 8, dtype=torch.float64, generator=torch.Generator().manual_seed(2), requires_grad=True)
    p = {k: v.requires_grad_(True) for k, v in _params(8, 12).items()}
    g = torch.randn(2, 5, 8, dtype=torch.float64, generator=torch.Generator().manual_seed(3))
    with torch.no_grad():
        torch.testing.assert_close(_functional_oracle(x, p, 2), _oracle(x, p, 2), rtol=1e-10, atol=1e-10)
    ours = torch.autograd.grad(ref.transformer_block(x, p, 2), [x, *p.values()], g)
    theirs = torch.autograd.grad(_functional_oracle(x, p, 2), [x, *p.values()], g)
    for a, b in zip(ours, theirs):
        torch.testing.assert_close(a, b, rtol=1e-9, atol=1e-10)


def test_fully_masked_row_leaves_x_plus_ffn():
    x = torch.randn(1, 3, 4, dtype=torch.float64)
    p = _params(4, 8)
    keep = torch.ones(1, 1, 3, 3, dtype=torch.bool)
    keep[0, 0, 1] = False
    out = ref.transformer_block(x, p, 2, keep)
    h = x[0, 1]  # attention gives 0 on that row
    ln = torch.nn.functional.layer_norm(h, (4,), p["ln2_weight"], p["ln2_bias"], 1e-5)
    want = h + torch.nn.functional.gelu(ln @ p["W_1"] + p["b_1"]) @ p["W_2"] + p["b_2"]
    torch.testing.assert_close(out[0, 1], want)


def test_gelu_is_exact_erf():
    z = torch.linspace(-4, 4, 81, dtype=torch.float64)
    want = torch.tensor([0.5 * v * (1 + math.erf(v / math.sqrt(2))) for v in z.tolist()], dtype=torch.float64)
    torch.testing.assert_close(ref.gelu(z), want, rtol=0, atol=1e-15)


@pytest.mark.parametrize("D,H", [(10, 4), (8, 3)])
def test_reference_rejects_indivisible_width(D, H):
    with pytest.raises(ValueError, match="divisible"):
        ref.transformer_block(torch.randn(1, 2, D), _params(D, D, torch.float32), H)


def test_dict_argument_reaches_the_function_and_its_members_are_watched():
    arrays = {"x": np.ones((1, 2, 4), np.float32), "w": np.arange(4, dtype=np.float32)}
    plan = {"steps": [{"id": "s", "op": "call", "target": "f", "kwargs": {},
                       "args": [{"tensor": "x", "dtype": "float64", "requires_grad": True, "label": "x"},
                                {"dict": {"w": {"tensor": "w", "dtype": "float64", "requires_grad": True,
                                                "label": "w"}}}],
                       "backward": {"grad_output": "g", "wrt": ["x", "w"]}}]}
    arrays["g"] = np.ones((1, 2, 4), np.float32)

    class Mod:
        @staticmethod
        def f(x, params):
            out = x * params["w"].clone()
            params["w"].data.add_(1.0)  # in place: must be reported by its label
            return out

    report, out = PlanExecutor(plan, arrays, Mod).run_step(plan["steps"][0])
    assert report["ok"], report
    assert report["modified_inputs"] == ["w"]
    grads = report["gradients"]
    np.testing.assert_array_equal(out[grads["x"]["key"]], np.broadcast_to(np.arange(4.0), (1, 2, 4)))
    np.testing.assert_array_equal(out[grads["w"]["key"]], np.full(4, 2.0))


def test_plan_covers_checks_promotes_dict_members_and_audits_ops():
    plan = build_plan(get_exercise("transformer_block"), seed=3)
    wire, _ = plan.golden()
    members = [a for s in wire["steps"] for arg in s["args"] if "dict" in arg for a in arg["dict"].values()]
    assert members and all(a["dtype"] == "float64" for a in members)
    assert plan.wire()["audit_ops"] is True and "aten.native_layer_norm" in plan.forbidden_ops
    assert any(a["dtype"] == "bfloat16" for s in plan.wire()["steps"] for arg in s["args"] if "dict" in arg
               for a in arg["dict"].values())


@pytest.mark.parametrize("source,expected", [
    ("import torch.nn.functional as F\ny = F.layer_norm(1, 2)\n", "torch.nn.functional.layer_norm"),
    ("from torch import nn\nln = nn.LayerNorm(4)\n", "torch.nn.LayerNorm"),
    ("import torch\ny = torch.layer_norm(1, 2)\n", "torch.layer_norm"),
])
def test_static_scan_forbids_library_layer_norm(source, expected):
    ex = get_exercise("transformer_block")
    found = scan_source(source, ex.forbidden_modules, ex.forbidden_names)
    assert [v.used_as for v in found][:1] == [expected]


@pytest.mark.parametrize("sample,check,phrase", [
    ("mistake:unbiased_variance", "values", "unbiased variance"),
    ("mistake:eps_outside_sqrt", "layer_norm_scale", "eps was added outside the square root"),
    ("mistake:tanh_gelu", "values", "the GPT-2 tanh approximation; this exercise asks for exact erf GELU"),
    ("bug_post_ln.py", "values", "post-LN"),
    ("mistake:no_attention_residual", "values", "residual connection around attention is missing"),
    ("mistake:mask_polarity_inverted", "padding_mask", "opposite polarity"),
    ("mistake:no_value_error", "bad_num_heads", "Expected ValueError"),
])
def test_wrong_sample_fails_its_check_with_the_named_mistake(sample, check, phrase, tmp_path):
    """A bug sample, or a mutant of the bank (``mistake:NAME``: the one-line samples became mutants)."""
    path = mutant_file("transformer_block", sample.split(":", 1)[1], tmp_path) if sample.startswith("mistake:") \
        else SAMPLES / sample
    outcomes = judge_in_process("transformer_block", path)
    assert check in failed(outcomes)
    assert phrase in messages(outcomes, check)


# The one-line bug samples that repeated a correct sample are mutants of the bank now; their edits live
# on here, written into that base (torch: correct_inline_layer_norm.py, three LayerNorm calls, -inf fill
# with nan_to_num, GELU written out; NumPy: numpy/correct_loops_vectorize.py, a vectorised math.erf, and
# numpy/correct_einsum_float64.py), and replay must name each one in that style too.
STYLE_EDITS = [
    ("torch", "correct_inline_layer_norm.py", "unbiased_variance",
     "var = x.var(-1, keepdim=True, unbiased=False)", "var = x.var(-1, keepdim=True)"),
    ("torch", "correct_inline_layer_norm.py", "eps_outside_sqrt",
     "/ torch.sqrt(var + eps) + bias", "/ (torch.sqrt(var) + eps) + bias"),
    ("torch", "correct_inline_layer_norm.py", "tanh_gelu",
     "torch.erf(z / math.sqrt(2.0))", "torch.tanh(math.sqrt(2.0 / math.pi) * (z + 0.044715 * z ** 3))"),
    ("torch", "correct_inline_layer_norm.py", "no_attention_residual", "h = x + attn", "h = attn"),
    ("torch", "correct_inline_layer_norm.py", "mask_polarity_inverted",
     "masked_fill(mask == 0,", "masked_fill(mask != 0,"),
    ("torch", "correct_inline_layer_norm.py", "mask_equals_one", "masked_fill(mask == 0,", "masked_fill(mask != 1,"),
    ("torch", "correct_inline_layer_norm.py", "no_value_error",
     "    if D % num_heads != 0:\n        raise ValueError", "    if False:\n        raise ValueError"),
    ("numpy", "numpy/correct_loops_vectorize.py", "tanh_gelu", "(1 + erf(u / math.sqrt(2)))",
     "(1 + np.tanh(math.sqrt(2 / math.pi) * (u + 0.044715 * u ** 3)))"),
    ("numpy", "numpy/correct_loops_vectorize.py", "unbiased_variance",
     "z.var(-1, keepdims=True) + 1e-5", "z.var(-1, keepdims=True, ddof=1) + 1e-5"),
    ("numpy", "numpy/correct_einsum_float64.py", "mask_equals_one", "np.asarray(mask) != 0", "np.asarray(mask) == 1"),
]


@pytest.mark.parametrize("track, base, name, old, new", STYLE_EDITS, ids=[f"{e[0]}-{e[2]}" for e in STYLE_EDITS])
def test_a_bank_mistake_written_into_a_correct_style_is_named_by_replay(track, base, name, old, new, tmp_path):
    source = (SAMPLES / base).read_text(encoding="utf-8")
    assert source.count(old) == 1
    assert_named_as(get_exercise("transformer_block", track=track), source.replace(old, new), name, tmp_path)


@pytest.mark.slow
def test_correct_styles_pass_every_check_in_process():
    for path in sorted(SAMPLES.glob("correct_*.py")):
        assert failed(judge_in_process("transformer_block", path)) == set(), path.name


def test_numpy_track_reference_matches_the_torch_modules():
    spec = importlib.util.spec_from_file_location("test_reference_tb_np", ROOT / "reference" / "transformer_block_numpy.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    B, L, D, H = 2, 6, 12, 3
    x = torch.randn(B, L, D, dtype=torch.float64, generator=torch.Generator().manual_seed(8))
    p = _params(D, 20, seed=2)
    keep = torch.ones(B, 1, 1, L, dtype=torch.bool)
    keep[1, ..., 3:] = False
    with torch.no_grad():
        want = _oracle(x, p, H, keep).numpy()
    got = module.transformer_block(x.numpy(), {k: v.numpy() for k, v in p.items()}, H, keep.numpy())
    np.testing.assert_allclose(got, want, rtol=1e-10, atol=1e-10)
    got32 = module.transformer_block(x.numpy().astype(np.float32), {k: v.numpy().astype(np.float32) for k, v in p.items()}, H)
    assert got32.dtype == np.float32
    with pytest.raises(ValueError, match="divisible"):
        module.transformer_block(x.numpy()[..., :10], p, 3)


def test_numpy_track_plan_has_no_tensors_and_no_gradients():
    plan = build_plan(get_exercise("transformer_block", track="numpy"), seed=3)
    assert not plan.uses_torch()
    assert not any(s.wire.get("backward") for s in plan.steps)
    assert {s.check for s in plan.steps} >= {"values", "layer_norm_scale", "fully_masked_rows", "bad_num_heads"}


def test_additive_inf_mask_with_nan_to_num_has_nan_gradients_and_fails_only_the_gradient_checks():
    """The sample's forward output equals the nn-module oracle (fully masked rows give attention 0,
    so the row is x + FFN), but torch's own backward gives NaN in x's gradient: before grad_x and
    grad_params had a fully masked case it scored full marks."""
    spec = importlib.util.spec_from_file_location("tb_nan_grad", SAMPLES / "bug_additive_inf_nan_to_num.py")
    sample = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(sample)
    B, L, D, H = 2, 5, 8, 2
    x = torch.randn(B, L, D, dtype=torch.float64, generator=torch.Generator().manual_seed(5), requires_grad=True)
    p = _params(D, 16)
    keep = torch.ones(B, 1, L, L, dtype=torch.bool)
    keep[0, 0, 2, :] = False
    out = sample.transformer_block(x, p, H, keep)
    want = ref.transformer_block(x.detach(), p, H, keep)
    torch.testing.assert_close(out.detach(), want, rtol=1e-10, atol=1e-10)
    out.sum().backward()
    assert torch.isnan(x.grad).any()

    outcomes = judge_in_process("transformer_block", SAMPLES / "bug_additive_inf_nan_to_num.py")
    assert failed(outcomes) == {"grad_x", "grad_params"}
    assert "gradient is NaN where a query row is fully masked" in messages(outcomes, "grad_x")


@pytest.mark.parametrize("track", ["numpy", "torch"])
def test_hidden_cases_hold_the_same_shape_classes_at_every_seed(track):
    """At every seed: every hidden case has L >= 2, three have H >= 2, the padding case pads some key
    and has B >= 2, and there is a causal case: a mistake the public cases catch in one of these
    classes (heads split without a transpose, a mask ignored) is charged in hidden_values at every seed."""
    checks = get_exercise("transformer_block", track=track).checks_module
    for seed in range(1, 41):
        plan = checks.build_plan(1, seed, track=track)
        cases = []
        for s in (s for s in plan.steps if s.check == "hidden_values"):
            args = s.wire["args"]
            x = plan.arrays[args[0].get("array") or args[0]["tensor"]]
            mask = plan.arrays[args[3].get("array") or args[3]["tensor"]] if len(args) > 3 else None
            cases.append((x.shape, args[2]["value"], mask))
        assert all(shape[1] >= 2 for shape, _, _ in cases), seed
        assert sum(H >= 2 for _, H, _ in cases) >= 3, seed
        masked = [(shape, m) for shape, _, m in cases if m is not None]
        assert any(m.shape[-2] == 1 and not m.all() and shape[0] >= 2 for shape, m in masked), seed
        assert any(m.shape[-2] > 1 and not m.all() for _, m in masked), seed
