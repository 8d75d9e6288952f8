"""the result was computed outside autograd (detached from x), so no gradient reaches x: keep the whole computation in torch operations on the given tensor (no .detach(), .numpy() or torch.no_grad() on the path).

Must fail: gradients
"""
PATCH = [("e = torch.exp(x - m)", "e = torch.exp(x.detach() - m)")]
