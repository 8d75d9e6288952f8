"""a query row whose keys are all masked (causal with L_q > L_k) came out NaN: its running max stays -inf, so exp(-inf - (-inf)) is NaN, or, shifted by 0 instead, its running sum stays 0 and the division is 0/0; such a row must give 0 (shift by 0 where the max is -inf, divide only where the sum is > 0).

Must fail: causal_bottom_right

Source: https://github.com/pytorch/pytorch/pull/130014
The pull request fixes NaNs in PyTorch's CPU flash attention caused by std::exp((-inf) - (-inf)) and +/-inf * 0 in the lazy softmax of fully masked rows (issue #127055).
"""
PATCH = [("m_safe = torch.where(torch.isfinite(m_new), m_new, torch.zeros_like(m_new))", "m_safe = m_new"),
         ("return torch.where(seen, acc / torch.where(seen, l, torch.ones_like(l)), torch.zeros_like(acc))", "return acc / l")]
