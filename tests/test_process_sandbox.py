"""The process sandbox drops privileges for real (issue #12, item 10): the submission's uid is not 0
on the host, it cannot write outside its scratch folder, and it reaches no network."""

from __future__ import annotations

import json
import os
import socket
import tempfile
from pathlib import Path

import pytest

from grader.sandbox.process import BOX_COUNT, BOX_UID_BASE, ProcessSandbox, probe_isolation

SNOOP = """
import json, os, socket
report = {"uid": os.getuid(), "euid": os.geteuid(), "writes": {}, "connect": None}
for target in __TARGETS__:
    try:
        with open(target, "w") as fh:
            fh.write("pwned")
        report["writes"][target] = "written"
    except OSError as exc:
        report["writes"][target] = type(exc).__name__
try:
    open("scratch-file", "w").write("mine")
    report["scratch"] = "written"
except OSError as exc:
    report["scratch"] = type(exc).__name__
try:
    socket.create_connection(("127.0.0.1", __PORT__), timeout=2).close()
    report["connect"] = "connected"
except OSError as exc:
    report["connect"] = type(exc).__name__
print("REPORT " + json.dumps(report))

def softmax(x, axis=-1):
    raise NotImplementedError
"""


@pytest.fixture
def world_writable_dir():
    """A folder on the host that any user may write (as /tmp itself is)."""
    folder = tempfile.mkdtemp(prefix="grader-escape-", dir="/tmp")
    os.chmod(folder, 0o777)
    yield Path(folder)
    for child in Path(folder).iterdir():
        child.unlink()
    os.rmdir(folder)


def test_the_submission_is_unprivileged_writes_only_its_scratch_and_has_no_network(grade_source, request,
                                                                                  world_writable_dir):
    isolation = probe_isolation(ProcessSandbox().python)
    if os.geteuid() == 0:
        assert isolation["user"] == "box", isolation  # a root grader must drop privileges here
    server = socket.socket()
    server.bind(("127.0.0.1", 0))
    server.listen(1)
    repo_file = request.config.rootpath / "grader-escape-probe.txt"
    targets = [str(world_writable_dir / "escape.txt"), str(repo_file), "/tmp/grader-escape-root.txt"]
    source = SNOOP.replace("__TARGETS__", repr(targets)).replace("__PORT__", str(server.getsockname()[1]))
    try:
        card = grade_source("softmax", source)
    finally:
        server.close()
    line = next(ln for ln in card.output["text"].splitlines() if ln.startswith("REPORT "))
    report = json.loads(line[len("REPORT "):])
    assert report["uid"] != 0 and report["euid"] != 0
    if os.geteuid() == 0:
        assert BOX_UID_BASE <= report["uid"] < BOX_UID_BASE + BOX_COUNT
    assert report["scratch"] == "written"
    assert not (world_writable_dir / "escape.txt").exists() and not repo_file.exists()
    assert not Path("/tmp/grader-escape-root.txt").exists()  # its /tmp is a private tmpfs
    assert report["writes"][str(repo_file)] != "written"
    if isolation["network"]:
        assert report["connect"] != "connected"
    assert card.sandbox["isolation"]["user"].startswith("own uid" if os.geteuid() == 0 else "invoking user")


# -- issue 20 item 5: runs are isolated from each other (own uid, PID, IPC and mount namespaces) ------
# Each attack runs under the process backend (in a full box: skipped, with what is missing, where the
# kernel or privileges do not allow one) and under docker, which isolates these by its containers.

import glob  # noqa: E402
import platform  # noqa: E402
import threading  # noqa: E402
import time  # noqa: E402
import uuid  # noqa: E402

from grader.grading.exercise import get_exercise  # noqa: E402
from grader.grading.grade import grade_submission  # noqa: E402

BACKENDS = ["process", pytest.param("docker", marks=pytest.mark.docker)]

CORRECT_SOFTMAX = '''
def softmax(x, axis=-1):
    import numpy as np
    m = np.max(x, axis=axis, keepdims=True)
    m = np.where(np.isfinite(m), m, 0).astype(x.dtype)
    with np.errstate(over="ignore"):
        e = np.exp(x - m)
    s = e.sum(axis=axis, keepdims=True)
    return np.divide(e, s, out=np.zeros_like(e), where=s > 0)
'''

#: Names itself (``PR_SET_NAME``) so the host can find it, then waits at import until the host drops
#: a ``go`` file in its home (after the attack), then answers correctly. Its source holds the secret.
VICTIM = '''
import ctypes, os, time
ctypes.CDLL(None).prctl(15, b"__COMM__", 0, 0, 0)
SECRET = "__SECRET__"
deadline = time.monotonic() + 90
while not os.path.exists(os.path.join(os.environ.get("HOME", "."), "go")) and time.monotonic() < deadline:
    time.sleep(0.05)
''' + CORRECT_SOFTMAX

#: Given the victim's host pid and host run folder and the service database's path (more than a real
#: attacker knows), it looks for the victim's secret everywhere it can, reads the database, and
#: kills every process it may signal.
ATTACKER = '''
import glob, json, os, signal
SECRET = "__TERCES__"[::-1].encode()  # reversed: its own source does not hold the secret
report = {"found": [], "db": None, "pids": [], "killed": []}

def look(path):
    try:
        with open(path, "rb") as fh:
            data = fh.read(1 << 20)
    except OSError as exc:
        return type(exc).__name__
    if SECRET in data:
        report["found"].append(path)
    return "read"

pids = sorted(int(p) for p in os.listdir("/proc") if p.isdigit())
report["pids"] = pids
for pid in sorted(set(pids) | {__VICTIM_PID__}):
    for part in ("cmdline", "environ", "root/sandbox/input/submission.py", "root/tmp/submission.py",
                 "cwd/../input/submission.py", "root__VICTIM_ROOT__/input/submission.py"):
        look(f"/proc/{pid}/{part}")
for path in glob.glob("__VICTIM_ROOT__/**", recursive=True) + ["__VICTIM_ROOT__/input/submission.py"]:
    look(path)
for path in glob.glob("/tmp/**", recursive=True) + glob.glob("/sandbox/**", recursive=True):
    if os.path.isfile(path):
        look(path)
report["db"] = look("__DB__")
for pid in sorted(set(pids) | {__VICTIM_PID__}):
    if pid != os.getpid():
        try:
            os.kill(pid, signal.SIGKILL)
            report["killed"].append(pid)
        except OSError:
            pass
try:
    os.kill(-1, signal.SIGKILL)  # every process this uid may signal (never the caller)
except OSError:
    pass
print("ATTACK " + json.dumps(report))

def softmax(x, axis=-1):
    raise NotImplementedError
'''


def _require_box(backend: str) -> None:
    if backend == "process":
        missing = ProcessSandbox().missing
        if missing:
            pytest.skip(f"the process backend's box lacks {', '.join(missing)} here")


def _grade(backend: str, path: Path):
    return grade_submission(get_exercise("softmax"), path, sandbox=backend, seed=7)


def _pids_named(comm: str) -> list[int]:
    found = []
    for status in glob.glob("/proc/[0-9]*/comm"):
        try:
            if Path(status).read_text().strip() == comm:
                found.append(int(status.split("/")[2]))
        except OSError:
            continue
    return found


def _uid_of(pid: int) -> int | None:
    try:
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            if line.startswith("Uid:"):
                return int(line.split()[1])
    except OSError:
        return None
    return None


def _release(pid: int) -> None:
    """Drop ``go`` into the home of the process ``pid`` (seen through its own root, from the host)."""
    try:
        env = dict(item.split("=", 1) for item in Path(f"/proc/{pid}/environ").read_text().split("\0") if "=" in item)
        Path(f"/proc/{pid}/root{env.get('HOME', '/tmp')}/go").write_text("go")
    except OSError:
        pass  # it ended meanwhile


def _report(card, prefix: str) -> dict:
    line = next((ln for ln in card.output["text"].splitlines() if ln.startswith(prefix + " ")), None)
    assert line is not None, (card.status, card.status_message, card.output["text"][-2000:])
    return json.loads(line[len(prefix) + 1:])


@pytest.mark.parametrize("backend", BACKENDS)
def test_a_concurrent_run_cannot_read_the_others_source_or_the_database_nor_kill_its_runner(
        backend, tmp_path, monkeypatch):
    _require_box(backend)
    runs = tmp_path / "runs"
    runs.mkdir()
    monkeypatch.setattr(tempfile, "tempdir", str(runs))  # the sandboxes' run folders land here
    secret, comm = f"SECRET-{uuid.uuid4().hex}", f"vic{uuid.uuid4().hex[:10]}"
    server = tmp_path / "server"  # the service's folder, with its database: a 0600 file of the host user
    server.mkdir()
    database = server / "grader-service.db"
    database.write_text(f"cohort seed {secret}")
    database.chmod(0o600)
    victim_path, attacker_path = tmp_path / "victim.py", tmp_path / "attacker.py"
    victim_path.write_text(VICTIM.replace("__COMM__", comm).replace("__SECRET__", secret))
    done: dict = {}
    victim = threading.Thread(target=lambda: done.update(card=_grade(backend, victim_path)), daemon=True)
    victim.start()
    deadline = time.monotonic() + 180
    while not _pids_named(comm) and victim.is_alive() and time.monotonic() < deadline:
        time.sleep(0.05)
    (victim_pid,) = _pids_named(comm)[:1] or [None]
    assert victim_pid is not None, "the victim's runner never started"
    victim_root = next(iter(sorted(glob.glob(str(runs / "*")))), str(runs))
    attacker_path.write_text(ATTACKER.replace("__TERCES__", secret[::-1]).replace("__VICTIM_PID__", str(victim_pid))
                             .replace("__VICTIM_ROOT__", victim_root).replace("__DB__", str(database)))
    try:
        attack = _grade(backend, attacker_path)
        assert victim_pid in _pids_named(comm), "the victim was not running during the whole attack"
    finally:
        while victim.is_alive():  # a runner restarted (or a second sandbox) waits for its own go
            for pid in _pids_named(comm):
                _release(pid)
            victim.join(timeout=0.1)
    report = _report(attack, "ATTACK")
    assert report["found"] == [], report["found"]
    assert secret not in attack.output["text"]
    assert report["db"] in ("FileNotFoundError", "PermissionError"), report["db"]
    card = done["card"]
    assert card.status == "graded" and card.score == card.max_score, (card.status, card.status_message)


DAEMON = '''
import ctypes, os, time
if os.fork() == 0:
    os.setsid()
    if os.fork() == 0:
        ctypes.CDLL(None).prctl(15, b"__COMM__", 0, 0, 0)
        with open("/tmp/daemon-up", "w") as fh:
            fh.write("up")
        while True:
            time.sleep(1000)
    os._exit(0)
os.wait()
for _ in range(400):
    if os.path.exists("/tmp/daemon-up"):
        print(f"DAEMON up as uid {os.getuid()}")
        break
    time.sleep(0.05)
''' + CORRECT_SOFTMAX


@pytest.mark.parametrize("backend", BACKENDS)
def test_nothing_of_a_double_forked_daemon_outlives_its_run(backend, tmp_path):
    _require_box(backend)
    comm = f"dmn{uuid.uuid4().hex[:10]}"
    path = tmp_path / "daemon.py"
    path.write_text(DAEMON.replace("__COMM__", comm))
    card = _grade(backend, path)
    assert card.status == "graded" and card.score == card.max_score, (card.status, card.status_message)
    line = next(ln for ln in card.output["text"].splitlines() if ln.startswith("DAEMON up"))
    assert _pids_named(comm) == []  # by name: no process of it is left
    if backend == "process":  # by uid: the box's uid owns no process any more
        assert card.sandbox["isolation"]["missing"] == []  # the scorecard records the box it ran in
        uid = int(line.split()[-1])
        assert BOX_UID_BASE <= uid < BOX_UID_BASE + BOX_COUNT
        assert [p for p in glob.glob("/proc/[0-9]*") if _uid_of(int(p.split("/")[2])) == uid] == []


#: Leaves the token in every shared place a run might reach, then a System V shared memory segment.
PERSIST_WRITE = '''
import ctypes, json, os
TOKEN, KEY = b"__TOKEN__", __KEY__
libc = ctypes.CDLL(None, use_errno=True)
libc.shmat.restype = ctypes.c_void_p
libc.shmat.argtypes = [ctypes.c_int, ctypes.c_void_p, ctypes.c_int]
report = {}
for folder in ("/tmp", "/var/tmp", "/run/lock", "/dev/shm", "/run"):
    try:
        with open(os.path.join(folder, "grader-persist"), "wb") as fh:
            fh.write(TOKEN)
        report[folder] = "written"
    except OSError as exc:
        report[folder] = type(exc).__name__
shmid = libc.shmget(KEY, 4096, 0o1666)  # IPC_CREAT | 0666
addr = libc.shmat(shmid, None, 0) if shmid >= 0 else None
if addr not in (None, ctypes.c_void_p(-1).value):
    ctypes.memmove(addr, TOKEN, len(TOKEN))
    report["sysv"] = "written"
else:
    report["sysv"] = os.strerror(ctypes.get_errno())
# the kernel keyrings of its uid (user and persistent), which outlive its processes and namespaces
NR = {"x86_64": (248, 250), "aarch64": (217, 219)}.get(os.uname().machine)
if NR:
    add_key, keyctl = NR
    user = libc.syscall(add_key, b"user", b"grader-persist", TOKEN, len(TOKEN), ctypes.c_int(-4))  # @u
    persistent = libc.syscall(keyctl, 22, ctypes.c_int(-1), ctypes.c_int(-4))  # KEYCTL_GET_PERSISTENT
    if persistent > 0:
        libc.syscall(add_key, b"user", b"grader-persist", TOKEN, len(TOKEN), ctypes.c_int(persistent))
    report["keyring"] = "written" if user > 0 else os.strerror(ctypes.get_errno())
report["uid"] = os.getuid()
print("WRITE " + json.dumps(report))
''' + CORRECT_SOFTMAX

PERSIST_READ = '''
import ctypes, json, os
TOKEN, KEY = b"__TOKEN__", __KEY__
libc = ctypes.CDLL(None, use_errno=True)
libc.shmat.restype = ctypes.c_void_p
libc.shmat.argtypes = [ctypes.c_int, ctypes.c_void_p, ctypes.c_int]
seen = []
for folder in ("/tmp", "/var/tmp", "/run/lock", "/dev/shm", "/run"):
    try:
        with open(os.path.join(folder, "grader-persist"), "rb") as fh:
            if TOKEN in fh.read():
                seen.append(folder)
    except OSError:
        pass
shmid = libc.shmget(KEY, 0, 0)
if shmid >= 0:
    addr = libc.shmat(shmid, None, 0o10000)  # SHM_RDONLY
    if addr not in (None, ctypes.c_void_p(-1).value) and ctypes.string_at(addr, len(TOKEN)) == TOKEN:
        seen.append("sysv")
NR = {"x86_64": (249, 250), "aarch64": (218, 219)}.get(os.uname().machine)
if NR:
    request_key, keyctl = NR
    persistent = libc.syscall(keyctl, 22, ctypes.c_int(-1), ctypes.c_int(-4))
    for where in (-4, persistent):  # @u, then the persistent keyring
        key = libc.syscall(keyctl, 10, ctypes.c_int(where), b"user", b"grader-persist", 0) if where > 0 or where == -4 else -1
        buf = ctypes.create_string_buffer(256)
        if key > 0 and libc.syscall(keyctl, 11, key, buf, 256) > 0 and TOKEN in buf.raw:  # KEYCTL_READ
            seen.append(f"keyring {where}")
print(f"UID {os.getuid()}")
print("READ " + json.dumps(seen))
''' + CORRECT_SOFTMAX


@pytest.mark.parametrize("backend", BACKENDS)
def test_a_run_passes_nothing_to_the_next_through_tmp_run_lock_dev_shm_sysv_or_keyrings(backend, tmp_path,
                                                                                       monkeypatch):
    _require_box(backend)
    if backend == "process":  # both gradings get the same box uids (two boxes outside the default range: a
        # grading's public part and its hidden part, started ahead, hold one each), the worst case
        from grader.sandbox import process as process_mod  # noqa: PLC0415

        monkeypatch.setattr(process_mod, "_ALLOCATOR", process_mod.BoxAllocator(str(tmp_path / "boxes"),
                                                                                base=61998, count=2))
    token, key = f"PERSIST-{uuid.uuid4().hex}", 0x5EED0000 + uuid.uuid4().int % 0xFFFF
    writer, reader = tmp_path / "writer.py", tmp_path / "reader.py"
    writer.write_text(PERSIST_WRITE.replace("__TOKEN__", token).replace("__KEY__", str(key)))
    reader.write_text(PERSIST_READ.replace("__TOKEN__", token).replace("__KEY__", str(key)))
    first = _grade(backend, writer)
    wrote = _report(first, "WRITE")
    if backend == "process":  # the box gives it every one of these places (its own, and gone after)
        assert all(wrote[place] == "written" for place in ("/tmp", "/var/tmp", "/run", "/run/lock", "/dev/shm",
                                                           "sysv")), wrote
        if platform.machine() in ("x86_64", "aarch64"):  # the keyrings, which no namespace here separates, refused
            assert wrote["keyring"] == "Operation not permitted", wrote
    else:
        assert wrote["sysv"] == "written" and wrote["/tmp"] == "written", wrote
    second = _grade(backend, reader)
    assert _report(second, "READ") == []
    if backend == "process":  # the same uid read: only the box's own namespaces and the seccomp filter separate them
        assert f"UID {wrote['uid']}" in second.output["text"].splitlines()
    host_keys = [int(line.split()[0]) for line in Path("/proc/sysvipc/shm").read_text().splitlines()[1:]]
    assert key not in host_keys  # the segment died with the run's IPC namespace


# -- grade serve --sandbox process: refuses an incomplete box unless told --insecure-sandbox ----------

def _serve(monkeypatch, tmp_path, *args):
    """Invoke ``grade serve --sandbox process ARGS`` with uvicorn and the app stubbed; (result, started)."""
    from click.testing import CliRunner  # noqa: PLC0415

    import grader.service.app as service_app  # noqa: PLC0415
    import uvicorn  # noqa: PLC0415

    from grader.cli import main  # noqa: PLC0415

    started = []
    monkeypatch.setattr(uvicorn, "run", lambda app, **kw: started.append(kw))
    monkeypatch.setattr(service_app, "create_app", lambda settings: object())
    monkeypatch.setenv("GRADER_INTERVIEWER_TOKEN", "x" * 32)
    result = CliRunner().invoke(main, ["serve", "--sandbox", "process", "--db", f"sqlite:///{tmp_path / 'db'}",
                                       *args])
    return result, started


def test_serve_refuses_a_process_sandbox_missing_a_protection_unless_told_insecure(monkeypatch, tmp_path):
    from grader.cli import EXIT_INFRASTRUCTURE  # noqa: PLC0415

    monkeypatch.setattr(ProcessSandbox, "missing", property(lambda self: ["pid_namespace", "own_uid"]))
    result, started = _serve(monkeypatch, tmp_path)
    assert result.exit_code == EXIT_INFRASTRUCTURE and started == []
    assert "missing pid_namespace, own_uid" in result.output and "--insecure-sandbox" in result.output
    result, started = _serve(monkeypatch, tmp_path, "--insecure-sandbox")
    assert result.exit_code == 0 and len(started) == 1, result.output
    assert "lack pid_namespace, own_uid" in result.output


def test_serve_starts_without_the_flag_only_when_every_protection_is_in_force(monkeypatch, tmp_path):
    missing = ProcessSandbox().missing
    result, started = _serve(monkeypatch, tmp_path)
    if missing:  # this host cannot make a full box: the refusal, naming what is missing
        assert started == [] and f"missing {', '.join(missing)}" in result.output
    else:
        assert result.exit_code == 0 and len(started) == 1, result.output
        assert "each run has its own box" in result.output


def test_serve_help_says_when_the_process_sandbox_starts():
    from click.testing import CliRunner  # noqa: PLC0415

    from grader.cli import main  # noqa: PLC0415

    text = " ".join(CliRunner().invoke(main, ["serve", "--help"]).output.split())
    assert "--insecure-sandbox" in text and "only when every protection is in force" in text


def test_info_names_each_protection_and_the_missing_ones():
    isolation = ProcessSandbox().info().isolation
    assert set(isolation["protections"]) == {"own_uid", "pid_namespace", "ipc_namespace", "mount_namespace",
                                             "network_namespace", "uts_namespace", "private_tmp", "no_keyrings"}
    assert isolation["missing"] == [k for k, v in isolation["protections"].items() if not v]
    if os.geteuid() == 0 and not isolation["missing"]:
        assert isolation["user"].startswith("own uid per run") and "missing_why" not in isolation


# -- box ids: one per concurrent run, across threads and processes -------------------------------------

_OTHER_PROCESS_TAKES = """
import sys
from grader.sandbox.base import SandboxUnavailable
from grader.sandbox.process import BoxAllocator
try:
    print(BoxAllocator(sys.argv[1], base=70000, count=2).acquire().id)
except SandboxUnavailable:
    print("none")
"""


def test_box_ids_are_exclusive_across_threads_and_processes_and_come_back_when_released(tmp_path):
    import subprocess  # noqa: PLC0415
    import sys  # noqa: PLC0415

    from grader.sandbox.base import SandboxUnavailable  # noqa: PLC0415
    from grader.sandbox.process import BoxAllocator  # noqa: PLC0415

    folder = str(tmp_path / "boxes")
    alloc = BoxAllocator(folder, base=70000, count=2)
    other = lambda: subprocess.run([sys.executable, "-c", _OTHER_PROCESS_TAKES, folder], capture_output=True,  # noqa: E731
                                   text=True, timeout=60, env={**os.environ}).stdout.strip()
    taken: list = []
    threads = [threading.Thread(target=lambda: taken.append(alloc.acquire())) for _ in range(2)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert sorted(b.id for b in taken) == [0, 1] and sorted(b.uid for b in taken) == [70000, 70001]
    with pytest.raises(SandboxUnavailable, match="all 2"):
        BoxAllocator(folder, base=70000, count=2).acquire()  # another allocator of this process
    assert other() == "none"  # and another process
    taken[1].release(kill=False)
    assert other() == str(taken[1].id)  # a released id is free again (the other process let it go at exit)
    assert oct(os.stat(folder).st_mode & 0o777) == "0o700"
    taken[0].release(kill=False)


@pytest.mark.skipif(os.geteuid() != 0, reason="starting a process as another uid needs root")
def test_releasing_a_box_kills_every_process_left_with_its_uid():
    import subprocess  # noqa: PLC0415

    from grader.sandbox.process import allocator, kill_uid  # noqa: PLC0415

    box = allocator().acquire()
    try:
        procs = [subprocess.Popen(["sleep", "300"], user=box.uid, group=box.gid, start_new_session=True)
                 for _ in range(2)]
        box.release()
        assert [p.wait(timeout=30) for p in procs] == [-9, -9]
        assert kill_uid(box.uid) == 0
    finally:
        box.release()


@pytest.mark.skipif(os.geteuid() != 0, reason="a box uid needs a root grader")
def test_without_namespaces_the_box_uid_alone_still_isolates_and_says_what_is_missing(monkeypatch, tmp_path):
    # what a root grader without CAP_SYS_ADMIN gets (launch.py's "isolate": false): its own uid, and
    # the uid's leftovers killed at the end; the missing protections are named, and serve refuses it
    import stat  # noqa: PLC0415
    import sys  # noqa: PLC0415

    from grader.sandbox import process as process_mod  # noqa: PLC0415

    parts = Path(os.path.realpath(sys.executable)).parents
    if any(not os.stat(p).st_mode & stat.S_IXOTH for p in parts):  # e.g. a pyenv Python under /root
        pytest.skip("the interpreter is hidden from other users: without a mount namespace no box uid can run it "
                    "(the probe then falls back to running as root, and says so)")
    protections = dict.fromkeys(process_mod.PROTECTIONS, False) | {"own_uid": True}
    monkeypatch.setattr(process_mod, "probe_isolation", lambda python: {
        "mode": "uid", "user": "box", "protections": protections, "network": False,
        "why": "unshare: Operation not permitted"})
    comm = f"dmn{uuid.uuid4().hex[:10]}"
    path = tmp_path / "daemon.py"
    path.write_text(DAEMON.replace("__COMM__", comm).replace("/tmp/daemon-up", "daemon-up"))
    card = grade_submission(get_exercise("softmax"), path, sandbox="process", seed=7)
    assert card.status == "graded" and card.score == card.max_score, (card.status, card.status_message)
    uid = int(next(ln for ln in card.output["text"].splitlines() if ln.startswith("DAEMON up")).split()[-1])
    assert BOX_UID_BASE <= uid < BOX_UID_BASE + BOX_COUNT
    assert _pids_named(comm) == []  # no PID namespace here: the release killed it by its uid
    isolation = card.sandbox["isolation"]
    assert isolation["missing"] == [k for k in process_mod.PROTECTIONS if k != "own_uid"]
    assert isolation["missing_why"] == "unshare: Operation not permitted"
    assert isolation["filesystem"] == "host filesystem, scratch working folder"
    result, started = _serve(monkeypatch, tmp_path)
    assert started == [] and "missing pid_namespace" in result.output


def test_sandbox_status_says_whether_the_process_sandbox_makes_a_full_box():
    from click.testing import CliRunner  # noqa: PLC0415

    from grader.cli import main  # noqa: PLC0415

    result = CliRunner().invoke(main, ["sandbox", "status"])
    line = next(ln for ln in result.output.splitlines() if ln.startswith("process sandbox: "))
    missing = ProcessSandbox().missing
    assert (f"missing {', '.join(missing)}" in line) if missing else ("a box per run" in line), line


def test_the_box_scratch_folder_is_a_capped_tmpfs_not_the_hosts_disk(tmp_path):
    _require_box("process")
    path = tmp_path / "fill.py"
    path.write_text('''
import os
written = 0
try:
    for i in range(1000):
        with open(f"fill-{i}", "wb") as fh:
            fh.write(b"x" * (1 << 20))
        written += 1
except OSError as exc:
    print(f"FILL {written} {os.getcwd()} {exc.strerror}")
''' + CORRECT_SOFTMAX)
    card = _grade("process", path)
    line = next(ln for ln in card.output["text"].splitlines() if ln.startswith("FILL "))
    written, cwd = int(line.split()[1]), line.split()[2]
    assert cwd == "/sandbox/scratch" and 8 <= written <= 16, line  # a 16 MiB tmpfs, not the disk's free space
    assert card.status == "graded" and card.score == card.max_score


def test_a_box_never_gets_the_id_of_a_host_account(tmp_path):
    import pwd  # noqa: PLC0415

    from grader.sandbox.process import BoxAllocator  # noqa: PLC0415

    try:
        pwd.getpwuid(65534)
    except KeyError:
        pytest.skip("no account 65534 (nobody) on this host")
    # box 0 would be uid 65534, nobody's: it is skipped, box 1 given
    box = BoxAllocator(str(tmp_path / "boxes"), base=65534, count=2).acquire()
    box.release(kill=False)
    assert (box.id, box.uid) == (1, 65535)


def test_the_probe_reports_each_namespace_the_box_did_not_get():
    from grader.sandbox.process import Box, _judge_probe  # noqa: PLC0415

    host = {n: os.readlink(f"/proc/self/ns/{n}") for n in ("net", "ipc", "pid", "mnt", "uts")}
    box = Box(id=3, uid=60003, gid=60003)
    cfg = {"keep_ro": ["/opt/python"], "keep_rw": ["/tmp/grade-process-x"], "box_dir": "/sandbox"}
    own = {n: f"{n}:[1]" for n in host}
    writable = {d: -1 for d in ("/tmp", "/var/tmp", "/run/lock", "/dev/shm")}  # no host device has st_dev -1
    facts = {"uid": 60003, "pid": 2, "ns": own, "root": ["usr", "etc", "proc", "sandbox", "opt"], "writable": writable,
             "keyrings_refused": True}
    assert all(_judge_probe(facts, box, cfg).values())
    shared_ipc = _judge_probe({**facts, "ns": {**own, "ipc": host["ipc"]}}, box, cfg)
    assert [k for k, v in shared_ipc.items() if not v] == ["ipc_namespace"]
    host_root = _judge_probe({**facts, "root": facts["root"] + ["work", "home"]}, box, cfg)
    assert [k for k, v in host_root.items() if not v] == ["mount_namespace"]
    as_pid_1 = _judge_probe({**facts, "pid": 1}, box, cfg)  # the runner must not be the init
    assert [k for k, v in as_pid_1.items() if not v] == ["pid_namespace"]
    host_tmp = _judge_probe({**facts, "writable": {**writable, "/tmp": os.stat("/tmp").st_dev}}, box, cfg)
    assert [k for k, v in host_tmp.items() if not v] == ["private_tmp"]
    assert not _judge_probe({**facts, "uid": 0}, box, cfg)["own_uid"]
    assert not _judge_probe({**facts, "keyrings_refused": False}, box, cfg)["no_keyrings"]


def test_a_grader_with_a_strict_umask_still_builds_a_box_its_uid_can_use(tmp_path):
    _require_box("process")
    path = tmp_path / "ok.py"
    path.write_text(CORRECT_SOFTMAX)
    old = os.umask(0o077)  # the launcher inherits it: the box's folders must not become 0700 root's
    try:
        card = _grade("process", path)
    finally:
        os.umask(old)
    assert card.status == "graded" and card.score == card.max_score, (card.status, card.status_message)

def test_worker_refuses_a_process_sandbox_missing_a_protection_unless_told_insecure(monkeypatch, tmp_path):
    """`grade worker` grades candidates' files as `grade serve`'s workers do: the same refusal."""
    from click.testing import CliRunner  # noqa: PLC0415

    import grader.service.fleet as fleet  # noqa: PLC0415
    from grader.cli import EXIT_INFRASTRUCTURE, main  # noqa: PLC0415

    ran = []
    monkeypatch.setattr(fleet, "run_worker", lambda db_url, **kw: ran.append(kw) or 0)
    monkeypatch.setattr(ProcessSandbox, "missing", property(lambda self: ["ipc_namespace"]))
    args = ["worker", "--sandbox", "process", "--db", f"sqlite:///{tmp_path / 'db'}"]
    result = CliRunner().invoke(main, args)
    assert result.exit_code == EXIT_INFRASTRUCTURE and ran == [], result.output
    assert "missing ipc_namespace" in result.output and "--insecure-sandbox" in result.output
    result = CliRunner().invoke(main, [*args, "--insecure-sandbox"])
    assert result.exit_code == 0 and len(ran) == 1, result.output
    assert "lack ipc_namespace" in result.output


# -- CUDA runners: RLIMIT_DATA in place of RLIMIT_AS ----------------------------------------------------

def test_a_cuda_runner_is_limited_by_its_data_not_its_address_space():
    """The CUDA driver reserves address space far beyond any memory limit at its first call ("out of
    memory" under RLIMIT_AS, seen on an H200): a runner given CUDA steps gets RLIMIT_DATA instead."""
    from grader.sandbox.base import Limits, SandboxJob  # noqa: PLC0415
    from grader.sandbox.process import _launch_config, job_uses_cuda  # noqa: PLC0415

    limits = Limits(memory_bytes=1 << 30)
    cpu = _launch_config(["x"], {}, "/s", "/r", "/usr/bin/python3", limits, None, False)["limits"]
    gpu = _launch_config(["x"], {}, "/s", "/r", "/usr/bin/python3", limits, None, False, cuda=True)["limits"]
    assert cpu["as"] == 1 << 30 and "data" not in cpu
    assert gpu["as"] is None and gpu["data"] == 1 << 30
    step = {"id": "s", "args": [{"tensor": "a", "device": "cpu"}], "kwargs": {"m": {"tensor": "b", "device": "cuda"}}}
    assert job_uses_cuda(SandboxJob(plan={"steps": [step]}, arrays={}, submission=b""))
    step["kwargs"]["m"]["device"] = "cpu"
    assert not job_uses_cuda(SandboxJob(plan={"steps": [step]}, arrays={}, submission=b""))


def test_the_data_limit_still_stops_a_memory_bomb(monkeypatch):
    """RLIMIT_DATA bounds private writable memory, so the memory bomb of the hostile corpus is still
    stopped in each step (as under RLIMIT_AS) when the runner is treated as a CUDA one."""
    import dataclasses  # noqa: PLC0415

    import grader.sandbox.process as process  # noqa: PLC0415

    monkeypatch.setattr(process, "job_uses_cuda", lambda job: True)
    ex = get_exercise("softmax")
    limits = dataclasses.replace(ex.limits, memory_bytes=512 << 20, wall_seconds=30)
    card = grade_submission(ex, Path(__file__).parent / "hostile" / "cases" / "memory_bomb.py", sandbox="process",
                            seed=1, limits=limits)
    assert card.status == "graded"
    assert {c.verdict for c in card.checks if c.category != "complexity"} <= {"memory_limit", "skipped"}
    assert any(c.verdict == "memory_limit" for c in card.checks)
