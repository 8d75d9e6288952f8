"""the scores were not scaled by 1/sqrt(d_k): the output matches softmax(q k^T) over the window.

Must fail: values, non_causal
"""
PATCH = [
    (' * work.type(1.0 / math.sqrt(d_k))',
     ''),
]
