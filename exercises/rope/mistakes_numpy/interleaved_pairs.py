"""this is the interleaved-pair layout of RoFormer, Meta's LLaMA and GPT-J (features 2i and 2i+1 rotated together); this exercise asks for rotate_half (GPT-NeoX / Hugging Face LLaMA): feature i pairs with feature i + d/2.

Must fail: values
"""
PATCH = [('emb = np.concatenate([theta, theta], axis=-1)', 'emb = np.repeat(theta, 2, axis=-1)'), ('rotated = np.concatenate([-xw[..., d // 2:], xw[..., : d // 2]], axis=-1)', 'rotated = np.stack([-xw[..., 1::2], xw[..., 0::2]], axis=-1).reshape(xw.shape)')]
