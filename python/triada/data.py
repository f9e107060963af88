"""Data shipped with the package, so that an example runs wherever the package is installed.

``triada.data.sample()`` is the path of the 16x12x10 float64 sample tensor (dataset ``/x``;
half of its elements and a quarter of its (i1, i2) lines zero), the one the README's
examples and ``data/sample.h5`` of the source tree hold."""
from __future__ import annotations

import pathlib

__all__ = ["sample"]


def sample() -> pathlib.Path:
    """The installed sample tensor's HDF5 file (read it with h5py: ``f["x"][()]``)."""
    return pathlib.Path(__file__).resolve().parent / "sample.h5"
