#!/usr/bin/env python3
"""Deterministic mutants of small valid tensor files, for tests/cli/test_fuzz.sh.

Usage: fuzz_mutants.py DIR [PER_BASE]

Writes three valid base files into DIR and PER_BASE mutants of each (default 100):
  plain   /x 6x5x4 float64, contiguous, old-style (v0) metadata
  chunked /g/x 6x5x4 float64, chunked, shuffle + gzip + fletcher32 checksums
  latest  /x 6x5x4 float32, chunked, gzip + fletcher32, newest metadata format
          (checksummed object headers, compact links)
Each mutant is one of: 1-4 bit flips, a run of 0xFF bytes, a run of zero bytes, or a
truncation. Offsets come from a fixed-seed generator over the base file's bytes, so the
same base files give the same mutants; the names (BASE-KIND-NNN.h5) say what was done.
Prints one line per file: its name.
"""
import os
import random
import sys

import h5py
import numpy as np

SEED = 20240611


def new_file(path, libver):
    """A new file without timestamps on the root group (h5py's File() would add them in the
    newest format), so the same script writes the same bytes."""
    fcpl = h5py.h5p.create(h5py.h5p.FILE_CREATE)
    fcpl.set_obj_track_times(False)
    fapl = h5py.h5p.create(h5py.h5p.FILE_ACCESS)
    fapl.set_libver_bounds(*{"earliest": (h5py.h5f.LIBVER_EARLIEST, h5py.h5f.LIBVER_LATEST),
                             "latest": (h5py.h5f.LIBVER_LATEST, h5py.h5f.LIBVER_LATEST)}[libver])
    return h5py.File(h5py.h5f.create(path.encode(), h5py.h5f.ACC_TRUNC, fcpl=fcpl, fapl=fapl))


def write_bases(d):
    data = np.arange(120, dtype=np.float64).reshape(6, 5, 4) / 7.0 - 3.0
    with new_file(os.path.join(d, "plain.h5"), "earliest") as f:
        f.create_dataset("x", data=data)
    with new_file(os.path.join(d, "chunked.h5"), "earliest") as f:
        f.create_group("g").create_dataset(
            "x", data=data, chunks=(3, 5, 2), shuffle=True, compression="gzip",
            fletcher32=True)
    with new_file(os.path.join(d, "latest.h5"), "latest") as f:
        f.create_dataset("x", data=data.astype(np.float32), chunks=(2, 5, 4),
                         compression="gzip", fletcher32=True)
    return ["plain", "chunked", "latest"]


def mutate(raw, rng, kind):
    b = bytearray(raw)
    n = len(b)
    if kind == "flip":
        for _ in range(rng.randint(1, 4)):
            pos = rng.randrange(n)
            b[pos] ^= 1 << rng.randrange(8)
    elif kind in ("ff", "zero"):
        pos = rng.randrange(n)
        length = rng.choice([1, 2, 4, 8, 16, 64])
        fill = 0xFF if kind == "ff" else 0x00
        b[pos:pos + length] = bytes([fill]) * len(b[pos:pos + length])
    elif kind == "trunc":
        del b[rng.randrange(1, n):]
    return bytes(b)


def main():
    d = sys.argv[1]
    per_base = int(sys.argv[2]) if len(sys.argv) > 2 else 100
    os.makedirs(d, exist_ok=True)
    kinds = ["flip", "flip", "ff", "zero", "trunc"]  # bit flips twice as often
    for base in write_bases(d):
        with open(os.path.join(d, base + ".h5"), "rb") as f:
            raw = f.read()
        rng = random.Random(f"{SEED}-{base}")
        print(base + ".h5")
        for k in range(per_base):
            kind = kinds[k % len(kinds)]
            name = f"{base}-{kind}-{k:03d}.h5"
            with open(os.path.join(d, name), "wb") as f:
                f.write(mutate(raw, rng, kind))
            print(name)


if __name__ == "__main__":
    main()
