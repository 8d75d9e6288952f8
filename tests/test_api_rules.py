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


@pytest.mark.parametrize("source", [
    "import torch\ndef f(x):\n    with torch._C._DisableTorchDispatch():\n        return x @ x.T\n",
    "from torch._C import _DisableTorchDispatch as off\n",
    "import torch.utils._python_dispatch as d\n",
    "import torch\nop = getattr(torch._ops.ops.aten, 'mm')\n",
])
def test_torch_private_dispatch_is_forbidden_to_every_submission(source):
    """The work probes count through torch's dispatch: its private switches hide work from them."""
    from grader.grading.api_rules import TORCH_PRIVATE_DISPATCH  # noqa: PLC0415

    violations = scan_source(source, [], TORCH_PRIVATE_DISPATCH)
    assert violations and violations[0].name in TORCH_PRIVATE_DISPATCH
    assert not scan_source("import torch\ny = torch.ones(2).float() @ torch.eye(2)\n", [], TORCH_PRIVATE_DISPATCH)


def test_a_quadratic_recomputation_hidden_by_disabling_dispatch_is_forbidden(tmp_path):
    """A kv_cache whose decode re-projects the whole history under torch._C._DisableTorchDispatch()
    (helper hunt: full marks, the counter saw none of it) is graded forbidden, whatever it computes."""
    from grader.grading.exercise import get_exercise  # noqa: PLC0415
    from grader.grading.grade import grade_submission  # noqa: PLC0415

    path = tmp_path / "hidden.py"
    path.write_text("import torch\n\n\ndef multi_head_attention(query, key, value, num_heads, W_q, W_k, W_v, W_o, mask=None):\n"
                    "    with torch._C._DisableTorchDispatch():\n        return query\n")
    card = grade_submission(get_exercise("mha", track="torch"), path, seed=1, sandbox="process")
    assert card.score == 0
    assert {c.verdict for c in card.checks} == {"forbidden"}
    assert "torch._C" in card.status_message
