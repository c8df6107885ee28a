"""The lean forward's products: layers computed jointly from one column-major matrix their weights view."""

from __future__ import annotations

import torch
from deepresearch.agent.model.embedded.layers.products import JointProduct, RowPlan, matmul_t
from torch import nn


def linears(*sizes: int, inputs: int = 16) -> list[nn.Linear]:
    torch.manual_seed(0)
    return [nn.Linear(inputs, size, bias=False).requires_grad_(False) for size in sizes]


def test_a_joint_product_gives_each_layer_s_own_output():
    layers = linears(16, 4, 4)
    expected_weights = [layer.weight.clone() for layer in layers]
    for rows in (1, 2, 3, 8):  # one GEMV, one GEMV per row, GEMM
        x = torch.randn(rows, 16)
        joint = JointProduct(layers)
        outs = joint.split(joint(x))
        assert [tuple(o.shape) for o in outs] == [(rows, 16), (rows, 4), (rows, 4)]
        for out, w in zip(outs, expected_weights, strict=True):
            assert torch.allclose(out, x @ w.T, atol=1e-5)


def test_the_layers_weights_are_views_of_one_column_major_matrix():
    layers = linears(8, 4)
    joint = JointProduct(layers)
    matrix = joint.weight()
    assert matrix.shape == (12, 16) and matrix.t().is_contiguous()  # Wᵀ [in, Σ out] is what is in memory
    assert layers[1].weight.data_ptr() == matrix.t()[:, 8:].data_ptr()
    x = torch.randn(5, 16)
    with torch.no_grad():
        layers[1].weight += 1.0  # an in-place merge, as peft's
    assert torch.allclose(joint.split(joint(x))[1], x @ layers[1].weight.T, atol=1e-5)
    assert torch.allclose(layers[1](x), x @ layers[1].weight.T, atol=1e-5)  # torch reads the view too


def test_a_replaced_weight_is_laid_out_again_on_the_next_product():
    layers = linears(8, 4)
    joint = JointProduct(layers)
    new = torch.randn(4, 16)
    layers[1].weight.data = new.clone()  # e.g. transformers' model taking over the parameters
    x = torch.randn(3, 16)
    assert torch.allclose(joint.split(joint(x))[1], x @ new.T, atol=1e-5)
    assert layers[1].weight.data_ptr() == joint.weight().t()[:, 8:].data_ptr()  # a view again
    assert torch.equal(layers[1].weight, new)


def test_matmul_t_reads_either_layout():
    w = torch.randn(6, 16)
    x = torch.randn(4, 16)
    for weight in (w, w.t().contiguous().t()):
        assert torch.allclose(matmul_t(x, weight), x @ w.T, atol=1e-5)


def test_a_row_plan_computes_the_same_product_by_rows_and_blocks():
    w = torch.randn(37, 16)
    column_major = w.t().contiguous().t()
    plan = RowPlan(gemv_max_rows=5, block=8)  # 37 outputs: four whole blocks of 8 and one of 5
    for rows in (1, 2, 5, 6):  # one GEMV, GEMVs per row and block, one GEMM past the plan's rows
        x = torch.randn(rows, 16)
        assert torch.allclose(matmul_t(x, column_major, plan), x @ w.T, atol=1e-5)
        joint = JointProduct([torch.nn.Linear(16, 37, bias=False).requires_grad_(False)], plan)
        assert torch.allclose(joint(x), x @ joint.weight().T, atol=1e-5)
