"""the mask was ignored: only the window restricts the keys; a mask (nonzero = may attend) must hide the keys where it is 0 as well.

Must fail: masks, fully_masked_rows

Source: https://github.com/NVIDIA/Megatron-LM/issues/7039
The issue shows FusedScaleMaskSoftmax.forward_torch_softmax replacing the caller's mask with get_sliding_window_causal_mask(sq, sk, window_size) whenever a window is set, so padding and packed-sequence masks were silently ignored on sliding-window layers.
"""
PATCH = [
    ('    if mask is not None:\n',
     '    if False:  # the mask is never read\n'),
]
