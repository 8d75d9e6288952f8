import torch
class _Softmax(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x, axis):
        work = x.float() if x.dtype in (torch.float16, torch.bfloat16) else x
        m = work.amax(axis, keepdim=True)
        m = torch.where(torch.isneginf(m), torch.zeros_like(m), m)
        e = torch.exp(work - m)
        s = e.sum(axis, keepdim=True)
        y = torch.where(s > 0, e / torch.where(s > 0, s, torch.ones_like(s)), torch.zeros_like(e)).to(x.dtype)
        ctx.save_for_backward(y)
        ctx.axis = axis
        return y
    @staticmethod
    def backward(ctx, g):
        (y,) = ctx.saved_tensors
        yf, gf = y.float() if y.dtype in (torch.float16, torch.bfloat16) else y, g.to(torch.float32) if y.dtype in (torch.float16, torch.bfloat16) else g
        dx = yf * (gf - (gf * yf).sum(ctx.axis, keepdim=True))
        return dx.to(y.dtype), None
def softmax(x, axis=-1):
    return _Softmax.apply(x, axis)
