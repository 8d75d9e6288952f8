"""GPU paths: exercised where CUDA exists, skipped with a reason where it does not."""
import pytest
import torch

from grader.grading.exercise import get_exercise
from grader.grading.grade import grade_submission, probe_device
from grader.run.instruments import Measurement

cuda = pytest.mark.skipif(not torch.cuda.is_available(), reason="no CUDA device on this machine")


def test_probes_measure_on_cpu_without_a_gpu():
    if torch.cuda.is_available():
        pytest.skip("this machine has a GPU: the CUDA tests below cover it")
    assert probe_device(get_exercise("mha"), "process") == "cpu"
    assert probe_device(get_exercise("softmax"), "process") == "cpu"


def test_docker_backend_never_gets_cuda_probes():
    assert probe_device(get_exercise("mha"), "docker") == "cpu"


@cuda
def test_cuda_measurement_uses_events_and_allocator_peak():
    a = torch.ones(256, 256, device="cuda")
    with Measurement(["flops", "peak_bytes", "seconds"], uses_torch=True, device="cuda") as m:
        b = a @ a
        del b
    assert m.report["device"] == "cuda"
    assert m.report["matmul_flops"] == 2 * 256 ** 3
    assert m.report["peak_bytes"] >= 256 * 256 * 4
    assert m.report["seconds"] > 0


@cuda
def test_mha_probe_runs_on_cuda_and_the_scorecard_says_so(request):
    ex = get_exercise("mha")
    card = grade_submission(ex, request.config.rootpath / "reference/mha.py", sandbox="process", seed=5)
    assert card.all_passed
    probe = next(c for c in card.checks if c.category == "complexity")
    assert probe.details["device"] == "cuda"
    assert card.environment["device"].startswith("cuda")
