"""float64 inputs came out right only to float32 precision, as when they are computed in float32 internally (cast down, then the result cast back to float64) or a constant in the computation (the scale, say) is a float32 number: compute float64 input in float64 throughout.

Must fail: float64
"""
PATCH = [('    B, H, L_q, d = q.shape\n',
          '    dtype = q.dtype\n    if dtype == torch.float64:\n        q, k, v = q.float(), k.float(), v.float()\n    B, H, L_q, d = q.shape\n'),
         ('    return torch.where(seen, acc / torch.where(seen, l, torch.ones_like(l)), torch.zeros_like(acc))',
          '    return torch.where(seen, acc / torch.where(seen, l, torch.ones_like(l)), torch.zeros_like(acc)).to(dtype)')]

REPLAY_ERROR_RATIO = 10.0  # float32 rounding differs between equally valid formulations (grader.judge.mistakes)
