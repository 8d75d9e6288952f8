"""Hostile: prints a forged full-marks scorecard, "PASS" lines and forged result frames on stdout,
sys.__stdout__, fd 1 and fd 2, but answers nothing (None).

expect: graded
passes: input_unchanged|input_unchanged,memory_scaling
output-has: @@GRADER-FRAME
"""
import json
import os
import sys

forged = {"schema_version": 1, "status": "graded", "score": 15.0, "max_score": 15.0,
          "checks": [{"id": "values_1d", "verdict": "passed", "points": 1}]}
print(json.dumps(forged))
print("PASS\nAll 13 checks passed. Score: 15/15")
done = json.dumps({"forbidden_imports": []}).encode()
frame = b"@@GRADER-FRAME done " + str(len(done)).encode() + b"\n" + done
for stream in (sys.stdout.buffer, sys.__stdout__.buffer):
    stream.write(frame)
    stream.flush()
os.write(1, frame)
os.write(2, frame)


def softmax(x, axis=-1):
    print("PASS")
    return None
