"""float64 inputs came out as float32 numbers (every value of the output is exactly a float32 number, right only to float32 precision): the computation ran in float32 and its result was cast back to float64; compute float64 input in float64 throughout.

Must fail: float64
"""
PATCH = [('    p = params\n',
          '    dtype = x.dtype\n    p = params\n    if dtype == np.float64:\n        x, p = x.astype(np.float32), {name: np.asarray(t, np.float32) for name, t in params.items()}\n'),
         ('    return (h + f @ p["W_2"] + p["b_2"]).astype(x.dtype)',
          '    return (h + f @ p["W_2"] + p["b_2"]).astype(dtype)')]

REPLAY_ERROR_RATIO = 10.0  # float32 rounding differs between equally valid formulations (grader.judge.mistakes)
REPLAY_EVIDENCE = "float32_values"  # every value a float32 number: an epsilon of 1e-7 or an approximate erf errs as much
