"""the rotation went the wrong way (by -theta): rotate_half([x1, x2]) is [-x2, x1], not [x2, -x1].

Must fail: values
"""
PATCH = [('rotated = np.concatenate([-xw[..., d // 2:], xw[..., : d // 2]], axis=-1)', 'rotated = np.concatenate([xw[..., d // 2:], -xw[..., : d // 2]], axis=-1)')]
