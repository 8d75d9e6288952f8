"""A result of the other track's kind (a NumPy array in the PyTorch track) costs `dtype_preserved`:
the values are right, so no value check is charged for it. (NumPy tracks forbid importing torch, so
the converse cannot arise.)"""
from pathlib import Path

from grader.grading.exercise import get_exercise
from grader.grading.grade import _MEASURE_LOCK, grade_submission
from grader.grading.trusted import TrustedInProcess

ARRAY_IN_TORCH_TRACK = '''
import numpy as np
import torch


def softmax(x, axis=-1):
    a = x.detach().to(torch.float64).numpy()
    m = np.max(a, axis=axis, keepdims=True)
    m = np.where(np.isfinite(m), m, 0.0)
    e = np.exp(a - m)
    s = e.sum(axis=axis, keepdims=True)
    out = np.divide(e, s, out=np.zeros_like(e), where=s > 0)
    return out.astype(str(x.dtype).replace("torch.", "")) if x.dtype != torch.bfloat16 else out
'''

def _failed(track: str, source: str, tmp_path: Path) -> dict[str, str]:
    exercise = get_exercise("softmax", track=track)
    path = tmp_path / f"kind_{track}.py"
    path.write_text(source, encoding="utf-8")
    card = grade_submission(exercise, path, seed=7, trusted_runner=TrustedInProcess("kind", _MEASURE_LOCK))
    return {c.id: c.message for c in card.checks if c.verdict != "passed"}


def test_numpy_array_in_the_torch_track_fails_dtype_preserved(tmp_path):
    failed = _failed("torch", ARRAY_IN_TORCH_TRACK, tmp_path)
    assert "dtype_preserved" in failed
    assert "torch.Tensor" in failed["dtype_preserved"] and "NumPy array" in failed["dtype_preserved"]
    # no value check is charged for the kind (gradients cannot flow through a NumPy array, so that
    # check fails for its own reason)
    assert set(failed) - {"dtype_preserved", "gradients", "half_precision"} == set(), failed

