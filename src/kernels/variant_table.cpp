// The table of this translation unit's kernel path (kernels/kernel_table.hpp), compiled
// once per path like the kernels it points to.
#include "kernels/kernel_table.hpp"
#include "kernels/packing.hpp"

// Kernel path code (kernels/isa_variant.hpp): compiled once per path.
#include "kernels/isa_begin.hpp"
namespace triada::kernels {
inline namespace TRIADA_ISA_NS {

// This path's entry points (left_batch.cpp, right_batch.cpp).
decltype(left_batch) left_batch_isa;
decltype(right_batch) right_batch_isa;

// Data, constant-initialized: the dispatch reads it before it knows the CPU runs the path.
extern const KernelTable kernel_table;
constinit const KernelTable kernel_table{static_cast<Isa>(TRIADA_ISA_VARIANT),
                                         kMR,
                                         kNR,
                                         &left_batch_isa,
                                         &right_batch_isa,
                                         &panel_chunk,
                                         &shared_pack_half};

}  // namespace TRIADA_ISA_NS
}  // namespace triada::kernels
#include "kernels/isa_end.hpp"
