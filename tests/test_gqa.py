"""The gqa exercise: reference invariants, the head-mapping diagnosis, gradients and the op audit."""

import importlib.util

import pytest
import torch

from attention_helpers import ROOT, failed, judge_in_process, messages
from mutant_helpers import assert_named_as
from grader.grading.api_rules import scan_source
from grader.grading.exercise import get_exercise
from grader.grading.grade import build_plan, grade_submission
from mutant_helpers import assert_named_as

SAMPLES = ROOT / "submissions" / "samples" / "gqa"


def _reference():
    spec = importlib.util.spec_from_file_location("test_reference_gqa", ROOT / "reference" / "gqa.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


ref = _reference()


def test_query_head_reads_kv_head_h_div_group():
    # One-hot values: KV head j's value is the constant j+1 in its columns, so each query head's
    # output (before W_o = I) is exactly the id of the KV head it read.
    B, L, D, H_q, H_kv = 1, 3, 8, 4, 2
    d_k = D // H_q
    x = torch.ones(B, L, D, dtype=torch.float64)
    W_v = torch.zeros(D, H_kv * d_k, dtype=torch.float64)
    for j in range(H_kv):
        W_v[0, j * d_k:(j + 1) * d_k] = j + 1
    zeros = torch.zeros(D, H_kv * d_k, dtype=torch.float64)
    y = ref.grouped_query_attention(x, torch.eye(D, dtype=torch.float64), zeros, W_v,
                                    torch.eye(D, dtype=torch.float64), H_q, H_kv)
    per_head = y[0, 0].view(H_q, d_k)[:, 0]
    assert per_head.tolist() == [1.0, 1.0, 2.0, 2.0]  # repeat would give [1, 2, 1, 2]


@pytest.mark.parametrize("D,H_q,H_kv", [(16, 4, 3), (10, 4, 2)])
def test_reference_value_errors(D, H_q, H_kv):
    x = torch.randn(1, 2, D)
    with pytest.raises(ValueError):
        ref.grouped_query_attention(x, torch.eye(D), torch.ones(D, 4), torch.ones(D, 4), torch.eye(D), H_q, H_kv)


def test_plan_has_head_mapping_case_far_from_repeat():
    plan = build_plan(get_exercise("gqa"), seed=0)
    assert {s.check for s in plan.steps} >= {"head_mapping", "mqa", "equals_mha", "bad_group", "bad_num_heads"}
    assert plan.audit_ops


# The one-line bug samples that repeated a correct sample are mutants of the bank now; their edits live
# on here, written into a correct sample of that style (torch: correct_repeat_interleave.py, K/V viewed
# at num_kv_heads heads, repeat_interleave, a -inf masked_fill and nan_to_num after the softmax; NumPy:
# numpy/correct_repeat.py, np.repeat and a softmax by hand), keep the phrases of the checks' own
# messages, and replay must name each one in that style too.
BASES = {"torch": SAMPLES / "correct_repeat_interleave.py", "numpy": SAMPLES / "numpy" / "correct_repeat.py"}
STYLE_EDITS = {
    ("torch", "heads_mapped_with_repeat"): [("k, v = k.repeat_interleave(g, dim=1), v.repeat_interleave(g, dim=1)",
                                             "k, v = k.repeat(1, g, 1, 1), v.repeat(1, g, 1, 1)")],
    ("torch", "logits_divided_by_kv_width"): [("/ math.sqrt(d_k)", "/ math.sqrt(W_k.shape[-1])")],
    ("torch", "unscaled"): [(" / math.sqrt(d_k)", "")],
    ("torch", "mask_polarity_inverted"): [("s.masked_fill(mask == 0,", "s.masked_fill(mask.bool(),")],
    ("torch", "mask_equals_one"): [("s.masked_fill(mask == 0,", "s.masked_fill(mask != 1,")],
    ("torch", "attention_weights_detached"): [("p = torch.nan_to_num(s.softmax(-1), nan=0.0)",
                                               "p = torch.nan_to_num(s.softmax(-1), nan=0.0).detach()")],
    ("numpy", "heads_mapped_with_tile"): [
        ("k = np.repeat((x @ W_k).reshape(B, L, num_kv_heads, d_k).transpose(0, 2, 1, 3), g, axis=1)",
         "k = np.tile((x @ W_k).reshape(B, L, num_kv_heads, d_k).transpose(0, 2, 1, 3), (1, g, 1, 1))"),
        ("v = np.repeat((x @ W_v).reshape(B, L, num_kv_heads, d_k).transpose(0, 2, 1, 3), g, axis=1)",
         "v = np.tile((x @ W_v).reshape(B, L, num_kv_heads, d_k).transpose(0, 2, 1, 3), (1, g, 1, 1))")],
    ("numpy", "logits_divided_by_kv_width"): [("/ math.sqrt(d_k)", "/ math.sqrt(num_kv_heads * d_k)")],
    ("numpy", "mask_polarity_inverted"): [("np.asarray(mask) != 0", "np.asarray(mask) == 0")],
    ("numpy", "mask_equals_one"): [("np.asarray(mask) != 0", "np.asarray(mask) == 1")],
    ("numpy", "nan_fully_masked_rows"): [("    m = np.where(np.isfinite(m), m, 0.0)\n", ""),
                                         ("w = np.divide(e, t, out=np.zeros_like(e), where=t > 0)", "w = e / t")],
}


def _styled(track: str, name: str) -> str:
    source = BASES[track].read_text(encoding="utf-8")
    for old, new in STYLE_EDITS[track, name]:
        assert source.count(old) == 1, old
        source = source.replace(old, new)
    return source


@pytest.mark.parametrize("sample,check,phrase", [
    ("torch:heads_mapped_with_repeat", "head_mapping", "`repeat`"),
    ("torch:logits_divided_by_kv_width", "values", "num_kv_heads * d_k"),
    ("torch:unscaled", "values", "not scaled"),
    ("torch:mask_polarity_inverted", "masks", "opposite polarity"),
    ("torch:attention_weights_detached", "grad_input", "gradient of x"),
    ("numpy:heads_mapped_with_tile", "head_mapping", "`repeat`"),
    ("numpy:logits_divided_by_kv_width", "values", "num_kv_heads * d_k"),
    ("numpy:mask_polarity_inverted", "masks", "opposite polarity"),
    ("numpy:nan_fully_masked_rows", "fully_masked_rows", "NaN"),
    ("bug_inplace_x.py", "inputs_unchanged", "Modified its input in place: x"),
    ("bug_no_group_check.py", "bad_group", "Expected ValueError"),
])
def test_wrong_sample_fails_its_check_with_the_named_mistake(sample, check, phrase, tmp_path):
    """A bug sample, or (``TRACK:NAME``) a bank mistake written into that track's correct base."""
    path, track = SAMPLES / sample, None
    if ":" in sample:
        track, name = sample.split(":")
        path = tmp_path / f"styled_{name}.py"
        path.write_text(_styled(track, name), encoding="utf-8")
    outcomes = judge_in_process("gqa", path, track=track)
    assert check in failed(outcomes)
    assert phrase in messages(outcomes, check)


@pytest.mark.parametrize("track, name", sorted(STYLE_EDITS), ids=[f"{t}-{n}" for t, n in sorted(STYLE_EDITS)])
def test_a_bank_mistake_written_into_a_correct_style_is_named_by_replay(track, name, tmp_path):
    assert_named_as(get_exercise("gqa", track=track), _styled(track, name), name, tmp_path)


# A mask broadcast against grouped 5-D scores without a reshape (the sourced kind of mlx-lm#1903), written
# into the two samples that group the query heads in 5-D: replay names the bank's mutant in both tracks.
GROUPED_MASK_EDITS = {
    "torch": ("correct_group_broadcast_logsumexp.py",
              "m = torch.broadcast_to(mask, (B, Hq, L, L)).reshape(B, Hkv, g, L, L) != 0", "m = mask != 0"),
    "numpy": ("numpy/correct_broadcast_groups.py",
              "m = np.broadcast_to(np.asarray(mask) != 0, (B, Hq, L, L)).reshape(B, Hkv, g, L, L)",
              "m = np.asarray(mask) != 0"),
}


@pytest.mark.parametrize("track", sorted(GROUPED_MASK_EDITS))
def test_a_mask_broadcast_against_grouped_scores_is_named_by_replay(track, tmp_path):
    base, old, new = GROUPED_MASK_EDITS[track]
    source = (SAMPLES / base).read_text(encoding="utf-8")
    assert source.count(old) == 1, old
    assert_named_as(get_exercise("gqa", track=track), source.replace(old, new), "mask_batch_axis_on_kv_heads", tmp_path)


def test_expanded_weights_fail_only_kv_flops():
    # numerically right: every value and gradient check passes; only the FLOPs probe catches it
    assert failed(judge_in_process("gqa", SAMPLES / "bug_expand_weights.py")) == {"kv_flops"}


def test_correct_styles_pass_every_check_in_process():
    for path in sorted(SAMPLES.glob("correct_*.py")):
        assert failed(judge_in_process("gqa", path)) == set(), path.name


def test_static_scan_catches_enable_gqa_sdpa_inside_a_function():
    ex = get_exercise("gqa")
    source = (SAMPLES / "bug_sdpa_enable_gqa.py").read_text()
    assert [v.name for v in scan_source(source, ex.forbidden_modules, ex.forbidden_names)] == [
        "torch.nn.functional.scaled_dot_product_attention"]


def test_sdpa_via_torch_ops_is_caught_by_the_op_audit_only():
    ex = get_exercise("gqa")
    path = SAMPLES / "bug_sdpa_via_ops.py"
    assert scan_source(path.read_text(), ex.forbidden_modules, ex.forbidden_names) == []
    card = grade_submission(ex, path, sandbox="process", seed=2)
    assert card.status == "graded" and card.score == 0
    assert {c.verdict for c in card.checks} == {"forbidden"}
    assert "aten._scaled_dot_product_flash_attention_for_cpu" in card.status_message


def test_additive_inf_mask_with_nan_to_num_fails_only_the_gradient_edge_cases():
    """Issue 15: right forward output, NaN gradients of x/W_q/W_k on fully masked query rows."""
    outcomes = judge_in_process("gqa", SAMPLES / "bug_additive_inf_nan_to_num.py")
    assert failed(outcomes) == {"grad_edge_cases"}
    bad = [o for o in outcomes["grad_edge_cases"] if o.verdict != "passed"]
    assert len(bad) == 2
    assert all(o.message.startswith("Likely mistake: the gradient is NaN where a query row is fully masked")
               for o in bad)


@pytest.mark.parametrize("sample", ["correct_query_head_loop_softmax.py", "correct_expand_view.py",
                                    "correct_fused_qkv_einsum.py", "correct_loop_kv_heads.py"])
def test_kv_flops_counts_only_the_kv_projection(sample):
    """The issue's per-query-head loop with a hand-written softmax, expand, a fused QKV projection:
    the work of products consuming W_k/W_v is exactly the reference's, 2*L*D*(2*d_k) per size and
    path; the probe measures three paths (no mask and a causal mask at 1 KV head, a batch of two at
    2 KV heads) and judges their sum."""
    card = grade_submission(get_exercise("gqa"), SAMPLES / sample, sandbox="process", seed=3)
    check = next(c for c in card.checks if c.id == "kv_flops")
    assert check.verdict == "passed" and check.details["method"] == "count"
    D, d_k = 128, 16
    # exercise.toml: no mask and a causal (L, L) bool mask at 1 KV head, and a batch of 2 at 2 KV heads
    # (2 samples x 2 heads: 4 times one MQA path's work), summed
    units = 1 + 1 + 2 * 2
    assert check.details["candidate"] == [units * 2 * L * D * 2 * d_k for L in check.details["sizes"]]


def test_expanded_weights_get_the_hint_their_measurement_matches():
    card = grade_submission(get_exercise("gqa"), SAMPLES / "bug_expand_weights.py", sandbox="process", seed=3)
    check = next(c for c in card.checks if c.id == "kv_flops")
    # 8x the reference's K/V work on the two MQA paths, 4x on the path at 2 KV heads (4 units of 6)
    assert check.verdict == "failed" and check.details["ratios"] == pytest.approx([(2 * 8 + 4 * 4) / 6] * 4)
    # the bank's kv_weights_expanded mutant, replayed through the same measurement, costs the same
    # FLOPs at every size: the check names it (in place of the probe's own hint) and keeps the figures
    assert check.details["mistake"] == "kv_weights_expanded"
    assert check.message.startswith("Likely mistake: your measured cost equals, at the larger sizes, that of this mistake")
    assert "keys and values were projected at num_query_heads heads" in check.message.splitlines()[0]
    assert "5.33x the reference's" in check.message


def test_kv_reprojected_per_query_head_gets_the_sentence_of_what_was_measured(tmp_path):
    """Each query head projecting its KV head's columns again costs exactly the kv FLOPs of W_k/W_v
    expanded to full width (same values, same products): the measurement cannot tell the two
    apart, so the one mutant's sentence names what was measured, K/V projected at H_q heads, in
    both forms (it used to describe the expanded weights only, a wrong story for this loop)."""
    source = (SAMPLES / "correct_kv_head_slices_loop.py").read_text()
    old = ("        kj = x @ W_k[:, j * dk:(j + 1) * dk]\n        vj = x @ W_v[:, j * dk:(j + 1) * dk]\n"
           "        for h in range(j * g, (j + 1) * g):\n")
    new = ("        for h in range(j * g, (j + 1) * g):\n"
           "            kj = x @ W_k[:, j * dk:(j + 1) * dk]\n            vj = x @ W_v[:, j * dk:(j + 1) * dk]\n")
    assert source.count(old) == 1
    card = assert_named_as(get_exercise("gqa"), source.replace(old, new), "kv_weights_expanded", tmp_path)
    check = next(c for c in card.checks if c.id == "kv_flops")
    assert {c.id for c in card.checks if c.verdict != "passed"} == {"kv_flops"}
    assert check.message.startswith("Likely mistake: your measured cost equals, at the larger sizes, that of this mistake")
    assert "keys and values were projected at num_query_heads heads" in check.message.splitlines()[0]
    assert "each query head projecting its KV head's columns again" in check.message


def test_group_rounded_down_in_numpy_is_named_as_no_group_check(tmp_path):
    """numpy/bug_group_rounded_down.py gathers KV heads by a clipped index, so a group count that does not
    divide returns an array instead of raising ValueError: named as the NumPy bank's no_group_check
    (whose gather by h // group raises IndexError there, not ValueError: the same miss)."""
    ex = get_exercise("gqa", track="numpy")
    card = assert_named_as(ex, (ex.samples_path / "bug_group_rounded_down.py").read_text(encoding="utf-8"),
                           "no_group_check", tmp_path)
    assert {c.id for c in card.checks if c.verdict != "passed"} == {"bad_group"}
