#pragma once
// A compiled kernel path as the dispatch sees it: its register block and its entry points.
// Each path defines its table once (kernels/variant_table.cpp, compiled per path); the
// interface (left_batch.hpp, right_batch.hpp, panels.hpp) calls through the table of the
// path in use. A call costs one indirect jump per batch.
#include <cstddef>

#include "kernels/isa.hpp"
#include "kernels/left_batch.hpp"
#include "kernels/right_batch.hpp"

namespace triada::kernels {

struct KernelTable {
  Isa isa;
  index_t mr, nr;  // the register block: rows (kMR), columns (kNR)
  decltype(&left_batch) left;
  decltype(&right_batch) right;
  index_t (*panel_chunk)(index_t nb);
  std::size_t (*shared_pack_half)(index_t nb, index_t N);
};

// The table of the path in use (the first call chooses it: isa()).
const KernelTable& active_kernels();

}  // namespace triada::kernels
