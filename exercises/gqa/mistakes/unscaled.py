"""the scores were not scaled by 1/sqrt(d_k): the softmax saturates as d_k grows.

Must fail: values
"""
PATCH = [("* (1.0 / math.sqrt(d_k))", "")]
