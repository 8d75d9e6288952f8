"""Host side of the result channel: split the byte stream into frames and decode them safely.

Nothing here imports, unpickles or executes what the sandbox sent. Arrays are read with
``np.load(..., allow_pickle=False)`` only after their ``.npy`` header (shape, dtype) and the zip
member sizes have been checked against byte caps, so a forged header declaring a huge shape or an
archive that inflates cannot exhaust the host's memory.
"""

from __future__ import annotations

import io
import json
import zipfile
from dataclasses import dataclass, field

import numpy as np

from grader.runner import FRAME_MAGIC

#: Largest single array the host accepts from the sandbox (bytes).
MAX_ARRAY_BYTES = 64 * 1024 * 1024
#: Largest JSON document the host accepts in one frame (bytes).
MAX_JSON_BYTES = 1024 * 1024
ALLOWED_KINDS = "biufc"  # bool, int, uint, float, complex: never object, void or strings


class ChannelError(ValueError):
    """The result stream is malformed (a frame is truncated, oversized or not decodable)."""


@dataclass
class StepResult:
    """One step's report (a JSON dict written by the runner) and the arrays it returned."""

    report: dict
    arrays: dict[str, np.ndarray] = field(default_factory=dict)


@dataclass
class RunResults:
    """Everything decoded from one sandbox run's result channel.

    Attributes:
        import_report: the runner's ``import`` frame (``ok``, ``exception``, ``seconds``), or None if
            the process died before importing the submission.
        steps: step results by step id, in the order they arrived.
        done: whether the runner reached its final frame (False after a crash or a timeout).
        forbidden_imports: forbidden modules the submission tried to import.
        problems: why some bytes could not be decoded (a cut stream, a bad frame).
    """

    import_report: dict | None = None
    steps: dict[str, StepResult] = field(default_factory=dict)
    done: bool = False
    forbidden_imports: list[str] = field(default_factory=list)
    problems: list[str] = field(default_factory=list)


def _load_json(payload: bytes) -> dict:
    if len(payload) > MAX_JSON_BYTES:
        raise ChannelError(f"JSON frame of {len(payload)} bytes exceeds {MAX_JSON_BYTES}")
    value = json.loads(payload.decode("utf-8"))
    if not isinstance(value, dict):
        raise ChannelError("JSON frame is not an object")
    return value


def load_npy_checked(raw: bytes, max_bytes: int = MAX_ARRAY_BYTES) -> np.ndarray:
    """Decode one ``.npy`` blob after checking its header: numeric dtype, size within ``max_bytes``.

    Raises:
        ChannelError: bad magic, object/structured dtype, declared size over the cap, or a payload
            shorter than the header declares.
    """
    fh = io.BytesIO(raw)
    try:
        major, _minor = np.lib.format.read_magic(fh)
        if major == 1:
            shape, fortran, dtype = np.lib.format.read_array_header_1_0(fh)
        elif major in (2, 3):
            shape, fortran, dtype = np.lib.format.read_array_header_2_0(fh)
        else:
            raise ChannelError(f"unsupported .npy version {major}")
    except ChannelError:
        raise
    except Exception as exc:  # numpy raises ValueError for malformed headers
        raise ChannelError(f"malformed .npy header: {exc}") from exc
    if dtype.kind not in ALLOWED_KINDS or dtype.hasobject:
        raise ChannelError(f"array dtype {dtype} is not numeric")
    count = 1
    for dim in shape:
        if not isinstance(dim, int) or dim < 0:
            raise ChannelError(f"bad array shape {shape}")
        count *= dim
    nbytes = count * dtype.itemsize
    if nbytes > max_bytes:
        raise ChannelError(f"array of shape {shape} and dtype {dtype} ({nbytes} bytes) exceeds {max_bytes}")
    if len(raw) - fh.tell() < nbytes:
        raise ChannelError("array payload is shorter than its header declares")
    fh.seek(0)
    arr = np.load(fh, allow_pickle=False)
    return np.array(arr, copy=True, subok=False)


def decode_step(payload: bytes) -> StepResult:
    """Decode a ``step`` frame (zip of ``report.json`` and ``.npy`` members)."""
    try:
        zf = zipfile.ZipFile(io.BytesIO(payload))
    except zipfile.BadZipFile as exc:
        raise ChannelError(f"step frame is not a zip: {exc}") from exc
    with zf:
        infos = {i.filename: i for i in zf.infolist()}
        if "report.json" not in infos:
            raise ChannelError("step frame has no report.json")
        total = sum(i.file_size for i in infos.values())
        if total > len(payload) + 1024:  # stored, never compressed: inflation means forgery
            raise ChannelError("step frame inflates beyond its size")
        meta = _load_json(zf.read("report.json"))
        report, index = meta.get("report"), meta.get("arrays", {})
        if not isinstance(report, dict) or not isinstance(index, dict):
            raise ChannelError("step frame report is malformed")
        arrays = {}
        for key, member in index.items():
            if member not in infos or infos[member].file_size > MAX_ARRAY_BYTES + 4096:
                raise ChannelError(f"array member {member!r} missing or too large")
            arrays[str(key)] = load_npy_checked(zf.read(member))
    return StepResult(report=report, arrays=arrays)


def decode_stream(data: bytes, *, truncated: bool = False) -> RunResults:
    """Split a result stream into frames and decode them.

    Args:
        data: the bytes read from the channel (already capped by the reader).
        truncated: the reader stopped at its cap; the last frame is then expected to be cut.

    Returns:
        The decoded results; decoding stops at the first malformed frame and records why.
    """
    results = RunResults()
    pos = 0
    while pos < len(data):
        start = data.find(FRAME_MAGIC, pos)
        if start < 0:
            break
        line_end = data.find(b"\n", start, start + 128)
        if line_end < 0:
            results.problems.append("frame header is cut or malformed")
            break
        try:
            _magic, kind, size_text = data[start:line_end].decode("ascii").split(" ")
            size = int(size_text)
        except (ValueError, UnicodeDecodeError):
            results.problems.append("frame header is malformed")
            break
        payload = data[line_end + 1: line_end + 1 + size]
        if len(payload) < size:
            results.problems.append("result stream was cut" + (" at its size cap" if truncated else ""))
            break
        pos = line_end + 1 + size
        try:
            if kind == "import":
                results.import_report = _load_json(payload)
            elif kind == "step":
                step = decode_step(payload)
                results.steps[str(step.report.get("id"))] = step
                results.forbidden_imports = list(step.report.get("forbidden_imports", []))
            elif kind == "done":
                done = _load_json(payload)
                results.forbidden_imports = list(done.get("forbidden_imports", []))
                results.done = True
            else:
                results.problems.append(f"unknown frame kind {kind!r}")
                break
        except (ChannelError, ValueError, KeyError) as exc:
            results.problems.append(f"undecodable {kind} frame: {exc}")
            break
    return results
