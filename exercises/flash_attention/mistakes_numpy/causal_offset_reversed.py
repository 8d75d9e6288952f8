"""the causal offset had the wrong sign (key j hidden when j > i + L_q - L_k): bottom-right alignment hides j > i + L_k - L_q.

Must fail: causal_bottom_right
"""
PATCH = [('    offset = L_k - L_q\n', '    offset = L_q - L_k\n')]
