"""x was detached from the autograd graph (e.g. .detach(), NumPy or torch.no_grad()), so no gradient reaches it.

Must fail: grad_x
"""
PATCH = [('xw = x.to(work)', 'xw = x.detach().to(work)')]
