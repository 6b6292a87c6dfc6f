"""``pareto_front`` on the GPU: the count kernel with ``cap=1``.

Contract: :func:`gpurank.kernels.reference.pareto_front`. A block of the block-pruned count
kernel (:mod:`.count`) leaves its walk of the tile tree once every one of its rows has a
first dominator; a tree node whose every row dominates the whole tile settles it at once,
so most tiles stop after a few nodes.
"""

from __future__ import annotations

from .count import domination_count_device

__all__ = ["pareto_front", "pareto_front_device"]


def pareto_front_device(costs):
    """:func:`pareto_front` on the device: the int64 device array ``min(count, 1)``, which
    is 0 exactly on the front (no host round trip)."""
    return domination_count_device(costs, cap=1)


def pareto_front(costs):
    """Mark the non-dominated rows.

    Parameters
    ----------
    costs
        As :func:`gpurank.kernels.reference.pareto_front`, on the host or the device.

    Returns
    -------
    ndarray of bool, shape (n,), on the host

    Examples
    --------
    Column-major input (the layout of cuDF's ``to_cupy()``) is read as it is:

    >>> from numba import cuda
    >>> c = np.asfortranarray([[2.0, 1.0, 4.0], [1.0, 2.0, 4.0], [2.0, 2.0, 5.0]])
    >>> pareto_front(cuda.to_device(c))
    array([ True,  True, False])
    """
    return pareto_front_device(costs).copy_to_host() == 0
