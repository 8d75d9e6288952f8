"""Sandbox backends and their selection.

``process`` (``grader.sandbox.process``) is the embedded default; a ``docker`` backend plugs in
beside it behind the same ``Sandbox`` interface (``grader.sandbox.base``).
"""

from __future__ import annotations

from grader.sandbox.base import Limits, Sandbox, SandboxJob, SandboxRun, SandboxUnavailable

BACKENDS = ("auto", "process", "docker")

__all__ = ["BACKENDS", "Limits", "Sandbox", "SandboxJob", "SandboxRun", "SandboxUnavailable", "select_sandbox"]


def _docker_backend():
    """The docker backend when it is ready here, else None and why.

    With a warm pool of docker containers installed in this process (``grader.sandbox.pool``), its
    backend, checked when the pool started: a service grading asks for the backend at every
    submission, and probing the engine again (a new client, ping, image and version queries) cost
    more than the pool saved on softmax. Should the engine or image go away meanwhile, the run fails
    as an ``infrastructure_error`` (retried), as a cold run would.
    """
    from grader.sandbox.pool import installed  # noqa: PLC0415

    pool = installed()
    if pool is not None and not pool.closed and getattr(pool.backend, "name", None) == "docker":
        return pool.backend, getattr(pool.backend, "ready_reason", "engine reachable")
    try:
        from grader.sandbox.docker import DockerSandbox  # noqa: PLC0415 - optional backend
    except ImportError:
        return None, "the docker backend is not part of this build"
    return DockerSandbox.if_ready()


def select_sandbox(name: str = "auto", *, require_isolation: bool = False) -> tuple[Sandbox, str]:
    """Pick a backend (through the warm pool installed in this process, if any: ``grader.sandbox.pool``).

    Args:
        name: ``auto`` (docker when an engine and the image are ready, else process), ``process``
            or ``docker``.
        require_isolation: refuse anything but docker.

    Returns:
        ``(backend, selection)``: the backend and a sentence saying why it was chosen.

    Raises:
        SandboxUnavailable: the requested backend cannot run here, or isolation is required and
            docker is not ready.
        ValueError: an unknown backend name.
    """
    if name not in BACKENDS:
        raise ValueError(f"unknown sandbox {name!r} (choose from {', '.join(BACKENDS)})")
    if name == "process" and require_isolation:
        raise SandboxUnavailable("--require-isolation refuses the process backend; use --sandbox docker")
    if name in ("auto", "docker"):
        docker, why = _docker_backend()
        if docker is not None:
            return _pooled(docker), f"docker ({why})" if name == "auto" else "docker (requested)"
        if name == "docker" or require_isolation:
            raise SandboxUnavailable(f"the docker sandbox is not ready: {why}. "
                                     "Run `grade sandbox status` to see what is missing.")
        from grader.sandbox.process import ProcessSandbox  # noqa: PLC0415

        return _pooled(ProcessSandbox()), f"process (auto: {why})"
    from grader.sandbox.process import ProcessSandbox  # noqa: PLC0415

    return _pooled(ProcessSandbox()), "process (requested)"


def _pooled(backend):
    from grader.sandbox.pool import wrap  # noqa: PLC0415

    return wrap(backend)
