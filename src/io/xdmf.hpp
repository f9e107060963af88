#pragma once
// XDMF sidecars (doc/design.md §5.10): a small XML file beside an HDF5 output through which
// ParaView and VisIt open its rank-3 datasets as cell data of a 3D grid, one cell per
// element. Text only: it reads no file; the caller writes it as an output of its own.
#include <cstdint>
#include <string>
#include <vector>

#include "core/types.hpp"
#include "io/tensor_io.hpp"

namespace triada {

// "out.h5" -> "out.xmf": a trailing .h5, .hdf5, .hdf or .he5 replaced, else ".xmf" added.
std::string xdmf_path(const std::string& h5_file);

// One dataset of the file as the grid's cell data.
struct XdmfArray {
  std::string name;                         // as ParaView lists it
  std::string dataset;                      // rooted path in the file
  ElementType type = ElementType::float64;  // float64, uint32 or complex128
  // complex128 only: the byte offset of the (contiguous, little-endian) data in the file.
  // XDMF reads no member of a compound type, so the {r, i} pairs are read raw: a Binary
  // item of shape (K1, K2, K3, 2) at this offset, one two-component array (component 0
  // the real part, 1 the imaginary part; ParaView's "Magnitude" is |y|). Hyperslabs of it
  // would give two scalars, but ParaView's Xdmf3 readers skip hyperslab items.
  std::uint64_t offset = 0;
};

// The document: one uniform grid (3DCoRectMesh, origin 0, spacing 1) of `cells`
// (C order: ParaView's z is axis 1, x is axis 3), each array cell-centred, read from
// `h5_file` named as the sidecar sees it (its file name: the sidecar lies beside it).
std::string xdmf_document(const std::string& grid_name, const std::string& h5_file,
                          const ext3& cells, const std::vector<XdmfArray>& arrays);

}  // namespace triada
