"""The package by concern: each public name of triada is its submodule's own object, every
public function and method has complete type hints that resolve, and the package says so
with py.typed."""

import importlib
import inspect
import pathlib
import typing

import pytest

from conftest import triada

HOMES = {"transform": "transform", "gemt": "transform", "tcu": "tcu", "conv": "conv",
         "conv_onnx": "onnx_net", "onnx_layers": "onnx_net", "OnnxLayer": "onnx_net",
         "to_network": "onnx_net",
         "layout": "layouts", "BrickArray": "layouts", "CELL_MODES": "configs",
         "Error": "errors", "ConfigError": "errors", "InputError": "errors",
         "MPIError": "errors", "HDF5Error": "errors"}


def test_every_public_name_is_its_submodules_own():
    assert sorted(triada.__all__) == sorted(HOMES)
    for name, home in HOMES.items():
        module = importlib.import_module(f"triada.{home}")
        assert name in module.__all__, (name, home)
        assert getattr(triada, name) is getattr(module, name), (name, home)


def public_functions():
    for home in sorted(set(HOMES.values())):
        module = importlib.import_module(f"triada.{home}")
        for name in module.__all__:
            value = getattr(module, name)
            if inspect.isfunction(value):
                yield f"{home}.{name}", value
            elif inspect.isclass(value) and value.__module__ == module.__name__:
                for attr, member in vars(value).items():
                    if isinstance(member, property) and not attr.startswith("_"):
                        yield f"{home}.{name}.{attr}", member.fget


@pytest.mark.parametrize("name,function", list(public_functions()))
def test_every_public_function_has_complete_type_hints_that_resolve(name, function):
    hints = typing.get_type_hints(function)  # raises where a hint names nothing
    parameters = inspect.signature(function).parameters
    assert set(parameters) - {"self"} <= set(hints), (name, set(parameters) - set(hints))
    assert "return" in hints, name
    assert "Job" not in str(hints["return"]), (name, hints["return"])  # what the caller gets


def test_the_package_has_the_typed_marker_beside_its_modules():
    assert (pathlib.Path(triada.__file__).parent / "py.typed").is_file()
