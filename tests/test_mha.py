"""The mha exercise: reference values, the plan, diagnoses, gradients, API rules and the op audit."""

import importlib.util
import math

import numpy as np
import pytest
import torch

from attention_helpers import ROOT, failed, judge_in_process, messages
from mutant_helpers import assert_named_as, mutant_file
from grader.grading.api_rules import scan_source
from grader.grading.exercise import get_exercise
from grader.grading.grade import build_plan, grade_submission
from grader.run.runner import PlanExecutor, load_submission

SAMPLES = ROOT / "submissions" / "samples" / "mha"


def _reference():
    spec = importlib.util.spec_from_file_location("test_reference_mha", ROOT / "reference" / "mha.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


ref = _reference()


def test_reference_worked_example_by_hand():
    x = torch.tensor([[[1.0, 0.0, 0.0, 0.0], [0.0, 0.0, 1.0, 0.0]]])
    eye = torch.eye(4)
    p = math.exp(1 / math.sqrt(2)) / (math.exp(1 / math.sqrt(2)) + 1)  # head 0 of row 0: scores 1/sqrt(2), 0
    expected = torch.tensor([[[p, 0.0, 0.5, 0.0], [0.5, 0.0, p, 0.0]]])
    torch.testing.assert_close(ref.multi_head_attention(x, x, x, 2, eye, eye, eye, eye), expected)


def test_fully_masked_rows_give_zero_and_finite_gradients():
    gen = torch.Generator().manual_seed(0)
    x = torch.randn(2, 3, 8, generator=gen, dtype=torch.float64, requires_grad=True)
    W = [torch.randn(8, 8, generator=gen, dtype=torch.float64, requires_grad=True) for _ in range(4)]
    keep = torch.ones(2, 1, 1, 3, dtype=torch.bool)
    keep[1] = False
    y = ref.multi_head_attention(x, x, x, 2, *W, keep)
    assert torch.equal(y[1], torch.zeros(3, 8, dtype=torch.float64))
    y.sum().backward()
    assert all(torch.isfinite(t.grad).all() for t in [x, *W])


@pytest.mark.parametrize("D,H", [(10, 4), (8, 3)])
def test_reference_rejects_indivisible_width(D, H):
    x = torch.randn(1, 2, D)
    with pytest.raises(ValueError, match="divisible"):
        ref.multi_head_attention(x, x, x, H, *[torch.eye(D)] * 4)


def test_plan_covers_checks_and_audits_ops():
    ex = get_exercise("mha")
    plan = build_plan(ex, seed=3)
    wire = plan.wire()
    assert wire["audit_ops"] is True
    assert "aten._scaled_dot_product_*" in wire["forbidden_ops"]
    dtypes = {a.get("dtype") for s in wire["steps"] for a in s["args"] if "tensor" in a}
    assert {"float16", "bfloat16", "float32", "float64", "bool", "int64"} <= dtypes
    plan.golden()  # must not rewrite the plan's own dtypes
    assert dtypes == {a.get("dtype") for s in plan.wire()["steps"] for a in s["args"] if "tensor" in a}


@pytest.mark.parametrize("sample,check,phrase", [
    # one-line mistakes live in the bank as mutants (exercises/mha/mistakes/); the checks' own hints
    # (judged here without the bank's replay) still name them
    ("unscaled", "self_attention", "not scaled"),
    ("scaled_by_sqrt_d_model", "self_attention", "1/sqrt(D)"),
    ("heads_split_without_transpose", "self_attention", "no transpose"),
    ("mask_polarity_inverted", "padding_mask", "opposite polarity"),
    ("no_output_projection", "self_attention", "W_o was not applied"),
    ("nan_fully_masked_rows", "fully_masked_rows", "NaN"),
    ("bug_numpy_softmax.py", "grad_inputs", "No gradient of query"),
    ("mask_inverted_in_place", "inputs_unchanged", "Modified its input in place: mask"),
    ("no_value_error", "bad_num_heads", "Expected ValueError"),
])
def test_wrong_sample_fails_its_check_with_the_named_mistake(sample, check, phrase, tmp_path):
    path = SAMPLES / sample if sample.endswith(".py") else mutant_file("mha", sample, tmp_path)
    outcomes = judge_in_process("mha", path)
    assert check in failed(outcomes)
    assert phrase in messages(outcomes, check)


def test_correct_styles_pass_every_check_in_process():
    for path in sorted(SAMPLES.glob("correct_*.py")):
        assert failed(judge_in_process("mha", path)) == set(), path.name


def test_a_softmax_through_numpy_is_named_by_replay(tmp_path):
    """bug_numpy_softmax.py (right values, the gradient cut by a NumPy round trip of the scores, bfloat16
    rejected by NumPy) is named as the bank's softmax_in_numpy, whose round trip is of the masked
    scores inside the reference's own style; no other mutant loses the gradient that way."""
    card = assert_named_as(get_exercise("mha"), (SAMPLES / "bug_numpy_softmax.py").read_text(encoding="utf-8"),
                           "softmax_in_numpy", tmp_path)
    assert {c.id for c in card.checks if c.verdict != "passed"} >= {"grad_inputs", "grad_weights"}
    assert all(c.verdict == "passed" for c in card.checks if c.id in ("self_attention", "numeric_mask"))


def test_gradients_are_compared_with_the_reference():
    outcomes = judge_in_process("mha", SAMPLES / "correct_einsum.py")
    details = outcomes["grad_weights"][0].details["gradients"]
    assert set(details) == {"W_q", "W_k", "W_v", "W_o"}
    assert all(d["max_abs_diff"] <= d["tolerance"]["atol"] for d in details.values())


@pytest.mark.parametrize("source,expected", [
    ("import torch.nn.functional as F\ny = F.scaled_dot_product_attention(1, 2, 3)\n",
     "torch.nn.functional.scaled_dot_product_attention"),
    ("from torch import nn\nclass A(nn.Module):\n    pass\n", "torch.nn.Module"),
    ("import torch\nlayer = torch.nn.Linear(4, 4)\n", "torch.nn.Linear"),
    ("from torch.nn import functional as Fn\nf = getattr(Fn, 'multi_head_attention_forward')\n",
     "torch.nn.functional.multi_head_attention_forward"),
    ("import torch.nn as nn\nm = nn.MultiheadAttention(4, 2)\n", "torch.nn.MultiheadAttention"),
])
def test_static_scan_resolves_aliases(source, expected):
    ex = get_exercise("mha")
    found = scan_source(source, ex.forbidden_modules, ex.forbidden_names)
    assert [v.used_as for v in found][:1] == [expected]


def test_static_scan_allows_softmax_and_linear_algebra():
    ex = get_exercise("mha")
    src = "import torch\nimport torch.nn.functional as F\ny = F.softmax(torch.ones(2) @ torch.ones(2), -1)\n"
    assert scan_source(src, ex.forbidden_modules, ex.forbidden_names) == []


def test_op_audit_sees_kernel_reached_by_built_string_and_returns_gradients(tmp_path):
    src = tmp_path / "sneaky.py"
    src.write_text("import torch\n"
                   "def f(x):\n"
                   "    op = getattr(torch.ops.aten, 'scaled_dot_' + 'product_attention')\n"
                   "    return op(x, x, x)\n")
    module = load_submission(str(src), "sneaky_sample")
    x = np.arange(24, dtype=np.float64).reshape(1, 2, 3, 4) / 10
    plan = {"audit_ops": True, "forbidden_ops": ["aten._scaled_dot_product_*", "aten.scaled_dot_product_attention"],
            "steps": [{"id": "s", "op": "call", "target": "f", "kwargs": {},
                       "args": [{"tensor": "x", "dtype": "float64", "requires_grad": True, "label": "x"}],
                       "backward": {"grad_output": "g", "wrt": ["x"]}}]}
    report, arrays = PlanExecutor(plan, {"x": x, "g": np.ones_like(x)}, module).run_step(plan["steps"][0])
    assert report["ok"], report["exception"]
    assert "aten._scaled_dot_product_flash_attention_for_cpu" in report["forbidden_ops"]
    assert "aten._scaled_dot_product_flash_attention_for_cpu_backward" in report["ops_seen"]
    xt = torch.tensor(x, requires_grad=True)
    torch.nn.functional.scaled_dot_product_attention(xt, xt, xt).sum().backward()
    np.testing.assert_allclose(arrays["s/grad/x"], xt.grad.numpy(), rtol=1e-12, atol=1e-12)


def test_op_audit_sees_forbidden_kernels_in_a_measured_step(tmp_path):
    """On a measured step the counting mode records the ops for the audit itself (one dispatch layer,
    not two): a forbidden kernel called inside a probe's measured call is still reported, with the
    same FLOPs counted as without the audit, and the backward (outside the meter) is still audited."""
    src = tmp_path / "sneaky.py"
    src.write_text("import torch\n"
                   "def f(x):\n"
                   "    y = x * 2.0\n"
                   "    return torch.nn.functional.scaled_dot_product_attention(y, y, y)\n")
    module = load_submission(str(src), "sneaky_measured_sample")
    x = np.arange(24, dtype=np.float64).reshape(1, 2, 3, 4) / 10

    def run(audit: bool, backward: bool):
        step = {"id": "s", "op": "call", "target": "f", "kwargs": {},
                "args": [{"tensor": "x", "dtype": "float64", "requires_grad": backward, "label": "x"}],
                "measure": {"quantities": ["flops", "peak_bytes"]}}
        if backward:
            step["backward"] = {"grad_output": "g", "wrt": ["x"]}
        plan = {"audit_ops": audit, "forbidden_ops": ["aten._scaled_dot_product_*"], "steps": [step]}
        report, _ = PlanExecutor(plan, {"x": x, "g": np.ones_like(x)}, module).run_step(step)
        assert report["ok"], report["exception"]
        return report

    audited, plain = run(True, False), run(False, False)
    assert any(op.startswith("aten._scaled_dot_product") for op in audited["forbidden_ops"])
    assert "aten.mul" in audited["ops_seen"]
    assert audited["measure"]["flops"] == plain["measure"]["flops"] > 0
    assert audited["measure"]["peak_bytes"] == plain["measure"]["peak_bytes"]
    with_grad = run(True, True)
    assert any(op.endswith("_backward") for op in with_grad["ops_seen"]), with_grad["ops_seen"]


def test_sandboxed_op_audit_gives_forbidden_with_op_and_step():
    card = grade_submission(get_exercise("mha"), SAMPLES / "bug_sdpa_hidden_by_getattr.py", sandbox="process", seed=1)
    assert card.status == "graded" and card.score == 0
    assert all(c.verdict == "forbidden" for c in card.checks)
    assert "aten._scaled_dot_product_flash_attention_for_cpu" in card.status_message
    assert "self_attention." in card.status_message  # the step where it ran
    assert card.checks[0].details["forbidden_ops"][0]["op"].startswith("aten._scaled_dot_product")
    assert "aten.mm" in card.checks[0].details["ops_seen"]


def test_additive_inf_mask_with_nan_to_num_fails_only_the_gradient_edge_cases():
    """Issue 15: the forward output is right (NaN rows repaired), the gradients are NaN on fully
    masked query rows; exactly the two grad_edge_cases with such rows fail, with the named cause."""
    outcomes = judge_in_process("mha", SAMPLES / "bug_additive_inf_nan_to_num.py")
    assert failed(outcomes) == {"grad_edge_cases"}
    bad = [o for o in outcomes["grad_edge_cases"] if o.verdict != "passed"]
    assert len(bad) == 2
    for o in bad:
        assert o.message.startswith("Likely mistake: the gradient is NaN where a query row is fully masked")
        assert o.details["nonfinite"] > 0 and o.details["gradient"] == "query"


def test_forward_nan_on_masked_rows_is_charged_to_the_forward_not_the_gradient_check(tmp_path):
    """One mistake, one deduction: NaN output rows make the gradient NaN too; the gradient cases are
    skipped without charge and fully_masked_rows alone charges the mistake."""
    outcomes = judge_in_process("mha", mutant_file("mha", "nan_fully_masked_rows", tmp_path))
    bad = [o for o in outcomes["grad_edge_cases"] if o.verdict != "passed"]
    assert bad and all(o.verdict == "skipped" and o.details["charged"] is False
                       and o.message.startswith("Gradient not judged: the forward output") for o in bad)
    assert all(o.details["forward"]["nan_count"] > 0 for o in bad)
    assert failed(outcomes) == {"fully_masked_rows"}


@pytest.mark.parametrize("track, sample", [(None, "bug_float_mask_to_bias_in_place.py"),
                                           ("numpy", "numpy/bug_float_mask_inplace.py")])
def test_a_numeric_mask_rewritten_in_place_fails_inputs_unchanged_alone(track, sample):
    """Right outputs (and gradients), but a 0/1 float mask becomes an additive -inf/0 bias in place:
    inputs_unchanged has numeric-mask cases, so it fails there and nowhere else."""
    path = SAMPLES / sample
    module = load_submission(str(path), f"sample_mha_{path.stem}")
    rng = np.random.default_rng(0)
    x = rng.standard_normal((1, 3, 4))
    W = [rng.standard_normal((4, 4)) for _ in range(4)]
    mask = np.array([[[[1.0, 0.0, 1.0]]]])
    args = (x, x, x, 2, *W, mask) if track == "numpy" else \
        (*[torch.tensor(x)] * 3, 2, *map(torch.tensor, W), torch.tensor(mask))
    module.multi_head_attention(*args)
    assert not np.array_equal(np.asarray(args[-1]), np.array([[[[1.0, 0.0, 1.0]]]]))   # the mistake, by hand
    outcomes = judge_in_process("mha", path, track=track)
    assert failed(outcomes) == {"inputs_unchanged"}
    assert "Modified its input in place: mask" in messages(outcomes, "inputs_unchanged")
