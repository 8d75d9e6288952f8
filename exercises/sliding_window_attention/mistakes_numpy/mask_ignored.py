"""the mask was ignored: only the window restricts the keys; a mask (nonzero = may attend) must hide the keys where it is 0 as well.

Must fail: masks, fully_masked_rows
"""
PATCH = [
    ('    if mask is not None:\n',
     '    if False:  # the mask is never read\n'),
]
