import numpy as np
import pytest
import torch

from grader.run.plan import PlanBuilder, round_to_dtype


@pytest.mark.parametrize("dtype", ["float16", "bfloat16"])
def test_rounding_matches_torch_bit_for_bit(dtype):
    rng = np.random.default_rng(0)
    x = (rng.standard_normal(50_000) * np.exp(rng.uniform(-30, 30, 50_000))).astype(np.float32)
    x[:5] = [np.inf, -np.inf, np.nan, 0.0, -0.0]
    theirs = torch.tensor(x).to(getattr(torch, dtype)).float().numpy()
    np.testing.assert_array_equal(round_to_dtype(x, dtype), theirs)


def test_golden_promotes_floats_only_and_leaves_the_plan_alone():
    b = PlanBuilder()
    b.call("c", "f", [b.tensor("x", np.ones((2, 2)), dtype="bfloat16"), b.array("ids", np.arange(3)),
                      b.array("w", np.ones(2, dtype=np.float32))], judge=lambda ctx: None)
    wire, arrays = b.plan.golden()
    assert wire["steps"][0]["args"][0]["dtype"] == "float64"
    assert b.plan.wire()["steps"][0]["args"][0]["dtype"] == "bfloat16"
    assert arrays["w"].dtype == np.float64 and arrays["ids"].dtype == np.arange(3).dtype
