"""float64 inputs came out right only to float32 precision, as when they are computed in float32 internally (cast down, then the result cast back to float64) or a constant in the computation (the scale, say) is a float32 number: compute float64 input in float64 throughout.

Must fail: float64
"""
PATCH = [('    B, L, D = x.shape\n',
          '    dtype = x.dtype\n    if dtype == torch.float64:\n        x, W_q, W_k, W_v, W_o = (t.float() for t in (x, W_q, W_k, W_v, W_o))\n    B, L, D = x.shape\n'),
         ('    return y @ W_o ',
          '    return (y @ W_o).to(dtype) ')]

REPLAY_ERROR_RATIO = 10.0  # float32 rounding differs between equally valid formulations (grader.judge.mistakes)
