#include "engine/fused/exact.hpp"

#include <algorithm>

namespace triada::detail::fused {

template <class T>
void exact_batch(const StageView<T>& s, const std::vector<PlaneRef<T>>& planes, index_t b0,
                 std::vector<T>& w, bool redo, kernels::StopPoll stop) {
  if (redo) start_w(s, w);
  const bool esop = s.esop;
  const CellMode cell_mode = s.opt.cell_mode;
  const index_t wext = s.wext;
  const index_t w1 = s.sw[s.d1], w2 = s.sw[s.d2], wk = s.sw[s.a];
  for (size_t i = 0; i < planes.size(); ++i) {
    if (stop && stop()) return;
    const PlaneRef<T>& p = planes[i];
    const T* c = s.cb.data() + (b0 + static_cast<index_t>(i)) * wext;
    for (index_t l1 = 0; l1 < s.le1; ++l1)
      for (index_t l2 = 0; l2 < s.le2; ++l2) {
        const T y = p.at(l1, l2);
        if (esop && is_zero(y)) continue;
        T* wl = w.data() + l1 * w1 + l2 * w2;
        for (index_t k = 0; k < wext; ++k) {
          if (esop && is_zero(c[k])) continue;
          wl[k * wk] = mac(cell_mode, wl[k * wk], y, c[k]);
        }
      }
  }
}

template void exact_batch(const StageView<double>&, const std::vector<PlaneRef<double>>&, index_t,
                          std::vector<double>&, bool, kernels::StopPoll);
template void exact_batch(const StageView<cplx>&, const std::vector<PlaneRef<cplx>>&, index_t,
                          std::vector<cplx>&, bool, kernels::StopPoll);

}  // namespace triada::detail::fused
