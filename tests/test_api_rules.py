import pytest

from grader.grading.api_rules import scan_source

SCIPY = (["scipy", "torch"], [])


@pytest.mark.parametrize("source", [
    "import scipy.special\ny = scipy.special.softmax([1])",
    "from scipy.special import softmax",
    "import scipy.special as sp",
    "from scipy import special",
    "x = __import__('scipy')",
    "import importlib\nm = importlib.import_module('torch')",
    "def f():\n    import torch\n    return torch.ones(1)",
])
def test_forbidden_modules_are_found_however_imported(source):
    found = scan_source(source, *SCIPY)
    assert found and found[0].name in ("scipy", "torch")


def test_comments_strings_and_own_names_are_not_matched():
    source = '"""Unlike scipy.special.softmax, this is NumPy only."""\n# import torch\n' \
             "import numpy as np\ndef softmax(x):\n    torch_like = 'torch'\n    return np.exp(x)\n"
    assert scan_source(source, *SCIPY) == []


def test_aliases_resolve_to_forbidden_dotted_names():
    rules = ([], ["torch.nn.functional.scaled_dot_product_attention", "torch.nn.Module"])
    source = ("import torch.nn.functional as F\nfrom torch import nn\n"
              "class Attn(nn.Module):\n    pass\n"
              "def f(q, k, v):\n    return F.scaled_dot_product_attention(q, k, v)\n"
              "def g(q):\n    return getattr(F, 'scaled_dot_product_attention')(q, q, q)\n")
    found = scan_source(source, *rules)
    assert [(v.name.split('.')[-1], v.line) for v in found] == [
        ("Module", 3), ("scaled_dot_product_attention", 6), ("scaled_dot_product_attention", 8)]


def test_syntax_error_propagates():
    with pytest.raises(SyntaxError):
        scan_source("def f(:\n", *SCIPY)
