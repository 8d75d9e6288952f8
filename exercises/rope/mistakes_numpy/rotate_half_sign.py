"""the rotation went the wrong way (by -theta), as when rotate_half returns [x2, -x1]; rotate_half([x1, x2]) is [-x2, x1].

Must fail: values
"""
PATCH = [('rotated = np.concatenate([-xw[..., d // 2:], xw[..., : d // 2]], axis=-1)', 'rotated = np.concatenate([xw[..., d // 2:], -xw[..., : d // 2]], axis=-1)')]
