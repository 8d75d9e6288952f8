"""the rotation went the wrong way (by -theta): rotate_half([x1, x2]) is [-x2, x1], not [x2, -x1].

Must fail: values
"""
PATCH = [('rotated = torch.cat([-x2, x1], dim=-1)', 'rotated = torch.cat([x2, -x1], dim=-1)')]
