"""Exercise `sliding_window_attention`: local attention over a sliding window of keys (NumPy).

Read the full statement with `grade show sliding_window_attention`. Grade your work with
`grade submit sliding_window_attention THIS_FILE --track numpy`.
"""

import numpy as np


def sliding_window_attention(query, key, value, window, causal=True, mask=None):
    """Softmax attention in which each query sees only a window of keys, in O(L * window).

    Args:
        query: (B, H, L_q, d_k) array. key: (B, H, L_k, d_k). value: (B, H, L_k, d_v).
        window: an int >= 1 (else raise ValueError). Query i sits at position p = i + L_k - L_q
            (bottom-right) and sees keys j with p - window < j <= p when causal, |p - j| < window
            when not.
        causal: bool.
        mask: None or a bool/numeric array broadcastable to (B, H, L_q, L_k): nonzero = may attend,
            further restricting the window.

    Scale the scores by 1/sqrt(d_k). A row that sees no key gives 0 (never NaN). Never build the
    (L_q, L_k) score matrix: score only each query's window of keys.

    Returns:
        (B, H, L_q, d_v) array in query's dtype (float16 accumulated in float32).
        Do not modify the inputs.
    """
    raise NotImplementedError("implement sliding_window_attention")
