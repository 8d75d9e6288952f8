"""float64 inputs came out right only to float32 precision, as when they are computed in float32 internally (cast down, then the result cast back to float64) or a constant in the computation (the scale, say) is a float32 number: compute float64 input in float64 throughout.

Must fail: float64
"""
PATCH = [('    B, H, L_q, d = q.shape\n',
          '    dtype = q.dtype\n    if dtype == np.float64:\n        q, k, v = (np.asarray(t, np.float32) for t in (q, k, v))\n    B, H, L_q, d = q.shape\n'),
         ('    return out.astype(q.dtype)',
          '    return out.astype(dtype)')]

REPLAY_ERROR_RATIO = 10.0  # float32 rounding differs between equally valid formulations (grader.judge.mistakes)
