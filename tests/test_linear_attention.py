"""The linear_attention exercise: both references against an independent float64 computation (the
quadratic form written here with torch's own F.elu, and autograd through it), the grader's own
identities (quadratic form, token-by-token recurrence), the cases that make mistakes visible, wrong
files failing their check, the probes catching the L x L detour on each path, and the report's plot."""

import importlib.util

import numpy as np
import pytest
import torch
import torch.nn.functional as F

from attention_helpers import ROOT, failed, judge_in_process, messages
from mutant_helpers import mutant_file
from grader.grading.exercise import get_exercise

SAMPLES = ROOT / "submissions" / "samples" / "linear_attention"
checks = get_exercise("linear_attention").checks_module
f64 = torch.float64
f64_np = np.float64


def _load(path, name):
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


ref_np = _load(ROOT / "reference" / "linear_attention.py", "test_reference_linear_np")
ref_t = _load(ROOT / "reference" / "linear_attention_torch.py", "test_reference_linear_torch")


def _qkv(B, H, L, d_k, d_v, seed, scale=1.0):
    g = torch.Generator().manual_seed(seed)
    return (torch.randn(B, H, L, d_k, generator=g, dtype=f64) * scale,
            torch.randn(B, H, L, d_k, generator=g, dtype=f64) * scale,
            torch.randn(B, H, L, d_v, generator=g, dtype=f64))


def _quadratic(q, k, v, causal):
    """phi(Q) phi(K)^T (lower triangle when causal), rows divided by their sums, times V: torch float64,
    phi from torch's F.elu (code nobody here wrote), differentiable."""
    a = (F.elu(q) + 1) @ (F.elu(k) + 1).transpose(-2, -1)
    if causal:
        a = torch.tril(a)
    return (a / a.sum(-1, keepdim=True)) @ v


SHAPES = [(2, 3, 7, 4, 5), (1, 2, 1, 8, 3), (2, 1, 33, 16, 16), (1, 4, 12, 2, 9)]


@pytest.mark.parametrize("B,H,L,d_k,d_v", SHAPES)
@pytest.mark.parametrize("causal", [False, True])
def test_references_equal_the_quadratic_form(B, H, L, d_k, d_v, causal):
    q, k, v = _qkv(B, H, L, d_k, d_v, seed=L * d_k + causal, scale=2.0)
    want = _quadratic(q, k, v, causal)
    torch.testing.assert_close(ref_t.linear_attention(q, k, v, causal), want, rtol=1e-11, atol=1e-12)
    np.testing.assert_allclose(ref_np.linear_attention(q.numpy(), k.numpy(), v.numpy(), causal), want.numpy(),
                               rtol=1e-11, atol=1e-12)


@pytest.mark.parametrize("causal", [False, True])
def test_torch_reference_gradients_match_autograd_through_the_quadratic_form(causal):
    q, k, v = (t.requires_grad_(True) for t in _qkv(1, 2, 9, 4, 6, seed=3, scale=2.0))
    g = torch.randn(1, 2, 9, 6, dtype=f64)
    ours = torch.autograd.grad(ref_t.linear_attention(q, k, v, causal), (q, k, v), g)
    theirs = torch.autograd.grad(_quadratic(q, k, v, causal), (q, k, v), g)
    for a, b in zip(ours, theirs):
        torch.testing.assert_close(a, b, rtol=1e-10, atol=1e-12)


def test_torch_reference_gradient_is_finite_where_exp_would_overflow():
    """Features near 150 in float32: exp overflows there; the reference's phi takes exp of min(x, 0)."""
    q, k, v = _qkv(1, 1, 6, 4, 4, seed=5, scale=60.0)
    q, k, v = (t.float().requires_grad_(True) for t in (q, k, v))
    out = ref_t.linear_attention(q, k, v, False)
    grads = torch.autograd.grad(out, (q, k, v), torch.ones_like(out))
    assert all(torch.isfinite(t).all() for t in grads)
    naive = torch.where(q > 0, q + 1, torch.exp(q))  # the bank's where_exp_gradient
    assert not torch.isfinite(torch.autograd.grad(naive.sum(), q)[0]).all()


def test_grader_models_agree_with_each_other_and_with_torch():
    q, k, v = _qkv(2, 2, 13, 4, 3, seed=11)
    for causal in (False, True):
        np.testing.assert_allclose(checks.quadratic64(q.numpy(), k.numpy(), v.numpy(), causal),
                                   _quadratic(q, k, v, causal).numpy(), rtol=1e-12, atol=1e-13)
    np.testing.assert_allclose(checks.recurrence64(q.numpy(), k.numpy(), v.numpy()),
                               _quadratic(q, k, v, True).numpy(), rtol=1e-12, atol=1e-13)


@pytest.mark.parametrize("dtype", [np.float16, np.float32, np.float64])
def test_numpy_reference_keeps_the_dtype_and_accumulates_half_in_float32(dtype):
    q, k, v = (t.numpy().astype(dtype) for t in _qkv(1, 2, 64, 16, 8, seed=2))
    q, k, v = q + dtype(20), k + dtype(20), v + dtype(10)  # the half_precision case's magnitudes
    out = ref_np.linear_attention(q, k, v, True)
    assert out.dtype == dtype and np.isfinite(out).all()
    if dtype == np.float16:
        want = ref_np.linear_attention(q.astype(np.float32), k.astype(np.float32), v.astype(np.float32), True)
        np.testing.assert_array_equal(out, want.astype(np.float16))
        with np.errstate(over="ignore", invalid="ignore"):  # the same sums in float16 overflow 65504
            S = np.swapaxes(q + dtype(1), -1, -2) @ v
            assert not np.isfinite((q + dtype(1)) @ S).all()


@pytest.mark.parametrize("dtype", [torch.float16, torch.bfloat16, torch.float32, torch.float64])
def test_torch_reference_keeps_the_dtype(dtype):
    q, k, v = (t.to(dtype) for t in _qkv(1, 2, 5, 4, 3, seed=1))
    for causal in (False, True):
        assert ref_t.linear_attention(q, k, v, causal).dtype == dtype


BAD = [((2, 5, 4), (2, 5, 4), (2, 5, 4)), ((1, 2, 5, 4), (1, 2, 5, 3), (1, 2, 5, 4)),
       ((1, 2, 5, 4), (1, 2, 7, 4), (1, 2, 7, 4)), ((2, 2, 5, 4), (2, 2, 5, 4), (1, 2, 5, 4)),
       ((1, 3, 5, 4), (1, 1, 5, 4), (1, 1, 5, 4))]


@pytest.mark.parametrize("shapes", BAD)
def test_references_reject_bad_shapes(shapes):
    arrays = [np.zeros(s) for s in shapes]
    with pytest.raises(ValueError):
        ref_np.linear_attention(*arrays)
    with pytest.raises(ValueError):
        ref_t.linear_attention(*(torch.from_numpy(a) for a in arrays))


def test_bad_shape_cases_include_ones_an_unchecked_solution_accepts():
    """A query length other than the keys', or a batch of 1 against 2, goes through the non-causal
    product silently: those cases make a missing ValueError visible."""
    plan = checks.build_plan(0, 1, track="numpy")
    silent = 0
    for step in (s for s in plan.steps if s.check == "bad_shapes"):
        q, k, v = (plan.arrays[a["array"]] for a in step.wire["args"][:3])
        try:
            fk = checks.phi64(k)
            (checks.phi64(q) @ (np.swapaxes(fk, -1, -2) @ v)) / (checks.phi64(q) @ fk.sum(axis=2)[..., None])
            silent += 1
        except ValueError:
            pass
    assert silent >= 2


def test_large_magnitude_cases_hold_tiny_denominators_and_features_past_float32_exp():
    """An epsilon of 1e-6 is not small beside these denominators, and exp(x) overflows float32 for
    these features: the cases that charge eps_in_denominator and phi_exp."""
    plan = checks.build_plan(0, 1, track="numpy")
    dens, tops = [], []
    for step in (s for s in plan.steps if s.check == "large_magnitudes"):
        q, k = (plan.arrays[a["array"]] for a in step.wire["args"][:2])
        dens.append(float((checks.phi64(q) @ checks.phi64(k).sum(axis=2)[..., None]).max()))
        tops.append(float(max(q.max(), k.max())))
    assert min(dens) < 1e-3 and max(tops) > 89


@pytest.mark.parametrize("track", ["numpy", "torch"])
def test_hidden_cases_keep_their_kinds_at_every_seed(track):
    kinds = set()
    for seed in range(1, 21):
        plan = checks.build_plan(0, seed, track=track)
        steps = [s for s in plan.steps if s.check == "hidden_values"]
        key = lambda a: a.get("array") or a["tensor"]  # noqa: E731
        seen = tuple(sorted((s.wire["args"][3]["value"], plan.arrays[key(s.wire["args"][0])].dtype.name,
                             plan.arrays[key(s.wire["args"][0])].shape[-1] != plan.arrays[key(s.wire["args"][2])].shape[-1])
                            for s in steps))
        kinds.add(seen)
    assert len(kinds) == 1, kinds


@pytest.mark.parametrize("sample,check,track", [
    ("bug_exclusive_loop.py", "causal", None),
    ("bug_eps_denominator.py", "large_magnitudes", None),
    ("bug_float16_inputs.py", "half_precision", None),
    ("bug_phi_values.py", "values", None),
    ("torch/bug_where_exp.py", "gradients", "torch"),
    ("torch/bug_exclusive_state.py", "causal", "torch"),
])
def test_wrong_sample_fails_its_check(sample, check, track):
    outcomes = judge_in_process("linear_attention", SAMPLES / sample, track=track)
    assert check in failed(outcomes)
    if check in ("half_precision", "gradients", "large_magnitudes"):
        assert failed(outcomes) <= {check, "float64"}  # one mistake, one (or two) deductions
    if check == "gradients":
        assert "NaN/inf" in messages(outcomes, "gradients")


def test_tiny_phi_cases_tell_the_textbook_elu_from_an_epsilon():
    """Features near -6 in float32: (exp(x) - 1) + 1 (the paper's F.elu(x) + 1, correct_elu_float32.py)
    is 10x or more further from golden than the reference, yet within the case's tolerance (the floor,
    and the elu + 1 baseline's error), while an epsilon of 1e-6 in the denominator is 50x past it."""
    elu = _load(SAMPLES / "correct_elu_float32.py", "test_linear_elu_sample")
    plan = checks.build_plan(0, 1, track="numpy")
    step = next(st for st in plan.steps if st.check == "large_magnitudes"
                and plan.arrays[st.wire["args"][0]["array"]].dtype == np.float32
                and plan.arrays[st.wire["args"][0]["array"]].mean() < -3)
    q, k, v = (plan.arrays[a["array"]] for a in step.wire["args"][:3])
    golden = ref_np.linear_attention(q.astype(f64_np), k.astype(f64_np), v.astype(f64_np))
    err_ref = np.abs(ref_np.linear_attention(q, k, v) - golden).max()
    err_elu = np.abs(elu.linear_attention(q, k, v) - golden).max()
    assert err_elu > 10 * err_ref
    outcomes = judge_in_process("linear_attention", SAMPLES / "correct_elu_float32.py")
    assert failed(outcomes) == set()
    with_eps = ref_np.linear_attention(q, k, v)  # the reference's rows shrunk as 1 / (den + 1e-6) would
    den = checks.phi64(q) @ checks.phi64(k).sum(axis=2)[..., None]
    err_eps = np.abs(with_eps * (den / (den + 1e-6)) - golden).max()
    assert err_eps > 50 * max(1e-5, 5 * err_elu)


def _grade(path, track):
    from grader.grading.grade import _MEASURE_LOCK, grade_submission  # noqa: PLC0415
    from grader.grading.trusted import TrustedInProcess  # noqa: PLC0415

    card = grade_submission(get_exercise("linear_attention", track=track), path, seed=5,
                            trusted_runner=TrustedInProcess(path.name, _MEASURE_LOCK))
    return {c.id: c for c in card.checks}, card


@pytest.mark.parametrize("track", ["numpy", "torch"])
@pytest.mark.parametrize("mistake", ["quadratic_detour", "causal_quadratic_detour", "quadratic_both_paths"])
def test_probes_catch_the_l_by_l_detour_on_each_path(track, mistake, tmp_path):
    """The detour on one path only (the other linear), or on both, fails both probes by growth: the ratio to the
    reference grows like L (fitted exponent near 1), the candidate's cost like L^2 at the largest sizes."""
    checks_by_id, _ = _grade(mutant_file("linear_attention", mistake, tmp_path, track=track), track)
    for check in ("flops_scaling", "memory_scaling"):
        d = checks_by_id[check].details
        assert checks_by_id[check].verdict == "failed", (check, d)
        assert d["method"] == "count" and d["ratio_slope"] > 0.6 and d["ratios"][-1] > 8, (check, d["ratios"])
        top = np.log(d["candidate"][-1] / d["candidate"][-2]) / np.log(d["sizes"][-1] / d["sizes"][-2])
        assert top > 1.6 and d["reference_slope"] < 1.2, (check, top, d["reference_slope"])


def test_report_plots_the_linear_reference_beside_the_quadratic_candidate(tmp_path):
    from grader.cohort.plots import find_series, loglog  # noqa: PLC0415
    from grader.cohort.report import render_report  # noqa: PLC0415

    checks_by_id, card = _grade(SAMPLES / "bug_masked_quadratic.py", "numpy")
    uris = []
    for check in ("flops_scaling", "memory_scaling"):
        series = find_series(checks_by_id[check].details)
        assert len(series) == 1 and set(series[0]["series"]) == {"candidate", "reference"}
        sizes = np.log(series[0]["sizes"])
        slopes = {label: np.polyfit(sizes, np.log(values), 1)[0] for label, values in series[0]["series"].items()}
        assert slopes["reference"] < 1.15 and slopes["candidate"] > 1.5, slopes
        uris.append(loglog(series[0], f"{check}: {series[0]['name']} vs {series[0]['x']}"))
        assert uris[-1].startswith("data:image/svg+xml")
    html = render_report([("ann", card)])
    for check in ("flops_scaling", "memory_scaling"):  # the page shows both probes' log-log plots
        assert f'alt="log-log plot of {check}"' in html


@pytest.mark.parametrize("causal", [False, True])
def test_identity_judges_blame_the_grader_when_the_reference_disagrees(causal):
    """A golden answer off the quadratic form (values) or the recurrence (causal) is a GraderBug
    (infrastructure_error, never charged), raised before the candidate is judged."""
    from types import SimpleNamespace  # noqa: PLC0415

    from grader.judge.judges import GraderBug  # noqa: PLC0415

    q, k, v = (t.numpy() for t in _qkv(1, 2, 6, 4, 3, seed=8))
    right = checks.quadratic64(q, k, v, causal)
    judge = checks.matches_recurrence() if causal else checks.matches_quadratic_form()
    wrong = SimpleNamespace(report={"output": {"kind": "array", "key": "o"}}, arrays={"o": right * (1 + 1e-6)},
                            step=SimpleNamespace(id="s1"))
    ctx = SimpleNamespace(golden=wrong, step=wrong.step, arg=lambda i: (q, k, v, causal)[i])
    with pytest.raises(GraderBug, match="recurrence" if causal else "quadratic form"):
        judge(ctx)


@pytest.mark.slow
def test_state_kept_in_float16_is_named_and_full_float16_accumulation_is_not_confused_with_it(tmp_path):
    """A state summed in float32 but stored in float16 (the helper hunt's sample) and the bank's
    ``float16_accumulation`` (everything in float16) both fail half_precision; each replay names its own."""
    checks_by_id, _ = _grade(SAMPLES / "bug_state_stored_in_float16.py", None)
    assert checks_by_id["half_precision"].verdict == "failed"
    assert checks_by_id["half_precision"].details["mistake"] == "state_in_input_dtype"
    checks_by_id, _ = _grade(mutant_file("linear_attention", "float16_accumulation", tmp_path), None)
    assert checks_by_id["half_precision"].details["mistake"] == "float16_accumulation"


@pytest.mark.slow
def test_causal_state_summed_again_per_query_is_named_by_its_cost():
    """The causal state recomputed from the first key at every position ([V | 1] and ndarray.dot, the
    hunt's sample) costs what the bank's ``causal_state_recomputed`` costs; memory stays linear."""
    checks_by_id, _ = _grade(SAMPLES / "bug_state_recomputed_with_dot.py", None)
    assert checks_by_id["memory_scaling"].verdict == "passed"
    flops = checks_by_id["flops_scaling"]
    assert flops.verdict == "failed" and flops.details["mistake"] == "causal_state_recomputed"
    assert flops.details["evidence"] == "cost"
