"""The sandbox image: how ``grade sandbox build`` makes it and ``grade sandbox status`` reports it.

The image is built from ``grader/sandbox/docker_image/Dockerfile`` with ``--network none``: numpy
(pinned to the host's version, so host and sandbox compute alike) and torch (CPU) are installed
from a wheelhouse that ``pip download`` fills on the host beforehand, from wherever pip is told to
look (``--find-links``, ``--index-url``, or pip's own configuration).

The base is ``python:3.11-slim`` where a registry is reachable, or, with ``bootstrap_base``, a
local Debian bookworm (whose python3 is 3.11) made with ``debootstrap`` and ``docker import``.

A content hash of what goes into the image (Dockerfile, base image id, pinned versions) is stored
in a label: when the image under the name already carries the hash, a build returns at once.
"""

from __future__ import annotations

import hashlib
import importlib.metadata
import io
import json
import os
import platform
import shutil
import subprocess
import sys
import tarfile
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable

#: Label on every container we start (the sweep looks for it) and on the images we build.
CONTAINER_LABEL = "attention-grader"
HASH_LABEL = "attention-grader.content-hash"
BASE_LABEL = "attention-grader.base"
NUMPY_LABEL = "attention-grader.numpy"
TORCH_LABEL = "attention-grader.torch"
RECIPE_LABEL = "attention-grader.base-recipe"

DEFAULT_IMAGE = "attention-grader-sandbox:latest"
#: Environment variable naming another image to build and run.
IMAGE_ENV = "GRADER_DOCKER_IMAGE"
DEFAULT_BASE = "python:3.11-slim"
BOOTSTRAP_BASE = "attention-grader-base:bookworm"
DEBIAN_SUITE = "bookworm"
DEBIAN_MIRROR = "http://deb.debian.org/debian"
#: python3-venv brings python3-pip-whl, so ``python3 -m venv`` gives a venv with pip.
DEBOOTSTRAP_INCLUDE = ("python3", "python3-venv")
TORCH_VERSION = "2.13.0"
DOCKERFILE = Path(__file__).resolve().parent / "docker_image" / "Dockerfile"
#: Written at build time inside the image: the python, numpy and torch versions it holds.
VERSIONS_FILE = "/opt/venv/grader-versions.json"
#: Platform of the image's wheels when the host's differs (pip then resolves for the image).
IMAGE_PLATFORMS = ("manylinux_2_28_x86_64", "manylinux_2_17_x86_64", "manylinux2014_x86_64")


class ImageBuildError(RuntimeError):
    """The image (or its base, or its wheelhouse) could not be made; the message says what to do."""


def image_name() -> str:
    """The sandbox image's name (``$GRADER_DOCKER_IMAGE`` or ``attention-grader-sandbox:latest``)."""
    return os.environ.get(IMAGE_ENV) or DEFAULT_IMAGE


def host_numpy_version() -> str:
    """The numpy version installed on the host: the image pins the same one."""
    return importlib.metadata.version("numpy")


def default_wheelhouse() -> Path:
    """Where downloaded wheels are kept between builds (``$XDG_CACHE_HOME/attention-grader/wheels``)."""
    cache = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return Path(cache) / "attention-grader" / "wheels"


@dataclass(frozen=True)
class BuildOptions:
    """What ``build_image`` builds, and from where.

    Attributes:
        image: name (``repo:tag``) of the image to build.
        bootstrap_base: make the base locally with debootstrap instead of using ``base``.
        base: base image when not bootstrapping (pulled if absent).
        numpy: numpy version to pin (default: the host's).
        torch: torch version to pin.
        find_links: extra places pip looks for wheels (folders or URLs).
        index_url: package index pip uses instead of its configured one.
        wheelhouse: folder the wheels are downloaded to and kept in.
        mirror: Debian mirror for debootstrap.
        force: rebuild even when the image is current.
    """

    image: str = field(default_factory=image_name)
    bootstrap_base: bool = False
    base: str = DEFAULT_BASE
    numpy: str = field(default_factory=host_numpy_version)
    torch: str = TORCH_VERSION
    find_links: tuple[str, ...] = ()
    index_url: str | None = None
    wheelhouse: Path = field(default_factory=default_wheelhouse)
    mirror: str = DEBIAN_MIRROR
    force: bool = False


@dataclass(frozen=True)
class BuildResult:
    """What a build did.

    Attributes:
        image: the image's name.
        image_id: its id (``sha256:...``).
        content_hash: the hash stored in its label.
        built: False when the image was already current and nothing was built.
        base: the base image used.
        seconds: how long the command took.
    """

    image: str
    image_id: str
    content_hash: str
    built: bool
    base: str
    seconds: float


def _client():
    import docker  # noqa: PLC0415 - only commands that talk to the engine pay for the SDK

    try:
        client = docker.from_env(timeout=600)
        client.ping()
    except Exception as exc:  # noqa: BLE001 - any failure here means "no engine"
        raise ImageBuildError(f"no Docker engine is reachable: {exc}") from exc
    return client


def _get_image(client, name: str):
    from docker.errors import ImageNotFound  # noqa: PLC0415

    try:
        return client.images.get(name)
    except ImageNotFound:
        return None


def content_hash(dockerfile: bytes, base_id: str, numpy: str, torch: str) -> str:
    """Hash of everything that decides the image's content (the runner is not baked in)."""
    h = hashlib.sha256()
    for part in (dockerfile, base_id.encode(), f"numpy=={numpy}".encode(), f"torch=={torch}".encode()):
        h.update(len(part).to_bytes(8, "big") + part)
    return h.hexdigest()


def _recipe_hash(mirror: str) -> str:
    recipe = f"debootstrap --variant=minbase --include={','.join(DEBOOTSTRAP_INCLUDE)} {DEBIAN_SUITE} {mirror}"
    return hashlib.sha256(recipe.encode()).hexdigest()[:16]


def _unmount_below(path: Path) -> None:
    """Unmount anything a failed debootstrap left mounted under ``path`` (before deleting it)."""
    try:
        mounts = Path("/proc/mounts").read_text().splitlines()
    except OSError:
        return
    inside = sorted((m.split()[1] for m in mounts if len(m.split()) > 1
                     and m.split()[1].startswith(str(path) + "/")), key=len, reverse=True)
    for target in inside:
        subprocess.run(["umount", "-l", target], check=False)


def bootstrap_base(client, mirror: str = DEBIAN_MIRROR, *, progress: Callable[[str], None] = print,
                   force: bool = False) -> str:
    """Make ``attention-grader-base:bookworm`` with debootstrap and ``docker import`` unless it exists.

    Returns:
        The base image's name.

    Raises:
        ImageBuildError: not root, no debootstrap, or debootstrap/import failed.
    """
    recipe = _recipe_hash(mirror)
    existing = _get_image(client, BOOTSTRAP_BASE)
    if existing is not None and existing.labels.get(RECIPE_LABEL) == recipe and not force:
        progress(f"base {BOOTSTRAP_BASE} is current ({existing.short_id})")
        return BOOTSTRAP_BASE
    if shutil.which("debootstrap") is None:
        raise ImageBuildError("--bootstrap-base needs debootstrap (apt-get install debootstrap)")
    if os.geteuid() != 0:
        raise ImageBuildError("--bootstrap-base needs root (debootstrap creates device files and chroots)")
    workdir = Path(tempfile.mkdtemp(prefix="grade-rootfs-", dir="/var/tmp" if os.path.isdir("/var/tmp") else None))
    rootfs = workdir / "rootfs"
    try:
        progress(f"debootstrap {DEBIAN_SUITE} from {mirror} (about a minute)")
        proc = subprocess.run(["debootstrap", "--variant=minbase", f"--include={','.join(DEBOOTSTRAP_INCLUDE)}",
                               DEBIAN_SUITE, str(rootfs), mirror], capture_output=True, text=True, check=False)
        if proc.returncode != 0:
            tail = (proc.stdout + proc.stderr).strip().splitlines()[-15:]
            raise ImageBuildError("debootstrap failed:\n" + "\n".join(tail))
        for junk in ("var/cache/apt/archives", "var/lib/apt/lists"):
            for entry in (rootfs / junk).glob("*"):
                if entry.is_file():
                    entry.unlink()
        for entry in (rootfs / "var/cache/apt").glob("*.bin"):
            entry.unlink()
        progress(f"docker import -> {BOOTSTRAP_BASE}")
        tar = subprocess.Popen(["tar", "-C", str(rootfs), "--numeric-owner", "-c", "."], stdout=subprocess.PIPE)
        repository, tag = BOOTSTRAP_BASE.rsplit(":", 1)
        try:
            client.api.import_image(
                src=iter(lambda: tar.stdout.read(1 << 20), b""), repository=repository, tag=tag,
                stream_src=True, changes=[
                    "ENV PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin LANG=C.UTF-8",
                    'CMD ["/bin/bash"]',
                    f"LABEL {RECIPE_LABEL}={recipe}",
                ])
        finally:
            tar.stdout.close()
            if tar.wait() != 0:
                raise ImageBuildError("tar of the bootstrapped root failed")
    finally:
        _unmount_below(rootfs)
        shutil.rmtree(workdir, ignore_errors=True)
    return BOOTSTRAP_BASE


def _ensure_base(client, name: str, progress: Callable[[str], None]) -> str:
    if _get_image(client, name) is not None:
        return name
    progress(f"pulling {name}")
    try:
        client.images.pull(name)
    except Exception as exc:  # noqa: BLE001 - no registry, no such tag, ...
        raise ImageBuildError(f"cannot pull the base image {name} ({exc}); on a host without a registry "
                              "use `grade sandbox build --bootstrap-base`") from exc
    return name


def _host_matches_image() -> bool:
    return (sys.implementation.name == "cpython" and sys.version_info[:2] == (3, 11)
            and sys.platform == "linux" and platform.machine() == "x86_64")


def pip_download_command(options: BuildOptions) -> list[str]:
    """The ``pip download`` argv that fills the wheelhouse for ``options``."""
    argv = [sys.executable, "-m", "pip", "download", "--disable-pip-version-check", "--progress-bar", "off",
            "--only-binary=:all:", "--dest", str(options.wheelhouse),
            f"numpy=={options.numpy}", f"torch=={options.torch}"]
    if not _host_matches_image():
        argv += ["--python-version", "3.11", "--implementation", "cp", "--abi", "cp311"]
        for plat in IMAGE_PLATFORMS:
            argv += ["--platform", plat]
    if options.index_url:
        argv += ["--index-url", options.index_url]
    for link in options.find_links:
        argv += ["--find-links", link]
    return argv


def prepare_wheelhouse(options: BuildOptions, progress: Callable[[str], None] = print) -> Path:
    """Download numpy, torch and their dependencies as wheels into ``options.wheelhouse``.

    Raises:
        ImageBuildError: pip could not find or fetch a wheel.
    """
    options.wheelhouse.mkdir(parents=True, exist_ok=True)
    argv = pip_download_command(options)
    progress(f"pip download numpy=={options.numpy} torch=={options.torch} -> {options.wheelhouse}")
    proc = subprocess.run(argv, capture_output=True, text=True, check=False)
    if proc.returncode != 0:
        tail = (proc.stdout + proc.stderr).strip().splitlines()[-15:]
        raise ImageBuildError("pip download failed (point it at wheels with --find-links or --index-url):\n"
                              + "\n".join(tail))
    return options.wheelhouse


def _fill_context(context: Path, wheelhouse: Path) -> None:
    shutil.copyfile(DOCKERFILE, context / "Dockerfile")
    wheels = context / "wheels"
    wheels.mkdir()
    for wheel in wheelhouse.glob("*.whl"):
        try:
            os.link(wheel, wheels / wheel.name)
        except OSError:
            shutil.copyfile(wheel, wheels / wheel.name)


def build_image(options: BuildOptions | None = None, *, client=None,
                progress: Callable[[str], None] = print) -> BuildResult:
    """Build the sandbox image unless the one under ``options.image`` is current.

    Raises:
        ImageBuildError: no engine, no base, no wheels, or the build failed.
    """
    options = options or BuildOptions()
    started = time.monotonic()
    client = client or _client()
    base = (bootstrap_base(client, options.mirror, progress=progress) if options.bootstrap_base
            else _ensure_base(client, options.base, progress))
    base_id = client.images.get(base).id
    digest = content_hash(DOCKERFILE.read_bytes(), base_id, options.numpy, options.torch)
    existing = _get_image(client, options.image)
    if existing is not None and existing.labels.get(HASH_LABEL) == digest and not options.force:
        progress(f"{options.image} is current ({existing.short_id}); nothing to build")
        return BuildResult(options.image, existing.id, digest, False, base, time.monotonic() - started)

    prepare_wheelhouse(options, progress)
    progress(f"docker build --network none -t {options.image} (base {base})")
    with tempfile.TemporaryDirectory(prefix="grade-build-") as tmp:
        context = Path(tmp)
        _fill_context(context, options.wheelhouse)
        labels = {CONTAINER_LABEL: "1", HASH_LABEL: digest, BASE_LABEL: base,
                  NUMPY_LABEL: options.numpy, TORCH_LABEL: options.torch}
        try:
            for chunk in client.api.build(path=str(context), tag=options.image, rm=True, forcerm=True,
                                          network_mode="none", decode=True, labels=labels,
                                          buildargs={"BASE": base, "NUMPY_VERSION": options.numpy,
                                                     "TORCH_VERSION": options.torch}):
                if "error" in chunk:
                    raise ImageBuildError(f"docker build failed: {chunk['error'].strip()}")
                line = chunk.get("stream", "").rstrip()
                if line.startswith("Step ") or line.startswith("{"):
                    progress(line)
        except ImageBuildError:
            raise
        except Exception as exc:  # noqa: BLE001 - the engine's errors, whatever their type
            raise ImageBuildError(f"docker build failed: {exc}") from exc
    image = client.images.get(options.image)
    if existing is not None and existing.id != image.id:
        try:  # the previous image is now untagged; it holds about a gigabyte
            client.images.remove(existing.id)
        except Exception:  # noqa: BLE001 - still used by a container, or shared layers: keep it
            pass
    return BuildResult(options.image, image.id, digest, True, base, time.monotonic() - started)


def image_versions(client, image) -> dict | None:
    """The python/numpy/torch versions recorded inside ``image`` (read without starting it)."""
    container = client.containers.create(image.id, ["true"], network_mode="none",
                                         labels={CONTAINER_LABEL: "1",
                                                 "attention-grader.deadline": f"{time.time() + 300:.0f}"})
    try:
        chunks, _stat = container.get_archive(VERSIONS_FILE)
        with tarfile.open(fileobj=io.BytesIO(b"".join(chunks))) as tf:
            member = tf.extractfile(tf.getmembers()[0])
            return json.loads(member.read().decode("utf-8"))
    except Exception:  # noqa: BLE001 - an image of another making: versions unknown
        return None
    finally:
        container.remove(force=True)


@dataclass
class SandboxStatus:
    """What ``grade sandbox status`` reports.

    Attributes:
        engine: the engine's version, or None when none is reachable.
        engine_error: why no engine is reachable.
        image: the image's name.
        image_id: its id, or None when it is not built.
        current: whether it matches what ``grade sandbox build`` would build now (None: unknown).
        versions: python/numpy/torch inside the image.
        labels: the image's labels.
        auto: what ``--sandbox auto`` picks, in words.
    """

    engine: str | None = None
    engine_error: str | None = None
    image: str = field(default_factory=image_name)
    image_id: str | None = None
    current: bool | None = None
    versions: dict | None = None
    labels: dict = field(default_factory=dict)
    auto: str = ""

    def to_json(self) -> dict:
        """As a JSON-able dict."""
        return dict(self.__dict__)


def sandbox_status() -> SandboxStatus:
    """Probe the engine and the image, and say what ``--sandbox auto`` would pick."""
    from grader.sandbox import SandboxUnavailable, select_sandbox  # noqa: PLC0415 - avoids an import cycle

    status = SandboxStatus()
    try:
        client = _client()
        status.engine = client.version().get("Version", "unknown")
    except ImageBuildError as exc:
        status.engine_error = str(exc)
        client = None
    if client is not None:
        image = _get_image(client, status.image)
        if image is not None:
            status.image_id = image.id
            status.labels = dict(image.labels or {})
            status.versions = image_versions(client, image)
            base_name = status.labels.get(BASE_LABEL)
            base = _get_image(client, base_name) if base_name else None
            if base is not None and HASH_LABEL in status.labels:
                status.current = status.labels[HASH_LABEL] == content_hash(
                    DOCKERFILE.read_bytes(), base.id, host_numpy_version(), TORCH_VERSION)
    try:
        _backend, status.auto = select_sandbox("auto")
    except SandboxUnavailable as exc:
        status.auto = f"nothing ({exc})"
    return status
