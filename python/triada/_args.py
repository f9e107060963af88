"""The types of the package's arguments, checked strictly before anything runs.

A kind is a function (name, value) -> the value normalised (arrays as numpy arrays in this
machine's byte order, paths as str, sequences as tuples), raising TypeError naming the
argument where the value has the wrong type ("esop: True, False or None expected, got str
'off'"). What a value of the right type means (a norm's name, an array's shape) is the
programs' to check (ConfigError, InputError).
"""

import contextvars
import numbers
import os
import threading
import types
from collections.abc import Mapping, Sequence

import numpy as np


def _got(value):
    """What was given, for a message: its type, and its value where it is short."""
    shown = repr(value)
    if isinstance(value, (str, bytes, numbers.Number, np.bool_)) and len(shown) <= 40:
        return f"got {type(value).__name__} {shown}"
    return f"got {type(value).__name__}"


def _fail(name, expected, value):
    raise TypeError(f"{name}: {expected} expected, {_got(value)}")


def _is_bool(v):
    return isinstance(v, (bool, np.bool_))


def _is_int(v):
    return isinstance(v, numbers.Integral) and not _is_bool(v)


def _is_real(v):
    return isinstance(v, numbers.Real) and not _is_bool(v)


def _is_sequence(v):
    """A list, tuple, 1-D array or other sequence, not a string."""
    if isinstance(v, np.ndarray):
        return v.ndim == 1
    return isinstance(v, Sequence) and not isinstance(v, (str, bytes, bytearray))


def optional(kind):
    """The kind, or None."""
    def check(name, value):
        return None if value is None else kind(name, value)
    check.__doc__ = kind.__doc__
    check.data = getattr(kind, "data", False)  # type: ignore[attr-defined]
    return check


def data(kind):
    """Marks a kind whose values are data: rank 0's or each rank's own part, never compared
    between ranks (described)."""
    kind.data = True
    return kind


def flag(name, value):
    """True or False (numpy's bool too)."""
    if not _is_bool(value):
        _fail(name, "True or False", value)
    return bool(value)


def optional_flag(name, value):
    """True, False or None."""
    if value is not None and not _is_bool(value):
        _fail(name, "True, False or None", value)
    return None if value is None else bool(value)


def count(name, value):
    """An integer (not a bool, not a float)."""
    if not _is_int(value):
        _fail(name, "an int", value)
    return int(value)


def number(name, value):
    """A real number (int or float, not a bool)."""
    if not _is_real(value):
        _fail(name, "a real number", value)
    return value


def word(name, value):
    """A str."""
    if not isinstance(value, str):
        _fail(name, "a str", value)
    return value


def path(name, value):
    """A file name: str or os.PathLike of str."""
    if isinstance(value, os.PathLike):
        value = os.fspath(value)
    if not isinstance(value, str):
        _fail(name, "a file name (str or os.PathLike)", value)
    return value


def sequence_of(kind, length=None, what=None):
    """A sequence (list, tuple, 1-D array) of `length` values of `kind`."""
    expected = what or f"a sequence of {'' if length is None else f'{length} '}values"

    def check(name, value):
        if not _is_sequence(value) or (length is not None and len(value) != length):
            _fail(name, expected, value)
        return tuple(kind(f"{name}[{i}]", v) for i, v in enumerate(value))
    return check


counts = sequence_of(count, what="a sequence of ints")
shape3 = sequence_of(count, 3, "a sequence of 3 ints")
numbers_ = sequence_of(number, what="a sequence of real numbers")


def words(name, value):
    """A str, or a sequence of str (joined by commas)."""
    if isinstance(value, str):
        return value
    return ",".join(sequence_of(word, what="a str or a sequence of str")(name, value))


def stage_order(name, value):
    """A permutation's digits: str, int or a sequence of ints."""
    if isinstance(value, str) or _is_int(value):
        return str(value)
    if not _is_sequence(value):
        _fail(name, "a str, an int or a sequence of ints", value)
    return "".join(str(v) for v in counts(name, value))


@data
def array(name, value):
    """An array or array-like (nested sequences of numbers), as a numpy array in this
    machine's byte order (the module reads elements as they lie)."""
    if isinstance(value, (str, bytes, bytearray, Mapping, set, frozenset)) or value is None:
        _fail(name, "an array", value)
    try:
        a = np.asarray(value)
    except (ValueError, TypeError) as e:  # ragged nesting, an object numpy cannot read
        first = str(e).splitlines()[0] if str(e) else type(e).__name__
        raise TypeError(f"{name}: not an array ({first})") from None
    if a.dtype.byteorder not in "=|":  # numpy spells this machine's order "="
        a = a.astype(a.dtype.newbyteorder("="))
    return a


@data
def matrices(name, value):
    """gemt's three matrices: a sequence of 3 arrays (None allowed where an axis is not
    gemt)."""
    return sequence_of(optional(array), 3, "a sequence of 3 arrays")(name, value)


@data
def arrays(name, value):
    """Arrays by name: a dict {str: array}."""
    if not isinstance(value, Mapping):
        _fail(name, "a dict {name: array}", value)
    return {word(f"{name} key", k): array(f"{name}[{k!r}]", v) for k, v in value.items()}


def _config_value(name, value):
    if isinstance(value, (str, os.PathLike)):
        return path(name, value)
    if _is_bool(value) or _is_real(value):
        return value
    if _is_sequence(value):
        for i, v in enumerate(value):
            if not (isinstance(v, str) or _is_real(v)):
                _fail(f"{name}[{i}]", "a str or a number", v)
        return tuple(value)
    _fail(name, "a str, number, bool or sequence", value)


def config(name, value):
    """Mesh config keys: a dict {"section.key": value}, values str, numbers, bools or
    sequences of str and numbers (a list key such as mesh.cells)."""
    if not isinstance(value, Mapping):
        _fail(name, "a dict {\"section.key\": value}", value)
    out = {}
    for key, v in value.items():
        word(f"{name} key", key)
        out[key] = _config_value(f"{name}[{key!r}]", v)
    return out


# A layer's per-axis fields (0-based): stride and dilation take (h, w), pad also
# (top, left, bottom, right); written in --layer's forms "HxW" and "T:L:B:R".
_LAYER_AXES = {7: (2,), 8: (2, 4), 9: (2,)}


def _layer_field(name, i, value):
    sizes = _LAYER_AXES.get(i, ())
    if _is_int(value) or not sizes:
        return str(count(f"{name}[{i}]", value))
    if not _is_sequence(value) or len(value) not in sizes:
        _fail(f"{name}[{i}]", "an int, a pair (h, w)" +
              (" or (top, left, bottom, right)" if 4 in sizes else ""), value)
    items = [str(count(f"{name}[{i}]", v)) for v in value]
    return ("x" if len(items) == 2 else ":").join(items)


def layer(name, value):
    """One layer as a sequence (ints; stride and dilation also pairs (h, w), pad also a
    pair or (top, left, bottom, right)) or its comma-separated str, or a network file.
    A sequence is returned as the str."""
    if isinstance(value, (str, os.PathLike)):
        return path(name, value)
    if not _is_sequence(value):
        _fail(name, "a sequence of ints, a str or a file name", value)
    return ",".join(_layer_field(name, i, v) for i, v in enumerate(value))


#: The call's arguments as (name, words) pairs for the ranks to compare (described), set
#: by checked() for the entry point that runs the call (_calls.entry).
call_arguments: contextvars.ContextVar[list] = contextvars.ContextVar("call_arguments")


def _words(value):
    """A normalised argument as words that compare equal exactly when the values do."""
    if isinstance(value, Mapping):
        return "{" + ", ".join(f"{k!r}: {_words(v)}" for k, v in sorted(value.items())) + "}"
    return repr(value)  # a float's repr round-trips exactly


def described(values, kinds):
    """The arguments every rank must pass alike, as (name, words): all but the data and
    comm (the agreement runs over it), and the calling thread's name, so that calls of
    two threads that cross between ranks are told apart."""
    out = [(n, _words(v)) for n, v in values.items()
           if n in kinds and not getattr(kinds[n], "data", False)]
    out.append(("the calling thread", repr(threading.current_thread().name)))
    return out


def checked(values, kinds):
    """values {name: value}, each checked by its kind and normalised (a name without a
    kind, such as comm, left as given): attributes of a namespace. Records the call's
    description (call_arguments) for the agreement of its ranks."""
    normal = {n: kinds[n](n, v) if n in kinds else v for n, v in values.items()}
    call_arguments.set(described(normal, kinds))
    return types.SimpleNamespace(**normal)
