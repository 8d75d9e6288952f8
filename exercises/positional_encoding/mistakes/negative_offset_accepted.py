"""a negative offset was not rejected with ValueError (it encoded negative positions).

Must fail: negative_arguments
"""
PATCH = [('    if offset < 0:\n        raise ValueError', '    if offset < 0 and False:\n        raise ValueError')]
