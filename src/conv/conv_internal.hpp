#pragma once
// What the convolution methods share (conv.cpp, conv_explicit.cpp, conv_implicit.cpp):
// metered working memory, operand and range checks, the unit's counters, and the placing
// of unit results in the output. Internal to src/conv.
#include <algorithm>
#include <cstdint>
#include <vector>

#include "conv/conv.hpp"

namespace triada::conv_detail {

using u64 = std::uint64_t;
inline u64 u(index_t v) {
  return static_cast<u64>(v);
}

// Working memory of one method: every buffer it allocates registers here while it lives,
// so the peak is measured, not asserted from a formula.
class ScratchMeter {
 public:
  void add(u64 bytes) {
    current_ += bytes;
    peak_ = std::max(peak_, current_);
  }
  void remove(u64 bytes) { current_ -= bytes; }
  u64 peak() const { return peak_; }

 private:
  u64 current_ = 0, peak_ = 0;
};

// Bytes counted in the meter while this lives: a buffer of the method's, or the part of
// an executor's scratch that the method itself would hold (one tile of a batch).
class MeteredPart {
 public:
  MeteredPart(ScratchMeter& meter, u64 bytes) : meter_(meter), bytes_(bytes) { meter_.add(bytes_); }
  ~MeteredPart() { meter_.remove(bytes_); }
  MeteredPart(const MeteredPart&) = delete;
  MeteredPart& operator=(const MeteredPart&) = delete;

 private:
  ScratchMeter& meter_;
  u64 bytes_;
};

class ScratchBuffer {
 public:
  ScratchBuffer(ScratchMeter& meter, index_t count)
      : data_(static_cast<size_t>(count), 0.0), metered_(meter, data_.size() * sizeof(double)) {}
  double* data() { return data_.data(); }
  double& operator[](index_t i) { return data_[static_cast<size_t>(i)]; }

 private:
  std::vector<double> data_;
  MeteredPart metered_;
};

// Throws internal_error unless x and w have the layer's sizes.
void check_operands(const ConvLayer& l, const std::vector<double>& x, const std::vector<double>& w);
// Throws internal_error unless [u0, u1) lies within the layer's work units.
void check_unit_range(const ConvLayer& l, index_t side, index_t u0, index_t u1);
// The unit's counters this method added.
void take_unit_cost(ConvStats& s, const TcuCost& before, const TcuCost& after);
// Rows [m0, m1) of the results of units v .. v + nt - 1, side by side in `wide` (unit j's
// columns from j S, row m at wide + (m - m0) ldc), copied to their output blocks, which
// start at `out` (each M x its columns). Returns where the next unit's block starts.
double* place_unit_rows(const ConvLayer& l, index_t S, index_t v, index_t nt, const double* wide,
                        index_t ldc, index_t m0, index_t m1, double* out);
// A whole layer's unit blocks placed as its NHWC output.
ConvResult whole_layer(ConvResult r, const ConvLayer& l, index_t side);

}  // namespace triada::conv_detail
