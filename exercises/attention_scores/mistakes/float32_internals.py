"""float64 inputs came out as float32 numbers (every value of the output is exactly a float32 number, right only to float32 precision): the computation ran in float32 and its result was cast back to float64; compute float64 input in float64 throughout.

Must fail: float64
"""
PATCH = [('    d_k = query.shape[-1]\n',
          '    d_k = query.shape[-1]\n    dtype = query.dtype\n    query, key = (np.asarray(t, np.float32) if t.dtype == np.float64 else t for t in (query, key))\n'),
         ('    return _softmax_last(scores).astype(query.dtype, copy=False)',
          '    return _softmax_last(scores).astype(dtype, copy=False)'),
         ('    output = weights @ value ',
          '    low = np.float32 if value.dtype == np.float64 else value.dtype\n    output = (weights.astype(low) @ value.astype(low)).astype(value.dtype) ')]

REPLAY_ERROR_RATIO = 10.0  # float32 rounding differs between equally valid formulations (grader.judge.mistakes)
REPLAY_EVIDENCE = "float32_values"  # every value a float32 number: an epsilon of 1e-7 or an approximate erf errs as much
