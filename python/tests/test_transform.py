"""triada.transform and triada.gemt against independent oracles (scipy.fft, numpy): every
transform, inverse, the three norms, complex data, per-axis transforms, gemt non-square, the
initial tensor; and every element type the program reads."""

import json

import numpy as np
import pytest
import scipy.fft
import scipy.linalg

from conftest import index_tensor, triada

SHAPE = (8, 6, 4)


def close(y, ref, tol=1e-12):
    scale = max(np.abs(ref).max(), 1.0)
    assert y.shape == ref.shape
    assert np.abs(y - ref).max() <= tol * scale, np.abs(y - ref).max()


def along(x, matrix_of):
    """Y = X x1 M1 x2 M2 x3 M3 with M_a = matrix_of(N_a), applied axis by axis."""
    for a in range(3):
        x = np.moveaxis(np.tensordot(x, matrix_of(x.shape[a], a), axes=([a], [0])), -1, a)
    return x


def forward_scale(n, norm):
    """numpy's factor on the forward transform of size n (dft, dht, wht)."""
    return {"ortho": 1 / np.sqrt(n), "backward": 1.0, "forward": 1 / n}[norm]


def dht_matrix(n, norm):
    k = np.arange(n)
    phase = 2 * np.pi * np.outer(k, k) / n
    return (np.cos(phase) + np.sin(phase)) * forward_scale(n, norm)


def wht_matrix(n, norm):
    return scipy.linalg.hadamard(n) * forward_scale(n, norm)


@pytest.mark.parametrize("norm", ["ortho", "backward", "forward"])
def test_dct_and_dft_equal_scipy_in_every_norm_forward_and_inverse(norm):
    x = index_tensor(SHAPE, sparsity=0.3)
    for inverse in (False, True):
        y, r = triada.transform(x, "dct", norm=norm, inverse=inverse)
        ref = (scipy.fft.idctn if inverse else scipy.fft.dctn)(x, norm=norm)
        close(y, ref)
        assert y.dtype == np.float64 and r["problem"]["norm"] == norm
        y, r = triada.transform(x, "dft", norm=norm, inverse=inverse)
        close(y, (np.fft.ifftn if inverse else np.fft.fftn)(x, norm=norm))
        assert y.dtype == np.complex128 and r["problem"]["element"] == "complex128"


@pytest.mark.parametrize("norm", ["ortho", "backward", "forward"])
def test_dht_and_wht_equal_their_matrices_applied_along_each_axis(norm):
    x = index_tensor(SHAPE)
    y, _ = triada.transform(x, "dht", norm=norm)
    close(y, along(x, lambda n, a: dht_matrix(n, norm)))
    x = index_tensor((8, 4, 2))
    y, _ = triada.transform(x, "wht", norm=norm)
    close(y, along(x, lambda n, a: wht_matrix(n, norm)))
    back, _ = triada.transform(y, "wht", norm=norm, inverse=True)
    close(back, x)


def test_complex_input_and_per_axis_transforms():
    x = index_tensor(SHAPE) + 1j * index_tensor(SHAPE, sparsity=0.5)
    y, _ = triada.transform(x.astype(np.complex64), "dft")
    close(y, np.fft.fftn(x.astype(np.complex64).astype(np.complex128), norm="ortho"))
    y, r = triada.transform(x, ("dft", "dct", "wht"), stage_order=(1, 2, 3))
    ref = np.fft.fft(x, axis=0, norm="ortho")
    ref = scipy.fft.dct(ref, axis=1, norm="ortho")
    ref = along(ref, lambda n, a: wht_matrix(n, "ortho") if a == 2 else np.eye(n))
    close(y, ref)
    assert r["problem"]["transform"] == "dft,dct,wht" and r["problem"]["stage_order"] == "123"


def test_gemt_non_square_equals_einsum_and_its_inverse_round_trips():
    rng = np.random.default_rng(3)
    x = index_tensor((6, 10, 7), sparsity=0.4)
    c = [rng.standard_normal((6, 3)), rng.standard_normal((10, 12)) + 1j * rng.random((10, 12)),
         rng.standard_normal((7, 7))]
    y, r = triada.gemt(x, c)
    assert y.shape == (3, 12, 7) and y.dtype == np.complex128
    close(y, np.einsum("abc,ai,bj,ck->ijk", x, *c))
    # TensorLy's mode_dot(X, M, n) = fold(M @ unfold(X, n)), M of shape (J, I_n): the README
    # says the same Y is mode_dot(., C_s.T, s - 1) per axis.
    z = x
    for n, m in enumerate(c):
        z = np.moveaxis(np.tensordot(m.T, z, axes=([1], [n])), 0, n)
    close(y, z)
    assert r["problem"]["out_shape"] == [3, 12, 7]
    square = [rng.standard_normal((n, n)) for n in (6, 10, 7)]
    y, _ = triada.gemt(x, square)
    back, _ = triada.gemt(y, square, inverse=True)
    close(back, x, 1e-10)


def test_initial_output_is_added_and_changes_no_counter():
    x = index_tensor(SHAPE, sparsity=0.5)
    y0 = index_tensor(SHAPE)[::-1].copy()
    y, r = triada.transform(x, "dct", initial=y0)
    close(y, y0 + scipy.fft.dctn(x, norm="ortho"))
    _, plain = triada.transform(x, "dct")
    assert r["counters"] == plain["counters"] and r["problem"]["initial"] == "initial"
    assert plain["problem"]["initial"] is None


@pytest.mark.parametrize("transport", ["broadcast", "shared"])
def test_every_transport_gives_the_same_bits_and_counters(transport):
    x = index_tensor(SHAPE, sparsity=0.5)
    y, r = triada.transform(x, "dct", transport=transport)
    close(y, scipy.fft.dctn(x, norm="ortho"))
    y_auto, auto = triada.transform(x, "dct")
    assert y.tobytes() == y_auto.tobytes() and r["counters"] == auto["counters"]
    # The split of each stage adds up to its time; the model is beside it.
    for st in r["stage_time"]:
        parts = sum(st[p]["mean"] for p in ("compute", "pack", "wait", "idle"))
        assert abs(parts - st["seconds"]) <= 1e-9 + 1e-9 * st["seconds"]
        assert st["model_seconds"] > 0


INTEGER_TYPES = ["int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64"]


@pytest.mark.parametrize("dtype", INTEGER_TYPES + ["float32", "float64"])
def test_every_real_type_gives_the_float64_runs_bits(dtype):
    values = index_tensor(SHAPE, sparsity=0.3) + (3 if dtype.startswith("u") else 0)
    ref, ref_report = triada.transform(values, "dct")
    y, r = triada.transform(values.astype(dtype), "dct")
    assert np.array_equal(y.view(np.uint64), ref.view(np.uint64))
    assert r["problem"]["input_type"] == dtype and r["counters"] == ref_report["counters"]


@pytest.mark.parametrize("dtype", ["complex64", "complex128"])
def test_complex_types_give_the_complex128_runs_bits(dtype):
    values = index_tensor(SHAPE) - 1j * index_tensor(SHAPE, sparsity=0.5)
    ref, _ = triada.transform(values, "dft")
    y, r = triada.transform(values.astype(dtype), "dft")
    assert np.array_equal(y.view(np.uint64), ref.view(np.uint64))
    assert r["problem"]["input_type"] == dtype


def test_strided_transposed_and_big_endian_arrays_read_as_their_values():
    base = index_tensor((8, 12, 4), sparsity=0.2)
    for x in (base[:, ::2, :], base.transpose(1, 0, 2), base.astype(">f8"), base[::-1]):
        ref, _ = triada.transform(np.ascontiguousarray(x, dtype=np.float64), "dct")
        y, _ = triada.transform(x, "dct")
        assert np.array_equal(y, ref)


def test_the_output_is_handed_over_and_the_input_left_alone():
    x = index_tensor(SHAPE)
    before = x.copy()
    y, _ = triada.transform(x, "dct")
    assert np.array_equal(x, before)
    assert y.flags.c_contiguous and y.flags.owndata is False  # the engine's buffer, no copy


@pytest.mark.parametrize("bad, message", [
    (np.zeros(SHAPE, np.float16), "x: unsupported element type (float16)"),
    (np.zeros(SHAPE, bool), "x: unsupported element type (bool)"),
    (np.zeros((4, 5)), "x: rank 2, expected a rank-3 tensor"),
    (np.zeros((4, 0, 5)), "x: empty extent 4x0x5"),
])
def test_bad_inputs_raise_input_errors(bad, message):
    with pytest.raises(triada.InputError) as e:
        triada.transform(bad, "dct")
    assert str(e.value) == message
    assert isinstance(e.value, ValueError) and isinstance(e.value, triada.Error)


def test_help_documents_every_argument():
    import inspect
    doc = triada.transform.__doc__
    for name in inspect.signature(triada.transform).parameters:
        assert f"{name} :" in doc or f", {name} :" in doc or f"{name}, " in doc, name


def test_the_engine_runs_without_the_gil():
    """A Python thread keeps running while a call is inside the engine."""
    import threading
    import time
    x = index_tensor((40, 40, 40), sparsity=0.1)
    triada.transform(x[:2, :2, :2], "dct")  # MPI started before the measured call
    stamps, stop = [], threading.Event()

    def ticker():
        while not stop.is_set():
            stamps.append(time.monotonic())
            time.sleep(0.001)

    thread = threading.Thread(target=ticker)
    thread.start()
    start = time.monotonic()
    triada.transform(x, "dct", executor="reference")  # the slow executor: a long call
    end = time.monotonic()
    stop.set()
    thread.join()
    assert sum(start < s < end for s in stamps) >= 20  # held: a tick or two at most


def test_every_cell_mode_runs_and_is_reported():
    x = index_tensor((4, 4, 4), sparsity=0.2)
    ref, _ = triada.transform(x, "dct")
    for mode in triada.CELL_MODES:
        y, r = triada.transform(x, "dct", cell_mode=mode)
        assert r["precision"]["cell_mode"] == mode
        close(y, ref, 1e-2)  # the lowest precision (bf16) keeps 8 bits


def test_the_extension_takes_typed_settings_not_command_line_words():
    """The module hands the job its settings as typed values keyed by the config's fields;
    the program's command-line words are no longer what it takes."""
    from triada import _triada
    for fn in (_triada.transform, _triada.layout):
        assert "settings: dict" in fn.__doc__ and "list[str]" not in fn.__doc__.lower()
    x = index_tensor((4, 3, 2))
    with pytest.raises(TypeError):
        _triada.transform(["triada-transform", "--transform", "dct"], x, None,
                          [None, None, None], None, False, None, True)
    with pytest.raises(TypeError, match="unknown setting 'transform'"):
        _triada.transform(dict(transform="dct"), x, None, [None, None, None], None, False, None,
                          True)
    y, _, text, _ = _triada.transform(
        dict(transform_spec="dct", quiet=True, shuffle_seed=0, config={"esop.enabled": "off"}),
        x, None, [None, None, None], None, False, None, True)
    want, report = triada.transform(x, "dct", esop=False)
    assert np.array_equal(y, want) and '"macs":' in text
    assert report["counters"]["macs"] == json.loads(text)["counters"]["macs"]
    layout = _triada.layout(dict(config={"ranks.grid": "1,1,1"}), (4, 3, 2), (4, 3, 2), None)
    assert layout["brick_ranks"] == [1, 1, 1]
