"""the token ids were cast to uint8 before comparing with pad_token: ids of a real vocabulary wrap modulo 256 (256, 512, 65536 become 0) and are masked as padding; compare the ids as they are.

Must fail: padding_mask
"""
PATCH = [("keep = seq != pad_token", "keep = seq.to(torch.uint8) != pad_token % 256")]
