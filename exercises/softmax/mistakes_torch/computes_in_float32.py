"""the softmax was computed and returned in float32 (x.float()) whatever the input dtype: float64 input loses precision and float16/bfloat16 input comes back as float32; compute in, and return, the input's dtype.

Must fail: dtype_preserved, float64
"""
PATCH = [("    m = torch.amax(x, dim=axis, keepdim=True).detach()", "    x = x.float()\n    m = torch.amax(x, dim=axis, keepdim=True).detach()")]
