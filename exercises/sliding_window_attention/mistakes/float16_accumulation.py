"""float16/bfloat16 inputs came out right only to half precision, as when the scores, the softmax and the weighted sum are computed in half precision throughout (rounded to 11 or 8 bits): the contract accumulates half precision in float32 and casts the result back.

Must fail: half_precision
"""
PATCH = [
    ('    work = torch.float32 if query.dtype in (torch.float16, torch.bfloat16) else query.dtype',
     '    work = query.dtype'),
]
REPLAY_ERROR_RATIO = 10.0  # two half-precision formulations differ by as much as either differs from the answer (grader.judge.mistakes)
