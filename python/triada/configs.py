"""What the entry points share: the cells' arithmetic modes, and the types their hints use
for mesh configs, files, arrays, reports and communicators."""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from typing import Any

from . import _calls

#: The cells' arithmetic modes (``cell_mode`` of transform, tcu and conv).
CELL_MODES: tuple[str, ...] = _calls.CELL_MODES

#: A file name.
PathArg = str | os.PathLike[str]
#: A mesh config value: a str, number or bool, or a list such as ``mesh.cells``.
ConfigValue = str | float | bool | os.PathLike[str] | Sequence[str | float]
#: Mesh config keys ``{"section.key": value}`` (the programs' ``--section.key`` options,
#: winning over the ``mesh`` file's).
Config = Mapping[str, ConfigValue]
#: A program's JSON report as a dict.
Report = dict[str, Any]
#: An mpi4py communicator (``mpi4py.MPI.Comm``); None is MPI's world.
Comm = Any

__all__ = ["CELL_MODES", "PathArg", "ConfigValue", "Config", "Report", "Comm"]
