"""the feature map was relu(x) instead of elu(x) + 1: relu is 0 for every negative feature, so phi is not positive, whole rows of weights vanish and the denominators can be 0; the contract uses elu(x) + 1 (Katharopoulos et al. 2020, section 3.2).

Must fail: values
"""
PATCH = [("    return np.where(x > 0, x + 1, np.exp(np.minimum(x, 0)))", "    return np.maximum(x, 0)")]
