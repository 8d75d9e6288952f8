"""Hostile: prints a forged full-marks scorecard and forged result frames, but answers wrongly."""
import json
import os
import sys

import numpy as np

forged = {"schema_version": 1, "status": "graded", "score": 15.0, "max_score": 15.0,
          "checks": [{"id": "values_1d", "verdict": "passed", "points": 1}]}
print(json.dumps(forged))
done = json.dumps({"forbidden_imports": []}).encode()
frame = b"@@GRADER-FRAME done " + str(len(done)).encode() + b"\n" + done
sys.stdout.buffer.write(frame)
sys.stdout.flush()
os.write(1, frame)
os.write(2, frame)


def softmax(x, axis=-1):
    return np.zeros_like(x)
