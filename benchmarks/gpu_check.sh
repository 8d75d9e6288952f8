#!/usr/bin/env bash
# GPU check (issue 25 item 4): what a machine with a CUDA GPU runs, in under five minutes, from the
# repository's root. That machine has no network and its own CUDA build of torch (2.11, Python
# 3.12): this package is installed over it with --no-deps, and the few wheels it lacks come from a
# carried folder (.whl/, see the device README: `pip download --no-deps --only-binary=:all:
# --python-version 3.12 ... -d .whl NAME==VERSION` here, `.whl` named in carry there). The image's
# package list (KINDS.md, 2026-11-17) lacks, of this package's dependencies: jsonschema (with
# referencing, jsonschema-specifications, rpds-py), docker, nbformat (fastjsonschema, traitlets,
# jupyter-core, platformdirs), copydetect, fastapi, uvicorn, python-multipart, sqlalchemy, alembic;
# which of them a grading imports is not yet checked on that machine (no GPU was lent to the
# session that wrote this): the script stops with "does not import" when one is missing.
#
#   bash benchmarks/gpu_check.sh [OUT_DIR]      # GPU_CHECK_SAMPLES=N samples per torch exercise (2)
#
# It runs: (1) tests/test_gpu.py; (2) one grading per torch exercise's reference and N samples in
# the process sandbox with CUDA visible, the device recorded in each scorecard; (3) the same with
# CUDA hidden (CUDA_VISIBLE_DEVICES=), in parallel; (4) a comparison: every probe verdict on the GPU
# equal to the CPU one, and the GPU run's scorecards naming a cuda device. Without CUDA it runs
# what it can (the GPU tests skip with their reason, the CPU gradings) and says so; exit 0.
set -u -o pipefail
cd "$(dirname "$0")/.."
OUT=${1:-${OUT:-/tmp/gpu-check}}
mkdir -p "$OUT"
PY=${PYTHON:-python3}

if [ -d .whl ] && ls .whl/*.whl >/dev/null 2>&1; then
  "$PY" -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl \
    || { echo "gpu_check: installing the carried wheels failed"; exit 2; }
  export PYTHONPATH=/tmp/site${PYTHONPATH:+:$PYTHONPATH}
fi
# importable from any folder (a script's sys.path[0] is its own folder, not the repository's root)
if ! (cd / && "$PY" -c "import grader") 2>/dev/null; then
  "$PY" -m pip install -q --no-deps --no-build-isolation --no-index -e . >"$OUT/pip.log" 2>&1 \
    && (cd / && "$PY" -c "import grader") 2>/dev/null \
    || export PYTHONPATH=$PWD${PYTHONPATH:+:$PYTHONPATH}   # no setuptools there: the source tree itself
fi
"$PY" -c "import grader, numpy, torch; print('grader', grader.__version__, 'numpy', numpy.__version__, 'torch', torch.__version__)" \
  || { echo "gpu_check: the grader does not import here (a missing wheel? see above)"; exit 2; }
HAS_CUDA=$("$PY" -c "import torch; print(int(torch.cuda.is_available()))")
[ "$HAS_CUDA" = 1 ] && "$PY" -c "import torch; print('cuda:', torch.cuda.get_device_name(0))" \
  || echo "gpu_check: no CUDA device here: the GPU tests skip and only the CPU gradings run"

status=0
echo "== tests/test_gpu.py"
"$PY" -m pytest -q -p no:cacheprovider -n 0 -rs tests/test_gpu.py 2>&1 | tee "$OUT/test_gpu.log" | tail -8 || status=1

echo "== gradings (process sandbox), GPU and CPU in parallel"
SAMPLES=${GPU_CHECK_SAMPLES:-2}
export GRADER_CACHE_DIR=$OUT/cache   # device is part of every cache key; a fresh cache measures both
CUDA_VISIBLE_DEVICES= "$PY" benchmarks/gpu_check.py "$OUT/cpu.json" --samples "$SAMPLES" >"$OUT/cpu.log" 2>&1 &
cpu_pid=$!
if [ "$HAS_CUDA" = 1 ]; then   # CUDA probes are opt-in (grade.probe_device)
  GRADER_PROBE_DEVICE=cuda "$PY" benchmarks/gpu_check.py "$OUT/gpu.json" --samples "$SAMPLES" >"$OUT/gpu.log" 2>&1 || status=1
fi
wait "$cpu_pid" || status=1

"$PY" - "$OUT" "$HAS_CUDA" <<'PYEOF' || status=1
import json, sys
from pathlib import Path
out, has_cuda = Path(sys.argv[1]), sys.argv[2] == "1"
cpu = {r["file"]: r for r in json.loads((out / "cpu.json").read_text())}
print(f"cpu: {len(cpu)} gradings, devices {sorted({str(r['device']) for r in cpu.values()})}")
if not has_cuda:
    print("gpu: skipped (no CUDA device)")
    sys.exit(0)
gpu = {r["file"]: r for r in json.loads((out / "gpu.json").read_text())}
bad = 0
uncharged = 0
for f, g in gpu.items():
    c = cpu.get(f)
    # a probe the GPU could not run because the file builds CPU tensors is skipped, not charged: not comparable
    left = {k: v for k, v in g["probes"].items() if k not in g.get("mismatch", [])}
    same = c is not None and left == {k: v for k, v in c["probes"].items() if k in left}
    on_cuda = str(g["device"]).startswith("cuda")
    bad += not (same and on_cuda)
    uncharged += bool(g.get("mismatch"))
    note = f" (device mismatch, skipped uncharged: {g['mismatch']})" if g.get("mismatch") else ""
    print(f"{'ok ' if same and on_cuda else 'BAD'} {f}: device {g['device']}; probes gpu {g['probes']} cpu {c and c['probes']}{note}")
    if not same:
        for side, row in (("gpu", g), ("cpu", c or {})):
            for check, text in (row.get("why") or {}).items():
                print(f"    {side} {check}: {text}")
print(f"gpu: {len(gpu)} gradings, {bad} differing or not on cuda, {uncharged} with a probe skipped on a device mismatch")
sys.exit(1 if bad else 0)
PYEOF
echo "gpu_check: $([ $status = 0 ] && echo passed || echo FAILED)"
exit $status
