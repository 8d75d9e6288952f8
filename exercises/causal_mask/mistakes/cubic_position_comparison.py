"""the causal part of the combined mask was derived from an (L, L, L) comparison of every query, key and in-between position, so its memory grows with the cube of the sequence length although the mask is right (compare query and key indices directly: an (L, L) comparison).

Must fail: memory_scaling
"""
PATCH = [(
    """    causal = create_causal_mask(L)                           # (1, 1, L, L)""",
    """    pos = np.arange(L)
    between = (pos[None, None, :] > pos[:, None, None]) & (pos[None, None, :] <= pos[None, :, None])  # (L, L, L)
    causal = ~between.any(axis=-1)[None, None]                # (1, 1, L, L)""")]
