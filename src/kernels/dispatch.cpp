// The kernels' interface, the same for every path: each call goes to the path in use
// (kernels/kernel_table.hpp). Compiled for the baseline.
#include "kernels/kernel_table.hpp"
#include "kernels/panels.hpp"

namespace triada::kernels {

void left_batch(const std::vector<PlaneRef<double>>& planes, const double* rows, index_t row_len,
                index_t L, const double* cbb, index_t wext, double* w, bool esop, bool fresh,
                std::vector<std::uint64_t>& counts, std::uint64_t& bad, LeftScratch& x,
                std::uint8_t* zero_out, StopPoll stop) {
  active_kernels().left(planes, rows, row_len, L, cbb, wext, w, esop, fresh, counts, bad, x,
                        zero_out, stop);
}

void right_batch(const RightBatchArgs& a, const KnownZero& known, PanelStore& store,
                 RightScratch& x, std::vector<std::uint64_t>& counts, std::uint64_t& bad) {
  active_kernels().right(a, known, store, x, counts, bad);
}

index_t nr() {
  return active_kernels().nr;
}

index_t panel_chunk(index_t nb) {
  return active_kernels().panel_chunk(nb);
}

std::size_t shared_pack_half(index_t nb, index_t N) {
  return active_kernels().shared_pack_half(nb, N);
}

PrivatePanels::PrivatePanels(index_t nb, bool esop) : nb_(nb), nr_(nr()), esop_(esop) {}

void PrivatePanels::begin_chunk(index_t, index_t nbk, double*& panels, char*& flags) {
  pack_.resize(static_cast<size_t>(nbk * nb_ * nr_));
  flag_.assign(static_cast<size_t>(nbk * nb_), esop_ ? 0 : 1);
  panels = pack_.data();
  flags = flag_.data();
}

}  // namespace triada::kernels
