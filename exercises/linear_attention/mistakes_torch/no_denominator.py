"""the output was not divided by phi(q_i)^T z: without that normaliser the rows are sums, not weighted averages, of the values (Katharopoulos et al. 2020, eq. 6: the denominator is phi(q_i)^T sum_j phi(k_j)).

Must fail: values
"""
PATCH = [("    return (num / den).to(dtype)", "    return num.to(dtype)")]
