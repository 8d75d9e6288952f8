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


def test_probes_stay_on_the_cpu_unless_asked_even_with_a_gpu(monkeypatch):
    """A GPU present is not enough: the contracts do not require device-agnostic code, so CUDA probes
    are opt-in ($GRADER_PROBE_DEVICE=cuda)."""
    import grader.grading.grade as grade  # noqa: PLC0415

    monkeypatch.setattr(grade, "gpu_host", lambda: True)
    monkeypatch.delenv(grade.PROBE_DEVICE_ENV, raising=False)
    assert probe_device(get_exercise("mha"), "process") == "cpu"
    monkeypatch.setenv(grade.PROBE_DEVICE_ENV, "cuda")
    assert probe_device(get_exercise("mha"), "process") == ("cuda" if torch.cuda.is_available() else "cpu")
    assert probe_device(get_exercise("mha"), "docker") == "cpu"


def test_a_device_mismatch_on_a_gpu_probe_is_recognised_and_nothing_else():
    from types import SimpleNamespace as NS  # noqa: PLC0415

    from grader.judge.probes import _device_mismatch_on_gpu  # noqa: PLC0415

    on_gpu = NS(wire={"args": [{"tensor": "q", "device": "cuda"}], "kwargs": {}})
    on_cpu = NS(wire={"args": [{"tensor": "q", "device": "cpu"}], "kwargs": {}})
    raised = lambda message: NS(report={"exception": {"type": "RuntimeError", "message": message}})  # noqa: E731
    seen = [  # the messages torch 2.11 gave on an H200 (references building masks with torch.ones)
        "Expected all tensors to be on the same device, but found at least two devices, cuda:0 and cpu!",
        "expected self and mask to be on the same device, but got mask on cpu and self on cuda:0"]
    assert all(_device_mismatch_on_gpu(on_gpu, raised(m)) for m in seen)
    assert not _device_mismatch_on_gpu(on_cpu, raised(seen[0]))
    assert not _device_mismatch_on_gpu(on_gpu, raised("shape mismatch: (2, 3) and (3, 4)"))


def test_a_cuda_build_of_torch_gets_the_data_limit_without_a_gpu(monkeypatch, tmp_path):
    """PyPI's default Linux torch is a CUDA build; its import maps more address space than RLIMIT_AS
    allows (seen on the GPU machine with CUDA hidden), so its runners get RLIMIT_DATA on any host."""
    import importlib.machinery  # noqa: PLC0415

    import grader.sandbox.process as process  # noqa: PLC0415

    (tmp_path / "torch" / "lib").mkdir(parents=True)
    spec = importlib.machinery.ModuleSpec("torch", None, is_package=True)
    spec.submodule_search_locations = [str(tmp_path / "torch")]
    monkeypatch.setattr(process, "gpu_host", lambda: False)
    monkeypatch.setattr(process.importlib.util, "find_spec", lambda name: spec)
    process.cuda_torch.cache_clear()
    try:
        assert not process.cuda_torch()
        (tmp_path / "torch" / "lib" / "libtorch_cuda.so").write_bytes(b"")
        process.cuda_torch.cache_clear()
        assert process.cuda_torch()
    finally:
        process.cuda_torch.cache_clear()


@cuda
def test_mha_probe_runs_on_cuda_and_the_scorecard_says_so(request, monkeypatch):
    monkeypatch.setenv("GRADER_PROBE_DEVICE", "cuda")
    ex = get_exercise("mha")
    card = grade_submission(ex, request.config.rootpath / "reference/mha.py", sandbox="process", seed=5)
    assert card.all_passed
    probe = next(c for c in card.checks if c.category == "complexity")
    assert probe.details["device"] == "cuda"
    assert card.environment["device"].startswith("cuda")


@cuda
def test_a_cpu_only_correct_file_is_not_charged_on_a_gpu_probe(request, monkeypatch):
    """The causal_mask reference builds its masks with torch.ones (CPU) and mixes them with the
    inputs: on the GPU its probe is skipped, not charged, and it keeps full marks."""
    monkeypatch.setenv("GRADER_PROBE_DEVICE", "cuda")
    card = grade_submission(get_exercise("causal_mask", track="torch"),
                            request.config.rootpath / "reference/causal_mask_torch.py", sandbox="process", seed=5)
    probe = next(c for c in card.checks if c.category == "complexity")
    assert probe.verdict in ("passed", "skipped"), probe.message
    assert card.score == card.max_score or all(c.verdict in ("passed", "skipped") for c in card.checks)
