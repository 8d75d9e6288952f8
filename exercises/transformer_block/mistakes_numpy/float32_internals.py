"""float64 inputs came out right only to float32 precision, as when they are computed in float32 internally (cast down, then the result cast back to float64) or a constant in the computation (the scale, say) is a float32 number: compute float64 input in float64 throughout.

Must fail: float64
"""
PATCH = [('    p = params\n',
          '    dtype = x.dtype\n    p = params\n    if dtype == np.float64:\n        x, p = x.astype(np.float32), {name: np.asarray(t, np.float32) for name, t in params.items()}\n'),
         ('    return (h + f @ p["W_2"] + p["b_2"]).astype(x.dtype)',
          '    return (h + f @ p["W_2"] + p["b_2"]).astype(dtype)')]

REPLAY_ERROR_RATIO = 10.0  # float32 rounding differs between equally valid formulations (grader.judge.mistakes)
