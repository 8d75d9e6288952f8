"""Host side of the result channel: split the byte stream into frames and decode them safely.

Nothing here imports, unpickles, evaluates or executes what the sandbox sent. A step frame's JSON
index gives each array's dtype string and shape, and its zip member holds the raw bytes: the host
checks the dtype (a numeric kind only, from a short whitelist pattern), the shape (non-negative
integers), the size cap and that the byte count is exactly ``prod(shape) * itemsize``, then rebuilds
the array with ``np.frombuffer`` (no ``.npy`` header, so no ``ast.literal_eval`` of sandbox text).
Zip member sizes are checked against the caps too, so a forged index declaring a huge shape or an
archive that inflates cannot exhaust the host's memory.
"""

from __future__ import annotations

import io
import json
import math
import re
import zipfile
from dataclasses import dataclass, field

import numpy as np

from grader.run.runner import FRAME_MAGIC

#: Largest single array the host accepts from the sandbox (bytes).
MAX_ARRAY_BYTES = 64 * 1024 * 1024
#: Largest JSON document the host accepts in one frame (bytes).
MAX_JSON_BYTES = 1024 * 1024
ALLOWED_KINDS = "biufc"  # bool, int, uint, float, complex: never object, void or strings
#: Most dimensions an array may declare (NumPy's own limit is 64).
MAX_NDIM = 32
#: The dtype strings the host parses at all (``arr.dtype.str``: byte order, kind, item size).
_DTYPE_TEXT = re.compile(r"[<>|=]?[biufc][0-9]{1,2}")


class ChannelError(ValueError):
    """The result stream is malformed (a frame is truncated, oversized or not decodable)."""


@dataclass
class StepResult:
    """One step's report (a JSON dict written by the runner) and the arrays it returned."""

    report: dict
    arrays: dict[str, np.ndarray] = field(default_factory=dict)
    #: CPU seconds the host saw the sandbox spend between the previous frame and this one (set by
    #: the host, ``grader.sandbox.observe``; never read from the frame); None when not observed.
    observed_cpu_seconds: float | None = None
    #: Peak bytes of the sandbox's memory above its usage at the previous frame's arrival, up to this
    #: frame's (host-side, ``grader.sandbox.observe``); None when not observed.
    observed_peak_bytes: int | None = None
    #: The host could read the sandbox's memory in this run but did not see this step's window
    #: exactly: the runner did not wait for the host at the step's boundaries (the frame handshake).
    observed_peak_missed: bool = False


@dataclass
class RunResults:
    """Everything decoded from one sandbox run's result channel.

    Attributes:
        started: the runner's ``started`` frame (it was ready and about to import the submission), or
            None: the runner never got that far, a grader fault.
        import_report: the runner's ``import`` frame (``ok``, ``exception``, ``seconds``), or None if
            the process died before importing the submission.
        steps: step results by step id, in the order they arrived.
        done: whether the runner reached its final frame (False after a crash or a timeout).
        forbidden_imports: forbidden modules the submission tried to import.
        problems: why some bytes could not be decoded (a cut stream, a bad frame).
        frame_ends: ``(kind, step id or "", offset)`` of each decoded frame in stream order, where
            ``offset`` is the byte count of the stream at the frame's last byte (for the host's
            CPU-time observation, ``grader.sandbox.observe``).
    """

    started: dict | None = None
    import_report: dict | None = None
    steps: dict[str, StepResult] = field(default_factory=dict)
    done: bool = False
    forbidden_imports: list[str] = field(default_factory=list)
    problems: list[str] = field(default_factory=list)
    frame_ends: list[tuple[str, str, int]] = field(default_factory=list)


def _load_json(payload: bytes) -> dict:
    if len(payload) > MAX_JSON_BYTES:
        raise ChannelError(f"JSON frame of {len(payload)} bytes exceeds {MAX_JSON_BYTES}")
    try:
        value = json.loads(payload.decode("utf-8"))
    except RecursionError as exc:  # deeply nested JSON: not a RuntimeError the host should die of
        raise ChannelError("JSON frame is nested too deeply") from exc
    if not isinstance(value, dict):
        raise ChannelError("JSON frame is not an object")
    return value


def decode_array(raw: bytes, entry, max_bytes: int = MAX_ARRAY_BYTES) -> np.ndarray:
    """Rebuild one array from its raw bytes and its index entry ``{"dtype": str, "shape": [int]}``.

    Args:
        raw: the array's bytes, C order (the zip member).
        entry: the frame's index entry of the array (untrusted JSON).
        max_bytes: the largest array accepted.

    Returns:
        A new, writable array owning its memory (``np.frombuffer`` then a copy).

    Raises:
        ChannelError: the entry is malformed, the dtype is not numeric (bool, int, uint, float,
            complex), the shape is not a list of at most ``MAX_NDIM`` non-negative integers, the
            declared size exceeds ``max_bytes``, or ``raw`` is not exactly ``prod(shape) * itemsize`` bytes.
    """
    if not isinstance(entry, dict):
        raise ChannelError("array index entry is not an object")
    dtype_text, shape = entry.get("dtype"), entry.get("shape")
    if not isinstance(dtype_text, str) or not _DTYPE_TEXT.fullmatch(dtype_text):
        raise ChannelError(f"array dtype {str(dtype_text)[:40]!r} is not numeric")
    try:
        dtype = np.dtype(dtype_text)
    except TypeError as exc:
        raise ChannelError(f"array dtype {dtype_text!r} is not a dtype") from exc
    if dtype.kind not in ALLOWED_KINDS or dtype.hasobject or dtype.itemsize == 0:
        raise ChannelError(f"array dtype {dtype} is not numeric")
    if (not isinstance(shape, list) or len(shape) > MAX_NDIM
            or not all(isinstance(d, int) and not isinstance(d, bool) and d >= 0 for d in shape)):
        raise ChannelError(f"bad array shape {str(shape)[:80]}")
    nbytes = math.prod(shape) * dtype.itemsize
    if nbytes > max_bytes:
        raise ChannelError(f"array of shape {str(shape)[:80]} and dtype {dtype} ({nbytes} bytes) exceeds {max_bytes}")
    if len(raw) != nbytes:
        raise ChannelError(f"array payload is {len(raw)} bytes, its shape and dtype declare {nbytes}")
    return np.frombuffer(raw, dtype=dtype).reshape(shape).copy()


def decode_step(payload: bytes) -> StepResult:
    """Decode a ``step`` frame (zip of ``report.json`` and raw array members, ``encode_step_frame``).

    Any failure to parse the (untrusted) bytes is a ``ChannelError``: bad CRCs, encrypted or
    compressed members and broken headers never surface as other exceptions on the host.
    """
    try:
        return _decode_step(payload)
    except ChannelError:
        raise
    except Exception as exc:  # noqa: BLE001 - zipfile/zlib/struct raise many types on forged input
        raise ChannelError(f"step frame is malformed: {type(exc).__name__}: {str(exc)[:200]}") from exc


def _decode_step(payload: bytes) -> StepResult:
    try:
        zf = zipfile.ZipFile(io.BytesIO(payload))
    except zipfile.BadZipFile as exc:
        raise ChannelError(f"step frame is not a zip: {exc}") from exc
    with zf:
        infos = {i.filename: i for i in zf.infolist()}
        if "report.json" not in infos:
            raise ChannelError("step frame has no report.json")
        if any(i.compress_type != zipfile.ZIP_STORED or i.flag_bits & 0x1 for i in infos.values()):
            raise ChannelError("step frame has compressed or encrypted members (the runner never writes them)")
        total = sum(i.file_size for i in infos.values())
        if total > len(payload) + 1024:  # stored, never compressed: inflation means forgery
            raise ChannelError("step frame inflates beyond its size")
        meta = _load_json(zf.read("report.json"))
        report, index = meta.get("report"), meta.get("arrays", {})
        if not isinstance(report, dict) or not isinstance(index, dict):
            raise ChannelError("step frame report is malformed")
        arrays = {}
        for key, entry in index.items():
            member = entry.get("member") if isinstance(entry, dict) else None
            if not isinstance(member, str) or member not in infos or infos[member].file_size > MAX_ARRAY_BYTES:
                raise ChannelError(f"array member {str(member)[:80]!r} missing or too large")
            arrays[str(key)] = decode_array(zf.read(member), entry)
    check_step_report(report, arrays)
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
            if kind == "started":
                results.started = _load_json(payload)
            elif kind == "import":
                results.import_report = check_import_report(_load_json(payload))
            elif kind == "step":
                step = decode_step(payload)
                results.steps[str(step.report.get("id"))] = step
                results.frame_ends.append(("step", str(step.report.get("id")), pos))
                results.forbidden_imports = step.report.get("forbidden_imports", [])
            elif kind == "done":
                done = _load_json(payload)
                results.forbidden_imports = _strings(done.get("forbidden_imports", []), "forbidden_imports")
                results.done = True
            else:
                results.problems.append(f"unknown frame kind {kind!r}")
                break
            if kind != "step":
                results.frame_ends.append((kind, "", pos))
        except (ChannelError, ValueError, KeyError) as exc:
            results.problems.append(f"undecodable {kind} frame: {exc}")
            break
    return results


# -- the shape of reports: what the judges read must have the types they expect --------------------
# The runner writes these documents, but the submission shares its process and can write forged
# frames to the channel. A forged frame may cost the candidate their own results; it must never
# make a judge raise (which would read as the grader's fault) or claim a grader fault.

DESCRIPTOR_KINDS = {"none", "array", "scalar", "tuple", "other", "object"}
MAX_DESCRIPTOR_DEPTH = 8


def _fail(what: str) -> None:
    raise ChannelError(f"malformed report: {what}")


def _strings(value, what: str) -> list[str]:
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        _fail(f"{what} is not a list of strings")
    return list(value)


def _check_exception(exc, what: str) -> None:
    if exc is None:
        return
    if not isinstance(exc, dict) or not all(isinstance(exc.get(k, ""), str) for k in ("type", "message", "traceback")):
        _fail(f"{what} is not an exception record")


def _check_descriptor(desc, arrays: dict[str, np.ndarray], depth: int = 0) -> None:
    """Check one output descriptor; an array's ``shape`` and ``dtype`` are reset from the array itself."""
    if not isinstance(desc, dict) or desc.get("kind") not in DESCRIPTOR_KINDS or depth > MAX_DESCRIPTOR_DEPTH:
        _fail("an output descriptor is malformed")
    if not isinstance(desc.get("type", ""), str):
        _fail("an output descriptor's type is not a string")
    kind = desc["kind"]
    if kind == "array":
        arr = arrays.get(desc.get("key")) if isinstance(desc.get("key"), str) else None
        if arr is None:
            _fail("an array descriptor names no array of the frame")
        if not isinstance(desc.get("torch_dtype", ""), str) or not isinstance(desc.get("device", ""), str):
            _fail("an array descriptor's torch dtype or device is not a string")
        desc["shape"], desc["dtype"] = list(arr.shape), str(arr.dtype)
    elif kind == "tuple":
        items = desc.get("items")
        if not isinstance(items, list):
            _fail("a tuple descriptor has no items")
        for item in items:
            _check_descriptor(item, arrays, depth + 1)
    elif kind == "scalar" and not isinstance(desc.get("value"), (str, int, float, bool, type(None))):
        _fail("a scalar descriptor's value is not a scalar")


def _check_printed(printed, what: str) -> None:
    """``printed`` (what the submission printed during a step or the import) is None or
    ``{"text": str, "bytes": int >= 0}``."""
    if printed is None:
        return
    if (not isinstance(printed, dict) or not isinstance(printed.get("text"), str)
            or not isinstance(printed.get("bytes"), int) or isinstance(printed.get("bytes"), bool)
            or printed["bytes"] < 0):
        _fail(f"{what} printed output")


def check_step_report(report: dict, arrays: dict[str, np.ndarray]) -> None:
    """Check the fields of a sandbox step report that the host reads (raises ``ChannelError``)."""
    _check_printed(report.get("printed"), "step")
    if not isinstance(report.get("id"), str) or not isinstance(report.get("ok"), bool):
        _fail("step id or ok flag")
    if "runner_error" in report:
        # the runner readies its instruments before the submission is imported: after that, a
        # "runner error" can only come from a frame the submission forged
        _fail("a step claims a runner error after the runner started cleanly")
    if report.get("seconds") is not None and not isinstance(report["seconds"], (int, float)):
        _fail("seconds is not a number")
    _check_exception(report.get("exception"), "exception")
    _strings(report.get("modified_inputs") or [], "modified_inputs")
    _strings(report.get("forbidden_imports") or [], "forbidden_imports")
    for key in ("ops_seen", "forbidden_ops"):
        _strings(report.get(key) or [], key)
    if report.get("output") is not None:
        _check_descriptor(report["output"], arrays)
    gradients = report.get("gradients")
    if gradients is not None:
        if not isinstance(gradients, dict):
            _fail("gradients is not a mapping")
        for desc in gradients.values():
            _check_descriptor(desc, arrays)
    measure = report.get("measure")
    if measure is not None:
        if not isinstance(measure, dict):
            _fail("measure is not a mapping")
        for key, value in measure.items():
            if key == "device":
                if not isinstance(value, str):
                    _fail("measure.device is not a string")
            elif not isinstance(value, (int, float)) or not math.isfinite(value) or value < 0:
                _fail(f"measure.{key} is not a finite number")


def check_import_report(doc: dict) -> dict:
    """Check the ``import`` frame's fields (raises ``ChannelError``); returns it."""
    if not isinstance(doc.get("ok"), bool):
        _fail("import ok flag")
    _check_exception(doc.get("exception"), "import exception")
    _check_printed(doc.get("printed"), "import")
    _strings(doc.get("forbidden_imports") or [], "forbidden_imports")
    return doc


#: Control characters kept in captured output; every other C0/C1 control (NUL, ESC, ...) is shown
#: escaped, so a submission's output cannot drive the terminal, a JUnit XML file or an HTML report.
_KEPT_CONTROLS = {"\n", "\t"}
_CONTROL_MAP = {c: f"\\x{c:02x}" for c in [*range(0x00, 0x20), 0x7F, *range(0x80, 0xA0)]
                if chr(c) not in _KEPT_CONTROLS}
_CONTROL_MAP.update({c: f"\\u{c:04x}" for c in [*range(0x202A, 0x202F), *range(0x2066, 0x206A)]})  # bidi


def display_text(raw: bytes) -> str:
    """Captured output as safe text: UTF-8 with replacement, control characters escaped."""
    return raw.decode("utf-8", errors="replace").translate(_CONTROL_MAP)
