"""The exceptions of the simulator, the programs' error classes (core/error.hpp).

``Error`` is the base of all; ``ConfigError`` (a bad argument, option or config value: the
programs' exit code 2) and ``InputError`` (a bad tensor, shape, type or size: exit 1) are
also ``ValueError`` s; ``MPIError`` and ``HDF5Error`` name the library that failed. Each
carries the program's one-line message.
"""

from ._triada import ConfigError, Error, HDF5Error, InputError, MPIError

__all__ = ["Error", "ConfigError", "InputError", "MPIError", "HDF5Error"]
