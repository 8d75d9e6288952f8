"""an odd last axis was not rejected with ValueError.

Must fail: odd_d
"""
PATCH = [('if d % 2 != 0:\n        raise ValueError', 'if d % 2 != 0:\n        return x.copy()\n        raise ValueError')]
