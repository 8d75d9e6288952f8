"""the softmax was taken over the query axis (axis -2); each query's weights over the keys (the last axis) sum to 1.

Must fail: values
"""
PATCH = [('m = s.max(axis=-1, keepdims=True)', 'm = s.max(axis=-2, keepdims=True)'), ('tot = e.sum(axis=-1, keepdims=True)', 'tot = e.sum(axis=-2, keepdims=True)')]
