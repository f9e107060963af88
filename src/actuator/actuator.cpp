#include "actuator/actuator.hpp"

#include <algorithm>
#include <numeric>
#include <random>

#include "core/error.hpp"

namespace triada {

template <class T>
Actuator<T>::Actuator(const StagePlan& stage, const CoeffMatrix& c, Mode mode,
                      std::uint64_t shuffle_seed)
    : n_(stage.n()), k_(stage.k()), width_(std::max(stage.n(), stage.k())), mode_(mode) {
  if (c.rows != n_ || c.cols != k_)
    throw internal_error("actuator matrix shape does not match the stage");
  if (!is_complex_v<T> && c.is_complex)
    throw internal_error("complex coefficients on a real executor");
  c_.resize(static_cast<size_t>(n_ * k_));
  row_nnz_.assign(static_cast<size_t>(n_), 0);
  for (index_t t = 0; t < n_; ++t)
    for (index_t k = 0; k < k_; ++k) {
      const T v = coeff_as<T>(c(t, k));
      c_[t * k_ + k] = v;
      row_nnz_[t] += is_zero(v) ? 0 : 1;
    }
  order_.resize(static_cast<size_t>(n_));
  std::iota(order_.begin(), order_.end(), index_t{0});
  if (shuffle_seed != 0) {
    std::mt19937_64 gen(shuffle_seed * 0x9E3779B97F4A7C15ULL + static_cast<unsigned>(stage.axis));
    std::shuffle(order_.begin(), order_.end(), gen);
  }
}

template <class T>
std::uint64_t Actuator<T>::x_bus_sends(index_t t) const {
  if (mode_ == Mode::dense) return static_cast<std::uint64_t>(width_);
  // Non-zeros, plus the tag element when its own coefficient is zero or padding.
  const bool tag_counted = t < k_ && !is_zero(c_[t * k_ + t]);
  return static_cast<std::uint64_t>(row_nnz_[t]) + (tag_counted ? 0 : 1);
}

template <class T>
void Actuator<T>::build_message(index_t t, index_t lo, index_t hi,
                                std::vector<std::byte>& out) const {
  // Entries are written in place after the header, whose count is filled in last.
  const index_t end = std::min(hi, width_);
  const size_t off = out.size();
  out.resize(off + sizeof(XHeader) +
             static_cast<size_t>(std::max<index_t>(0, end - lo)) * sizeof(XEntry<T>));
  std::int64_t count = 0;
  for (index_t k = lo; k < end; ++k) {
    const T c = k < k_ ? c_[t * k_ + k] : T{};
    const bool tag = k == t;
    if (mode_ == Mode::esop && !tag && is_zero(c)) continue;
    const XEntry<T> e{k, c, tag ? 1 : 0};
    std::memcpy(out.data() + off + sizeof(XHeader) + static_cast<size_t>(count) * sizeof e, &e,
                sizeof e);
    ++count;
  }
  const XHeader h{t, count};
  std::memcpy(out.data() + off, &h, sizeof h);
  out.resize(off + sizeof h + static_cast<size_t>(count) * sizeof(XEntry<T>));
}

template <class T>
void Actuator<T>::build_end_message(std::vector<std::byte>& out) {
  const XHeader h{kEndOfStage, 0};
  const size_t off = out.size();
  out.resize(off + sizeof h);
  std::memcpy(out.data() + off, &h, sizeof h);
}

template class Actuator<double>;
template class Actuator<cplx>;

}  // namespace triada
