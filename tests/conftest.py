"""Shared fixtures: a helper that grades inline source text through the real pipeline."""

from __future__ import annotations

import textwrap
from pathlib import Path

import pytest

from grader.grading.exercise import get_exercise
from grader.grading.grade import grade_submission


@pytest.fixture
def grade_source(tmp_path: Path):
    """Grade ``source`` (dedented) as a submission of ``exercise_id`` with the process sandbox."""

    def run(exercise_id: str, source: str, *, seed: int = 7, limits=None, name: str = "submission.py"):
        path = tmp_path / name
        path.write_text(textwrap.dedent(source))
        return grade_submission(get_exercise(exercise_id), path, sandbox="process", seed=seed, limits=limits)

    return run


# -- Scheduling: the long tests first, and idle workers steal ------------------------------------
# The suite's time is dominated by a few dozen tests of a minute or two (self-checks, sandboxed
# self-checks, probes of loop-heavy samples), collected late (tests/test_selfcheck.py): run in
# collection order by xdist's default `load` scheduling, they ended the run with one worker busy and
# the other idle. With `-n N` and no `--dist` given, tests run with `worksteal` (an idle worker takes
# half of the other's queue), and tests marked `slow` are collected first, so the tail is short tests.


@pytest.hookimpl(tryfirst=True)
def pytest_cmdline_main(config):
    if getattr(config.option, "numprocesses", None) and getattr(config.option, "dist", "no") == "no":
        config.option.dist = "worksteal"


def pytest_collection_modifyitems(config, items):
    items.sort(key=lambda item: item.get_closest_marker("slow") is None)  # stable: slow ones first


def verdicts(card) -> dict[str, str]:
    """Check id -> verdict of a scorecard."""
    return {c.id: c.verdict for c in card.checks}


# -- Docker: the `docker` marker, readiness, and no leftover containers ------------------------------
# Tests marked `docker` need a reachable engine and the sandbox image (`grade sandbox build`). They
# skip where there is none, unless GRADER_REQUIRE_DOCKER=1 (CI), which turns that skip into a failure.
# After each of them, no container with the grader's label that the test process made may remain.
# (The "docker" marker itself is registered in pyproject.toml.)

import os as _os  # noqa: E402

REQUIRE_DOCKER_ENV = "GRADER_REQUIRE_DOCKER"
_docker_readiness: dict = {}


def _docker_ready():
    """(DockerSandbox or None, reason), probed once per session."""
    if "ready" not in _docker_readiness:
        from grader.sandbox.docker import DockerSandbox  # noqa: PLC0415

        _docker_readiness["ready"] = DockerSandbox.if_ready()
    return _docker_readiness["ready"]


def _our_containers(client) -> list[str]:
    """Containers with the grader's label that this test process created (their names hold its pid)."""
    from docker_helpers import labelled_containers  # noqa: PLC0415

    mine = f"attention-grader-{_os.getpid()}-"
    return [c.name for c in labelled_containers(client) if c.name.startswith(mine)]


@pytest.fixture(autouse=True)
def _docker_guard(request):
    """For `docker` tests: skip (or fail, when required) without an engine; then check no leftovers."""
    if request.node.get_closest_marker("docker") is None:
        yield
        return
    backend, why = _docker_ready()
    if backend is None:
        if _os.environ.get(REQUIRE_DOCKER_ENV) == "1":
            pytest.fail(f"{REQUIRE_DOCKER_ENV}=1 but the docker sandbox is not ready: {why}")
        pytest.skip(f"docker sandbox not ready: {why}")
    yield
    left = _our_containers(backend.client)
    assert not left, f"containers left behind: {left}"


@pytest.fixture
def docker_sandbox():
    """The ready DockerSandbox (use with the `docker` marker, which skips or fails without it)."""
    backend, why = _docker_ready()
    if backend is None:  # only reached without the marker
        pytest.skip(f"docker sandbox not ready: {why}")
    return backend
