"""float16/bfloat16 input was rotated in its own dtype (the angle table, cos/sin and the products all in half precision): the angles lose most of their digits once positions reach the hundreds; rotate half precision at float32, then cast back.

Must fail: half_precision
"""
PATCH = [("    work = torch.float64 if x.dtype == torch.float64 else torch.float32", "    work = torch.float64 if x.dtype == torch.float64 else x.dtype")]
