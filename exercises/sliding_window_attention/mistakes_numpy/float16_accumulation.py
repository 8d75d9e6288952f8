"""float16 inputs came out right only to float16 precision, as when the scores, the softmax and the weighted sum are computed in float16 throughout (rounded to 11 bits): the contract accumulates half precision in float32 and casts the result back.

Must fail: half_precision
"""
PATCH = [
    ('    work = np.dtype(np.float32) if query.dtype == np.float16 else query.dtype',
     '    work = query.dtype'),
]
REPLAY_ERROR_RATIO = 10.0  # two half-precision formulations differ by as much as either differs from the answer (grader.judge.mistakes)
