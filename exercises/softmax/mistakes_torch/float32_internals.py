"""float64 inputs came out as float32 numbers (every value of the output is exactly a float32 number, right only to float32 precision): the computation ran in float32 and its result was cast back to float64; compute float64 input in float64 throughout.

Must fail: float64, dtype_max

Logits near float64's largest value overflow float32 (inf, then NaN): float64's range is lost with its
precision, so `dtype_max` fails too.
"""
PATCH = [('    m = torch.amax(x, dim=axis, keepdim=True).detach()',
          '    dtype = x.dtype\n    x = x.float() if dtype == torch.float64 else x\n    m = torch.amax(x, dim=axis, keepdim=True).detach()'),
         ('    return torch.where(s > 0, e / safe, torch.zeros_like(e))',
          '    return torch.where(s > 0, e / safe, torch.zeros_like(e)).to(dtype)')]

REPLAY_ERROR_RATIO = 10.0  # float32 rounding differs between equally valid formulations (grader.judge.mistakes)
REPLAY_EVIDENCE = "float32_values"  # every value a float32 number: an epsilon of 1e-7 or an approximate erf errs as much
