"""triada.layout on axes of 2^31 cells and more: the bricks' bounds are 64-bit (a 32-bit
index would wrap to a negative or empty brick). The layout is a plan only: no data."""

import pytest

from conftest import triada

BIG = [2**31, 2**32 + 3]


def bounds(shape):
    return ((0, 0, 0), tuple(shape))


@pytest.mark.parametrize("n", BIG)
def test_one_brick_holds_the_whole_long_axis(n):
    d = triada.layout((n, 1, 1))
    assert d["mesh"] == [n, 1, 1]
    assert d["bricks"] == [(bounds((n, 1, 1)), bounds((n, 1, 1)))]
    assert d["in_slices"][0] == slice(0, n)


@pytest.mark.parametrize("n", BIG)
def test_a_long_output_axis_and_a_folded_mesh(n):
    d = triada.layout((6, 1, 1), (n, 1, 1))
    assert d["mesh"] == [n, 1, 1]
    assert d["bricks"] == [(bounds((6, 1, 1)), bounds((n, 1, 1)))]
    # 2^30 physical cells, each holding a block of the n virtual ones: the brick still ends at n.
    folded = triada.layout((n, 2, 1), config={"mesh.cells": f"{2**30},2,1"})
    assert folded["mesh"] == [2**30, 2, 1]
    assert folded["bricks"] == [(bounds((n, 2, 1)), bounds((n, 2, 1)))]
