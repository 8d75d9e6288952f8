"""A warm pool of sandboxes: runners started ahead of their job, each used for exactly one run.

Starting a sandbox costs more than most plans: a fresh interpreter, NumPy (~0.3 s CPU) and, for torch
plans, torch (~2 s CPU, several seconds of wall time on a loaded machine). A ``WarmPool`` keeps a few
sandboxes already started with their runtime imported and waiting for their one job
(``runner.py --wait``); ``PooledSandbox`` hands a job to one of them, or starts a cold one when none
is ready. A pooled sandbox is never reused: it is discarded after its run (or at ``close``), and the
pool starts a fresh one in the background. So a submission still gets a fresh process of its own,
with the same limits, isolation and inputs as a cold run (nothing of the grader but the plan, the
input arrays and the submission enters it); only the runtime import has already happened.

Replacements are started in the background; while a pooled run is in flight, only keys left with no
waiting sandbox get one (so with two per key, the import of the next never competes with a run).
Sandboxes are keyed by ``(runtime, limits)``: rlimits are set when the process starts, so a job is
given only a sandbox started with its exact limits. Keys are learnt on demand (the first job of a key
runs cold and asks for the key to be kept warm) or given ahead with ``prime``; at most ``max_keys``
keys are kept (least recently used dropped). A waiting runner exits on end of file on its stdin,
which the grading process holds: even a ``kill -9`` of the grader leaves no waiting runner behind.

Backends: ``process`` (``ProcessSandbox.start_warm``/``run_warm``: runners waiting on a pipe, each in
a box of its own, uid and namespaces taken at its start and given back at its discard) and
``docker`` (``DockerSandbox.start_warm``/``run_warm``: hardened containers, created with exactly the
cold run's ``container_options``, waiting on their attach socket; see ``grader.sandbox.docker``).
A backend without them runs cold through ``PooledSandbox`` unchanged.

Use (one pool per grading process)::

    pool = WarmPool(backend, sizes={"numpy": 1, "torch": 1})
    install(pool)            # select_sandbox() now returns PooledSandbox(backend, pool)
    ...
    pool.close()             # discards every waiting sandbox; none is left
"""

from __future__ import annotations

import atexit
import logging
import threading
import time
from collections import OrderedDict

from grader.sandbox.base import Limits, SandboxInfo, SandboxJob, SandboxRun, SandboxUnavailable

log = logging.getLogger("grader.sandbox.pool")

RUNTIMES = ("numpy", "torch")


def runtime_of(job: SandboxJob) -> str:
    """``torch`` when the job's plan holds tensors (``SandboxJob.needs_torch``), else ``numpy``."""
    return "torch" if job.needs_torch else "numpy"


def supports_warm(backend) -> bool:
    """The backend can start sandboxes ahead of their job (``start_warm``/``run_warm``)."""
    return callable(getattr(backend, "start_warm", None)) and callable(getattr(backend, "run_warm", None))


class WarmPool:
    """Keeps up to ``sizes[runtime]`` started, waiting sandboxes per ``(runtime, limits)`` key.

    Args:
        backend: a backend with ``start_warm(runtime, limits)`` and ``run_warm(warm, job)`` (the
            process and docker backends); with another backend the pool stays empty and every run is cold.
        sizes: sandboxes kept waiting per key, by runtime (``{"numpy": n, "torch": m}``; a missing
            runtime or 0: none kept for it).
        max_keys: distinct ``(runtime, limits)`` keys kept warm at once (least recently used dropped).
        poll_s: seconds between the background thread's checks for dead or missing sandboxes.

    Thread-safe. ``take`` never blocks on a start; starts happen in one background thread.
    """

    def __init__(self, backend, sizes: dict[str, int] | None = None, *, max_keys: int = 4, poll_s: float = 0.5):
        self.backend = backend
        self.sizes = {r: max(0, int((sizes or {}).get(r, 1))) for r in RUNTIMES}
        self.max_keys = max(1, int(max_keys))
        self.poll_s = poll_s
        self._ready: OrderedDict[tuple[str, Limits], list] = OrderedDict()
        self._cond = threading.Condition()  # waits are bounded by poll_s: readiness is not notified
        self._closed = False
        self._in_flight = 0  # pooled runs under way (``PooledSandbox.run``)
        self.started = 0  # sandboxes started by the pool (for tests and reports)
        self.served = 0  # jobs given to a pooled sandbox
        self.cold = 0  # jobs that found none ready
        self._thread: threading.Thread | None = None
        sweep = getattr(backend, "sweep_warm_folders", None)
        if callable(sweep):
            sweep()  # what a killed grader left behind
        if supports_warm(backend) and any(self.sizes.values()):
            self._thread = threading.Thread(target=self._fill_loop, name="warm-pool", daemon=True)
            self._thread.start()

    def prime(self, runtime: str, limits: Limits) -> None:
        """Keep sandboxes of ``(runtime, limits)`` warm from now on (started in the background)."""
        if runtime not in RUNTIMES:
            raise ValueError(f"unknown runtime {runtime!r} (choose from {', '.join(RUNTIMES)})")
        with self._cond:
            if self._closed or self._thread is None or not self.sizes[runtime]:
                return
            key = (runtime, limits)
            if key not in self._ready:
                self._ready[key] = []
                while len(self._ready) > self.max_keys:
                    _old, dropped = self._ready.popitem(last=False)
                    for warm in dropped:
                        threading.Thread(target=warm.discard, daemon=True).start()
            self._ready.move_to_end(key)
            self._cond.notify_all()

    def take(self, runtime: str, limits: Limits, *, run: bool = False):
        """A started sandbox of ``(runtime, limits)`` (one that finished importing first, else the oldest),
        now the caller's alone, or None when none is started (the key is then primed, so the next job of it finds one).

        ``run=True``: the sandbox is taken for a run, counted in flight (``running(+1)``) under the same
        lock, so the fill loop, woken to replace it, cannot start a replacement of a key that still has a
        sandbox before the run is counted; the caller calls ``running(-1)`` when the run is over."""
        with self._cond:
            ready = self._ready.get((runtime, limits), [])
            ready.sort(key=lambda w: not w.ready.is_set())  # imported ones first, then the oldest
            while ready:
                warm = ready.pop(0)
                if warm.alive():
                    self.served += 1
                    self._in_flight += 1 if run else 0
                    self._ready.move_to_end((runtime, limits))
                    self._cond.notify_all()  # replace it
                    return warm
                threading.Thread(target=warm.discard, daemon=True).start()
            self.cold += 1
        self.prime(runtime, limits)
        return None

    def running(self, delta: int) -> None:
        """Count a pooled run in (+1) or out (-1): replacements of keys that still have a waiting
        sandbox are started only between runs."""
        with self._cond:
            self._in_flight += delta
            self._cond.notify_all()

    @property
    def closed(self) -> bool:
        """``close`` was called (nothing more is started or served)."""
        return self._closed

    def waiting(self) -> int:
        """How many started sandboxes are waiting now."""
        with self._cond:
            return sum(len(v) for v in self._ready.values())

    def wait_ready(self, runtime: str, limits: Limits, timeout: float = 60.0) -> bool:
        """Block until a sandbox of the key has imported its runtime and waits (priming the key);
        False after ``timeout`` seconds."""
        self.prime(runtime, limits)
        with self._cond:
            def ready() -> bool:
                return self._closed or any(w.ready.is_set() for w in self._ready.get((runtime, limits), []))

            deadline = time.monotonic() + timeout
            while not ready() and time.monotonic() < deadline:
                self._cond.wait(0.05)
            return ready() and not self._closed

    def _missing(self) -> tuple[str, Limits] | None:
        for key in reversed(self._ready):  # most recently used first
            alive = [w for w in self._ready[key] if w.alive()]
            for dead in set(self._ready[key]) - set(alive):
                threading.Thread(target=dead.discard, daemon=True).start()
            self._ready[key] = alive
            # While a pooled run is in flight, a key that still has a sandbox waits: a start (torch's
            # import) would take CPU from the run; a key with none starts at once.
            if len(alive) < self.sizes[key[0]] and (not alive or not self._in_flight):
                return key
        return None

    def _fill_loop(self) -> None:
        failures = 0
        while True:
            with self._cond:
                key = None
                while not self._closed:
                    key = self._missing()
                    if key is not None:
                        break
                    self._cond.wait(self.poll_s)
                if self._closed:
                    return
            try:
                warm = self.backend.start_warm(*key)
                failures = 0
            except (SandboxUnavailable, OSError) as exc:  # cold runs still work; try again later
                failures += 1
                log.warning("warm pool: could not start a %s sandbox: %s", key[0], exc)
                with self._cond:
                    self._cond.wait(min(30.0, self.poll_s * 2 ** failures))
                continue
            with self._cond:
                if self._closed or key not in self._ready:
                    keep = False
                else:
                    self._ready[key].append(warm)
                    self.started += 1
                    keep = True
                    self._cond.notify_all()
            if not keep:
                warm.discard()

    def close(self, timeout: float = 120.0) -> None:
        """Stop starting sandboxes and discard every waiting one (idempotent); none is left after.

        ``timeout``: seconds to wait for a start in flight (then discarded by the background thread).
        """
        with self._cond:
            self._closed = True
            waiting = [w for ready in self._ready.values() for w in ready]
            self._ready.clear()
            self._cond.notify_all()
        thread = self._thread
        if thread is not None and thread is not threading.current_thread():
            thread.join(timeout=timeout)  # a start in flight finishes, then is discarded by the loop
        for warm in waiting:
            warm.discard()
        drain = getattr(self.backend, "wait_removals", None)
        if callable(drain):
            drain()  # sandboxes of finished runs that the backend removes in the background


class PooledSandbox:
    """A backend whose runs take a waiting sandbox from ``pool`` when one is ready (else run cold).

    Same ``Sandbox`` contract and ``info()`` as ``backend``: the scorecard cannot tell the two apart,
    except by speed. Restarts after a step timeout (``run_with_restarts``) each get a fresh sandbox.
    """

    def __init__(self, backend, pool: WarmPool):
        self.backend, self.pool = backend, pool
        self.name = backend.name

    def info(self) -> SandboxInfo:
        """The wrapped backend's isolation (unchanged by pooling)."""
        return self.backend.info()

    def run(self, job: SandboxJob, limits: Limits) -> SandboxRun:
        """Run ``job`` in a waiting sandbox of ``(runtime_of(job), limits)``, else cold; see ``Sandbox.run``.

        Raises:
            SandboxUnavailable: from the backend (a cold run).
        """
        warm = self.pool.take(runtime_of(job), limits, run=True) if supports_warm(self.backend) else None
        if warm is None:
            return self.backend.run(job, limits)
        try:  # counted in flight by take(run=True)
            run = self.backend.run_warm(warm, job)
        finally:
            self.pool.running(-1)
        if run.infrastructure_error and run.results.started is None:  # it died waiting: run it cold instead
            log.warning("warm pool: %s; running cold", run.infrastructure_error)
            return self.backend.run(job, limits)
        return run


_installed: WarmPool | None = None
_lock = threading.Lock()


def install(pool: WarmPool | None) -> None:
    """Make ``select_sandbox`` wrap its backend in ``PooledSandbox(backend, pool)`` when the backend is
    ``pool.backend``'s kind (None: uninstall). The pool is closed at this process's exit."""
    global _installed  # noqa: PLW0603 - one pool per grading process
    with _lock:
        _installed = pool
    if pool is not None:
        atexit.register(pool.close)


def installed() -> WarmPool | None:
    """The pool ``install`` set in this process, or None."""
    return _installed


def wrap(backend):
    """``PooledSandbox(backend, pool)`` when an installed pool serves ``backend``'s kind, else ``backend``."""
    pool = _installed
    if pool is None or getattr(pool.backend, "name", None) != getattr(backend, "name", None):
        return backend
    return PooledSandbox(pool.backend, pool)


def install_for(sandbox: str, sizes: dict[str, int] | None, *, require_isolation: bool = False) -> WarmPool | None:
    """Install (``install``) a ``WarmPool`` of the backend ``select_sandbox(sandbox)`` picks here, keeping
    ``sizes`` sandboxes waiting per runtime (``{"numpy": n, "torch": m}``), and return it; None (nothing
    installed) when ``sizes`` asks for none, a pool is installed already, the backend is not ready (each
    grading then reports that itself) or cannot start sandboxes ahead.

    Args:
        sandbox: ``auto``, ``process`` or ``docker`` (``grader.sandbox.select_sandbox``).
        require_isolation: as for ``select_sandbox``.
    """
    from grader.sandbox import SandboxUnavailable, select_sandbox  # noqa: PLC0415 - the package imports us

    if not sizes or not any(int(v) for v in sizes.values()) or installed() is not None:
        return None
    try:
        backend, _why = select_sandbox(sandbox, require_isolation=require_isolation)
    except (SandboxUnavailable, ValueError):
        return None
    if not supports_warm(backend):
        return None
    pool = WarmPool(backend, sizes)
    install(pool)
    return pool
