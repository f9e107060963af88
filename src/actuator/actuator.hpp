#pragma once
// An actuator (the paper's Decoupled Active Streaming Memory, Sec. 5.1): it holds one
// coefficient matrix C_axis and, one time step at a time, streams row t as the tagged
// vector (C[t, k], tag_k = [k == t]) for k in [0, max(N, K)), zero-padded past K
// (doc/design.md §3, step 1). Under ESOP it sends only elements with c != 0 or tag = 1 and
// skips a row that is all zero.
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <vector>

#include "actuator/coefficients.hpp"
#include "cell/cell_rule.hpp"
#include "geometry/plan.hpp"

namespace triada {

// Wire format of one step's message to one brick: a header then `count` entries for the
// planes k the brick holds. pivot == kEndOfStage marks the end of the actuator's stream.
struct XHeader {
  std::int64_t pivot;
  std::int64_t count;
};
inline constexpr std::int64_t kEndOfStage = -1;

template <class T>
struct XEntry {
  std::int64_t k;
  T c;
  std::int64_t tag;
};

// Bytes of the message starting at `msg` (its header's count read), at most `room`;
// 0 if the header or its entries would pass `room` (a malformed stream).
template <class T>
std::size_t message_bytes(const std::byte* msg, std::size_t room) {
  XHeader h;
  if (room < sizeof h) return 0;
  std::memcpy(&h, msg, sizeof h);
  if (h.count < 0 || static_cast<std::uint64_t>(h.count) > (room - sizeof h) / sizeof(XEntry<T>))
    return 0;
  return sizeof h + static_cast<std::size_t>(h.count) * sizeof(XEntry<T>);
}

// Reads one message (built by Actuator::build_message or build_end_message, checked by
// message_bytes): returns its header and calls on_entry(entry) for each entry, in order.
template <class T, class OnEntry>
XHeader read_message(const std::byte* msg, OnEntry&& on_entry) {
  XHeader h;
  std::memcpy(&h, msg, sizeof h);
  for (std::int64_t e = 0; e < h.count; ++e) {
    XEntry<T> xe;
    std::memcpy(&xe, msg + sizeof h + static_cast<std::size_t>(e) * sizeof xe, sizeof xe);
    on_entry(xe);
  }
  return h;
}

template <class T>
T coeff_as(const cplx& c) {
  if constexpr (is_complex_v<T>)
    return c;
  else
    return c.real();
}

template <class T>
class Actuator {
 public:
  // `c` is N x K for the stage; `shuffle_seed` != 0 streams the rows in a permuted order
  // (the tags move with the rows, so the sum is the same).
  Actuator(const StagePlan& stage, const CoeffMatrix& c, Mode mode, std::uint64_t shuffle_seed);

  const std::vector<index_t>& row_order() const { return order_; }
  // False if ESOP skips row t (all zero over its K columns).
  bool emits(index_t t) const { return mode_ == Mode::dense || row_nnz_[t] > 0; }
  // Whether C[t, k] is non-zero as streamed: the zero test ESOP applies to it.
  bool nonzero(index_t t, index_t k) const { return !is_zero(c_[t * k_ + k]); }
  // Elements row t puts on the X-bus (one per vector element, not per destination).
  std::uint64_t x_bus_sends(index_t t) const;
  // Appends the message for a brick holding planes [lo, hi) of the axis.
  void build_message(index_t t, index_t lo, index_t hi, std::vector<std::byte>& out) const;
  static void build_end_message(std::vector<std::byte>& out);

 private:
  index_t n_, k_, width_;
  Mode mode_;
  std::vector<T> c_;              // N x K, row-major
  std::vector<index_t> row_nnz_;  // non-zeros of each row (over K columns)
  std::vector<index_t> order_;
};

}  // namespace triada
