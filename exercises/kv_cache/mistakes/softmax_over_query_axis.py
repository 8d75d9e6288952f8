"""the softmax was taken over the query axis (axis -2); each new token's weights over the keys (the last axis) sum to 1.

Must fail: prefill_decode
"""
PATCH = [('att = att - att.max(axis=-1, keepdims=True)', 'att = att - att.max(axis=-2, keepdims=True)'), ('att = att / att.sum(axis=-1, keepdims=True)', 'att = att / att.sum(axis=-2, keepdims=True)')]
