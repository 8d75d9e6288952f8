"""float64 inputs came out as float32 numbers (every value of the output is exactly a float32 number, right only to float32 precision): the computation ran in float32 and its result was cast back to float64; compute float64 input in float64 throughout.

Must fail: float64
"""
PATCH = [('    B, H, L_q, d = q.shape\n',
          '    dtype = q.dtype\n    if dtype == torch.float64:\n        q, k, v = q.float(), k.float(), v.float()\n    B, H, L_q, d = q.shape\n'),
         ('    return torch.where(seen, acc / torch.where(seen, l, torch.ones_like(l)), torch.zeros_like(acc))',
          '    return torch.where(seen, acc / torch.where(seen, l, torch.ones_like(l)), torch.zeros_like(acc)).to(dtype)')]

REPLAY_ERROR_RATIO = 10.0  # float32 rounding differs between equally valid formulations (grader.judge.mistakes)
REPLAY_EVIDENCE = "float32_values"  # every value a float32 number: an epsilon of 1e-7 or an approximate erf errs as much
