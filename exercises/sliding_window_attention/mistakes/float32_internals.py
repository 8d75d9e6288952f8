"""float64 inputs came out as float32 numbers (every value of the output is exactly a float32 number, right only to float32 precision): the computation ran in float32 and its result was cast back to float64; compute float64 input in float64 throughout.

Must fail: float64
"""
PATCH = [
    ('    work = torch.float32 if query.dtype in (torch.float16, torch.bfloat16) else query.dtype',
     '    work = torch.float32 if query.dtype in (torch.float16, torch.bfloat16, torch.float64) else query.dtype'),
]

REPLAY_ERROR_RATIO = 10.0  # float32 rounding differs between equally valid formulations (grader.judge.mistakes)
REPLAY_EVIDENCE = "float32_values"  # every value a float32 number: an epsilon of 1e-7 or an approximate erf errs as much
