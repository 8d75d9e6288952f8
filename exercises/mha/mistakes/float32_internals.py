"""float64 inputs came out as float32 numbers (every value of the output is exactly a float32 number, right only to float32 precision): the computation ran in float32 and its result was cast back to float64; compute float64 input in float64 throughout.

Must fail: float64
"""
PATCH = [('    B, L_q, D = query.shape\n',
          '    dtype = query.dtype\n    if dtype == torch.float64:\n        query, key, value, W_q, W_k, W_v, W_o = (t.float() for t in (query, key, value, W_q, W_k, W_v, W_o))\n    B, L_q, D = query.shape\n'),
         ('    return y @ W_o ',
          '    return (y @ W_o).to(dtype) ')]

REPLAY_ERROR_RATIO = 10.0  # float32 rounding differs between equally valid formulations (grader.judge.mistakes)
REPLAY_EVIDENCE = "float32_values"  # every value a float32 number: an epsilon of 1e-7 or an approximate erf errs as much
