"""the token ids were wrapped modulo 256 before comparing with pad_token (as a cast to uint8 or int8 does): ids of a real vocabulary (256, 512, 65536 become 0) are masked as padding; compare the ids as they are.

Must fail: padding_mask
"""
PATCH = [("keep = seq != pad_token", "keep = seq.to(torch.uint8) != pad_token % 256")]
