"""the logits were replaced by their maximum instead of having it subtracted (x - m was lost: exp(m - m) for every entry), so every finite slice came out uniform, 1/n per entry, whatever its logits.

Must fail: values_1d, values_nd, hidden_values

Source: https://github.com/pyg-team/pytorch_geometric/issues/1354
The issue shows torch_geometric.utils.softmax assigning out = scatter(src, index, reduce='max')[index] instead of out = out - scatter(...), which "yields uniform probs"; the maintainer fixed it.
"""
PATCH = [("e = torch.exp(x - m)", "e = torch.exp(torch.where(torch.isinf(x) & (x < 0), x, m) - m)")]
