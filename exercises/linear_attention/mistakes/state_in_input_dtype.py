"""the states S and z were summed in float32 but stored in the input's dtype (float16) before the queries read them: a state of float16 inputs is a sum over every key and leaves float16's range (65504) for values in the tens, and loses its precision before that; keep S and z in float32 and cast only the output.

Must fail: half_precision
"""
PATCH = [
    ('        num = phi_q @ S                                         # (B, H, L, d_v)',
     "        S, z = S.astype(dtype).astype(work), z.astype(dtype).astype(work)  # the states stored in the input's dtype\n        num = phi_q @ S                                         # (B, H, L, d_v)"),
    ('        num = np.einsum("bhld,bhlde->bhle", phi_q, S)           # (B, H, L, d_v)',
     '        S, z = S.astype(dtype).astype(work), z.astype(dtype).astype(work)  # the states stored in the input\'s dtype\n        num = np.einsum("bhld,bhlde->bhle", phi_q, S)           # (B, H, L, d_v)'),
]
