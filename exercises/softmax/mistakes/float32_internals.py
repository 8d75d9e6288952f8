"""float64 inputs were computed in float32 internally (cast down, then the result cast back to float64): the answer is right only to float32 precision; compute float64 input in float64.

Must fail: float64, dtype_max

Logits near float64's largest value overflow float32 (inf, then NaN): float64's range is lost with its
precision, so `dtype_max` fails too.
"""
PATCH = [('    x = np.asarray(x)\n',
          '    x = np.asarray(x)\n    dtype = x.dtype\n    x = x.astype(np.float32) if dtype == np.float64 else x\n'),
         ('    return out.astype(x.dtype, copy=False)',
          '    return out.astype(dtype, copy=False)')]

REPLAY_ERROR_RATIO = 10.0  # float32 rounding differs between equally valid formulations (grader.judge.mistakes)
