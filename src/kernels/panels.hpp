#pragma once
// The pivot panels of the kernel path in use (kernels/isa.hpp), for code outside the
// kernels that sizes or reads them: the shared packing transport (engine/fused/), whose
// members read each other's panels, so every rank of a node must run the same path.
#include <cstddef>

#include "core/types.hpp"

namespace triada::kernels {

// Columns of a panel row (the path's kNR: 16 for avx512, 8 for avx2 and portable).
index_t nr();
// Columns per chunk of pivot panels of a right batch of nb steps (packing.hpp).
index_t panel_chunk(index_t nb);
// Bytes of one buffer of a member's shared packing (packing.hpp).
std::size_t shared_pack_half(index_t nb, index_t N);

}  // namespace triada::kernels
