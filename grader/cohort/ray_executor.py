"""``grade batch --ray ADDRESS``: one Ray task per submission, on the nodes of a Ray cluster.

The task is ``grade_one`` (``grader.cohort.executors``) wrapped with ``ray.remote`` here and nowhere
else; Ray is imported only when this executor is made (``pip install -e '.[ray]'``).

* **Resources, not hostnames.** A task asks for one unit of the custom resource ``grader_sandbox``
  (``RESOURCE``), which a node advertises when it can grade: ``ray start ... --resources
  '{"grader_sandbox": 4}'`` (how many submissions it grades at once). ``--ray local`` starts an
  embedded Ray on this machine that advertises ``jobs`` of it. A torch exercise whose probes
  measure on a GPU (``--sandbox process``: the docker sandbox is given no GPU) also asks for
  ``num_gpus=1`` when the cluster has GPUs, and runs on CPU nodes when it has none.
* **Nodes agree with the driver.** Before any submission is graded, a first task pinned to every
  node that advertises the resource reports its ``fingerprint`` (grader, Python, NumPy and torch
  versions; per exercise its version and ``files_hash``; whether the requested sandbox is ready,
  building the image first when docker is asked for and ``build_image``); any difference from the
  driver's refuses the cluster with ``NodeRefused``, which names the node and what differs. Every
  task checks its node again (a node that joined later), and grades nothing there on a mismatch
  (an ``infrastructure_error``, retried by the next run).
* **Faults.** A node lost mid-task: Ray retries the task elsewhere (``max_retries``); when retries run
  out, the submission gets an ``infrastructure_error`` scorecard, never a candidate's zero.
* **Ctrl-C.** ``cancel()`` cancels every task (``ray.cancel``: a running task gets a
  ``KeyboardInterrupt``, so its sandbox backend kills the submission and removes its container) and
  returns what had finished; queued tasks never start.
"""

from __future__ import annotations

import os
import platform
import socket
import time
from importlib import metadata
from typing import Iterator, Sequence

from grader import __version__
from grader.cohort.executors import Executor, GradeJob, fault_document, grade_one

#: the custom resource a node advertises when it can grade (one unit per concurrent submission)
RESOURCE = "grader_sandbox"
#: ``--ray local``: the embedded Ray's object store (bytes); submissions and scorecards are small
LOCAL_OBJECT_STORE_BYTES = 100 * 1024 * 1024
#: fields of a fingerprint that must equal the driver's
AGREEMENT_FIELDS = ("grader", "python", "numpy", "torch")


class RayUnavailable(RuntimeError):
    """Ray is not installed, the cluster cannot be reached, or no node advertises ``RESOURCE``."""


class NodeRefused(RuntimeError):
    """A node disagrees with the driver (versions, exercise files) or cannot run the sandbox."""


def _dist_version(name: str) -> str | None:
    try:
        return metadata.version(name)
    except metadata.PackageNotFoundError:
        return None


def fingerprint(sandbox: str | None = None, *, require_isolation: bool = False, build_image: bool = False) -> dict:
    """What this machine would grade with: versions, exercise files and (when ``sandbox`` is given)
    the sandbox it would use.

    Returns:
        ``{"node": hostname, "grader", "python" (major.minor), "numpy", "torch", "exercises":
        {id: {"version", "hash"}}, "sandbox": {"ok", "backend" | "why", "built"}}``.
    """
    import numpy as np  # noqa: PLC0415

    from grader.grading.exercise import exercise_ids, get_exercise  # noqa: PLC0415
    from grader.grading.reference_cache import files_hash  # noqa: PLC0415

    exercises = {}
    for eid in exercise_ids():
        try:
            ex = get_exercise(eid)
            exercises[eid] = {"version": ex.version, "hash": files_hash(ex)}
        except Exception as exc:  # noqa: BLE001 - a broken exercise on a node is a disagreement to report
            exercises[eid] = {"version": None, "hash": f"unloadable: {type(exc).__name__}: {exc}"}
    fp = {"node": socket.gethostname(), "grader": __version__, "python": ".".join(platform.python_version_tuple()[:2]),
          "numpy": np.__version__, "torch": _dist_version("torch"), "exercises": exercises}
    if sandbox is not None:
        fp["sandbox"] = _sandbox_state(sandbox, require_isolation, build_image)
    return fp


def _sandbox_state(sandbox: str, require_isolation: bool, build_image: bool) -> dict:
    from grader.sandbox import SandboxUnavailable, select_sandbox  # noqa: PLC0415

    built = False
    try:
        backend, _why = select_sandbox(sandbox, require_isolation=require_isolation)
    except SandboxUnavailable as exc:
        if not build_image or (sandbox != "docker" and not require_isolation):
            return {"ok": False, "why": str(exc), "built": False}
        try:
            from grader.sandbox.image import build_image as build  # noqa: PLC0415

            build(progress=lambda _msg: None)
            built = True
            backend, _why = select_sandbox(sandbox, require_isolation=require_isolation)
        except Exception as build_exc:  # noqa: BLE001 - the node cannot grade: refused with the reason
            return {"ok": False, "why": f"{exc}; building the image failed: {build_exc}", "built": False}
    return {"ok": True, "backend": backend.info().backend, "built": built}


def disagreements(driver: dict, node: dict, *, reference: str = "driver") -> list[str]:
    """How ``node``'s fingerprint differs from ``driver``'s, one phrase each (empty: they agree);
    ``reference`` names the side compared with in the phrases (``grade worker`` says ``server``)."""
    found = [f"{key} {node.get(key)} ({reference}: {driver.get(key)})" for key in AGREEMENT_FIELDS
             if node.get(key) != driver.get(key)]
    for eid in sorted(set(driver["exercises"]) | set(node["exercises"])):
        mine, theirs = driver["exercises"].get(eid), node["exercises"].get(eid)
        if theirs is None:
            found.append(f"exercise {eid} missing")
        elif mine is None:
            found.append(f"exercise {eid} unknown to the {reference}")
        elif theirs["version"] is None:
            found.append(f"exercise {eid} does not load ({theirs['hash']})")
        elif theirs["version"] != mine["version"]:
            found.append(f"exercise {eid} version {theirs['version']} ({reference}: {mine['version']})")
        elif theirs["hash"] != mine["hash"]:
            found.append(f"exercise {eid} files differ (hash {str(theirs['hash'])[:12]}, {reference}: {mine['hash'][:12]})")
    state = node.get("sandbox")
    if state is not None and not state.get("ok"):
        found.append(f"sandbox not ready: {state.get('why')}")
    return found


_NODE_CHECK: dict = {}


def _grade_on_node(job: GradeJob, driver: dict) -> dict:
    """The Ray task: grade ``job`` if this node agrees with the driver (checked once per worker
    process), else an ``infrastructure_error`` document saying why."""
    key = repr(sorted(driver.items()))
    if key not in _NODE_CHECK:
        _NODE_CHECK[key] = disagreements(driver, fingerprint())
    if _NODE_CHECK[key]:
        return fault_document(job, f"node {socket.gethostname()} disagrees with the driver: "
                                   + "; ".join(_NODE_CHECK[key]))
    return grade_one(job)


def _import_ray():
    try:
        import ray  # noqa: PLC0415 - optional dependency
    except ImportError as exc:
        raise RayUnavailable("--ray needs Ray: pip install -e '.[ray]'") from exc
    return ray


def _reachable(address: str, timeout_s: float = 10.0) -> None:
    """Fail fast on a ``HOST:PORT`` (or ``ray://HOST:PORT``) nobody answers: ``ray.init`` itself
    retries for minutes.

    Raises:
        RayUnavailable: no TCP connection within ``timeout_s`` seconds.
    """
    target = address.removeprefix("ray://")
    host, sep, port = target.rpartition(":")
    if not sep or not port.isdigit():
        return  # "auto" and other forms: left to Ray
    try:
        socket.create_connection((host or "127.0.0.1", int(port)), timeout=timeout_s).close()
    except OSError as exc:
        raise RayUnavailable(f"cannot connect to the Ray cluster at {address}: {exc}") from exc


def _connect(ray, address: str, jobs: int, attempts: int = 3) -> None:
    """``ray.init`` for ``address`` (see ``RayExecutor``); an embedded start that times out (Ray allows
    its node 30 s to register, which a loaded machine can miss) is tried again.

    Raises:
        RayUnavailable: Ray could not start or connect.
    """
    if address != "local":
        _reachable(address)
    for attempt in range(attempts):
        try:
            if address == "local":
                n = max(1, int(jobs))
                ray.init(num_cpus=n, resources={RESOURCE: n}, include_dashboard=False,
                         object_store_memory=LOCAL_OBJECT_STORE_BYTES, log_to_driver=False, configure_logging=False)
            else:
                ray.init(address=address, log_to_driver=False, configure_logging=False)
            return
        except Exception as exc:  # noqa: BLE001 - ConnectionError, ValueError, RuntimeError, ...
            if ray.is_initialized():
                ray.shutdown()
            if address != "local" or "timed out during startup" not in str(exc) or attempt == attempts - 1:
                raise RayUnavailable(f"cannot connect to the Ray cluster at {address}: {exc}") from exc


class RayExecutor(Executor):
    """Grade each job as a Ray task (see the module docstring).

    Args:
        address: ``local`` (an embedded Ray on this machine), ``auto`` or ``HOST:PORT``/``ray://...``
            of a running cluster. When this process is already connected (``ray.is_initialized()``),
            that connection is used and left open.
        jobs: for ``local``: how many submissions at once (the embedded node's CPUs and ``RESOURCE``).
        sandbox, require_isolation: what every node must be able to run (checked up front).
        build_image: a node whose docker sandbox is not ready builds the image before it is refused.
        max_retries: Ray retries of a task whose worker or node died (system failures only).
        in_flight: most tasks submitted at once (default: 4 per unit of ``RESOURCE`` in the cluster).

    Raises:
        RayUnavailable: no Ray, no cluster at ``address``, or no node advertises ``RESOURCE``.
        NodeRefused: a node disagrees with the driver; the message names it and what differs.
    """

    name = "ray"

    def __init__(self, address: str = "local", *, jobs: int = 1, sandbox: str = "auto",
                 require_isolation: bool = False, build_image: bool = False, max_retries: int = 3,
                 in_flight: int | None = None):
        self.ray = ray = _import_ray()
        self.address = address
        self._owns_connection = not ray.is_initialized()
        if self._owns_connection:
            _connect(ray, address, jobs)
        try:
            self.capacity = int(ray.cluster_resources().get(RESOURCE, 0))
            if self.capacity < 1:
                raise RayUnavailable(f"no node of the Ray cluster at {address} advertises the {RESOURCE!r} "
                                     f"resource; start grading nodes with: ray start --address=HEAD:6379 "
                                     f"--resources='{{\"{RESOURCE}\": 2}}'")
            self.sandbox, self.require_isolation = sandbox, require_isolation
            self.max_retries = max_retries
            self.in_flight = in_flight or 4 * self.capacity
            self.driver = fingerprint()
            self.nodes = self.check_nodes(build_image=build_image)
            # GPUs count only on nodes that grade: a GPU task elsewhere would never be scheduled
            self.has_gpus = any(n.get("gpus", 0) > 0 for n in self.nodes)
        except BaseException:
            self.close()
            raise
        self._remote = ray.remote(_grade_on_node)
        self._refs: dict = {}
        self._done: dict[int, dict] = {}
        self._jobs: list[GradeJob] = []

    def check_nodes(self, *, build_image: bool = False) -> list[dict]:
        """Run ``fingerprint`` pinned to every alive node that advertises ``RESOURCE``.

        Returns:
            The nodes' fingerprints, each with ``node_id``, ``address`` and ``gpus`` (its GPU count).

        Raises:
            NodeRefused: one or more nodes disagree with the driver (all are named).
        """
        ray = self.ray
        from ray.util.scheduling_strategies import NodeAffinitySchedulingStrategy  # noqa: PLC0415

        probe = ray.remote(fingerprint)
        nodes = [n for n in ray.nodes() if n.get("Alive") and n.get("Resources", {}).get(RESOURCE, 0) > 0]
        refs = [probe.options(num_cpus=0, max_retries=0, scheduling_strategy=NodeAffinitySchedulingStrategy(
            node_id=n["NodeID"], soft=False)).remote(self.sandbox, require_isolation=self.require_isolation,
                                                      build_image=build_image) for n in nodes]
        reports, refused = [], []
        for node, ref in zip(nodes, refs):
            where = node.get("NodeManagerAddress", "?")
            try:
                fp = ray.get(ref, timeout=600)
            except Exception as exc:  # noqa: BLE001 - a node that cannot even answer is refused
                refused.append(f"node {where} ({node['NodeID'][:8]}): did not answer the version check: {exc}")
                continue
            fp.update(node_id=node["NodeID"], address=where, gpus=node.get("Resources", {}).get("GPU", 0))
            reports.append(fp)
            diffs = disagreements(self.driver, fp)
            if diffs:
                refused.append(f"node {where} ({node['NodeID'][:8]}): " + "; ".join(diffs))
        if refused:
            raise NodeRefused("refused: " + " | ".join(refused)
                              + ". Install the driver's grader and exercises on every node (or stop those nodes).")
        return reports

    def _options(self, job: GradeJob) -> dict:
        options = {"num_cpus": 1, "resources": {RESOURCE: 1}, "max_retries": self.max_retries,
                   "retry_exceptions": False}
        if self.has_gpus and job.sandbox == "process" and _measures_on_gpu(job.exercise):
            options["num_gpus"] = 1
        return options

    def imap_unordered(self, jobs: Sequence[GradeJob]) -> Iterator[tuple[int, dict]]:
        """See ``Executor.imap_unordered``; each job travels with its file's bytes (nodes do not share
        the driver's disk)."""
        ray = self.ray
        self._jobs = list(jobs)
        queue = list(range(len(self._jobs)))[::-1]
        while queue or self._refs:
            while queue and len(self._refs) < self.in_flight:
                index = queue.pop()
                try:
                    job = self._jobs[index].with_source()
                except OSError as exc:
                    yield index, fault_document(self._jobs[index], f"Grader fault (reading the submission): {exc}")
                    continue
                self._refs[self._remote.options(**self._options(job)).remote(job, self.driver)] = index
            ready, _ = ray.wait(list(self._refs), num_returns=1, timeout=0.5)
            for ref in ready:
                index = self._refs.pop(ref)
                yield index, self._document(ref, index)

    def _document(self, ref, index: int) -> dict:
        try:
            return self.ray.get(ref)
        except KeyboardInterrupt:
            raise
        except Exception as exc:  # noqa: BLE001 - retries ran out (node lost), worker crashed, ...
            return fault_document(self._jobs[index], f"Grader fault (Ray: {type(exc).__name__}): "
                                                     f"{str(exc).splitlines()[0] if str(exc) else ''}")

    def cancel(self, grace_s: float = 30.0) -> list[tuple[int, dict]]:
        """Cancel every task (running ones get ``KeyboardInterrupt`` and clean their sandbox up), wait up
        to ``grace_s`` seconds for them to stop, and return the ones that had finished."""
        ray = self.ray
        refs = dict(self._refs)
        self._refs.clear()
        for ref in refs:
            try:
                ray.cancel(ref, force=False)
            except Exception:  # noqa: BLE001 - already finished or gone
                pass
        late = []
        deadline = time.monotonic() + grace_s
        pending = list(refs)
        while pending and time.monotonic() < deadline:
            ready, pending = ray.wait(pending, num_returns=len(pending), timeout=0.5)
            for ref in ready:
                try:
                    late.append((refs[ref], ray.get(ref)))
                except Exception:  # noqa: BLE001 - cancelled: not graded
                    pass
        return late

    def close(self) -> None:
        """Disconnect when this executor made the connection (an embedded ``local`` Ray stops)."""
        if self._owns_connection and self.ray.is_initialized():
            self.ray.shutdown()


def _measures_on_gpu(exercise_id: str) -> bool:
    """Whether the exercise's probes would measure on a GPU (torch, with probes, and CUDA probes asked
    for with ``$GRADER_PROBE_DEVICE=cuda``: ``grade.probe_device``)."""
    from grader.grading.exercise import get_exercise  # noqa: PLC0415
    from grader.grading.grade import cuda_probes_requested  # noqa: PLC0415

    if not cuda_probes_requested():
        return False

    try:
        ex = get_exercise(exercise_id)
    except Exception:  # noqa: BLE001 - reported by grade_one
        return False
    return ex.framework == "torch" and bool(ex.probes)


def default_address() -> str | None:
    """``GRADER_RAY_ADDRESS`` when set (``grade batch --ray`` falls back to it)."""
    return os.environ.get("GRADER_RAY_ADDRESS") or None
