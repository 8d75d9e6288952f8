"""the causal mask hid the diagonal (j < T + i): new token i attends to the positions up to and including its own, T + i.

Must fail: prefill_decode
"""
PATCH = [('allowed = np.arange(S)[None, :] <= np.arange(L)[:, None] + T', 'allowed = np.arange(S)[None, :] < np.arange(L)[:, None] + T')]
