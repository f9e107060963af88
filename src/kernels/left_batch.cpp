#include "kernels/left_batch.hpp"

#include <algorithm>
#include <bit>

#include "kernels/packing.hpp"

// Kernel path code (kernels/isa_variant.hpp): compiled once per path.
#include "kernels/isa_begin.hpp"
namespace triada::kernels {
inline namespace TRIADA_ISA_NS {

namespace {

// Sparse lines go in groups whose W rows stay in L2 while each column panel of the
// coefficients (kNR per step, in L1) sweeps them.
constexpr index_t kSparseGroup = 256, kSparseEntries = index_t{1} << 16;
constexpr index_t kLinesPerPoll = 1024;  // between polls of the stop hook

// One batch along axis 3; see left_batch() in the header.
class LeftBatch {
 public:
  LeftBatch(const std::vector<PlaneRef<double>>& planes, const double* rows, index_t row_len,
            const double* cbb, index_t wext, double* w, bool esop, bool fresh,
            std::vector<std::uint64_t>& counts, std::uint64_t& bad, LeftScratch& x)
      : planes_(planes),
        rows_(rows),
        row_len_(row_len),
        wext_(wext),
        w_(w),
        esop_(esop),
        fresh_(fresh),
        counts_(counts),
        bad_(bad),
        x_(x),
        nb_(static_cast<index_t>(planes.size())) {
    map_slots();
    pack_coefficients(cbb);
  }

  void run(index_t L, std::uint8_t* zero_out, StopPoll stop) {
    for (index_t l = 0; l < L; ++l) {
      if (stop && l % kLinesPerPoll == 0 && stop()) return;
      const double* row = row_mode_ ? rows_ + l * row_len_ : gather(l);
      if (esop_ && !scan_line(l, row, L, zero_out)) continue;
      pend_line_[np_] = l;
      pend_row_[np_++] = row;
      if (np_ == kMR) flush();
    }
    if (np_ > 0) flush();
    flush_sparse();
    simd::store_fence();
  }

 private:
  // Row mode: plane s of the batch is column slot_of[s] of the rows of V.
  void map_slots() {
    row_mode_ = rows_ != nullptr && row_len_ > 0;
    const auto r0 = reinterpret_cast<std::uintptr_t>(rows_);
    for (index_t s = 0; s < nb_ && row_mode_; ++s) {
      const auto b = reinterpret_cast<std::uintptr_t>(planes_[s].base);
      row_mode_ = planes_[s].st2 == row_len_ && b >= r0 &&
                  b < r0 + static_cast<std::uintptr_t>(row_len_) * sizeof(double);
    }
    P_ = row_mode_ ? row_len_ : nb_;
    x_.slot_of.resize(static_cast<size_t>(nb_));
    x_.step_of_slot.assign(static_cast<size_t>(P_), -1);
    x_.step_bits.assign(static_cast<size_t>((P_ + 7) / 8), 0);
    natural_ = true;  // slots ascend with the steps: slot order is streaming order
    for (index_t s = 0; s < nb_; ++s) {
      const index_t p =
          row_mode_ ? static_cast<index_t>(
                          (reinterpret_cast<std::uintptr_t>(planes_[s].base) - r0) / sizeof(double))
                    : s;
      x_.slot_of[s] = static_cast<std::int32_t>(p);
      x_.step_of_slot[p] = static_cast<std::int32_t>(s);
      x_.step_bits[p / 8] |= static_cast<std::uint8_t>(1u << (p % 8));
      natural_ = natural_ && (s == 0 || p > x_.slot_of[s - 1]);
    }
  }

  // B: the coefficients in column panels of kNR (zero padded), row of slot p at
  // brow[j P + p]; and the scratch the lines need.
  void pack_coefficients(const double* cbb) {
    const index_t npan = (wext_ + kNR - 1) / kNR;
    x_.bpack.assign(static_cast<size_t>(npan * nb_ * kNR), 0.0);
    x_.brow.assign(static_cast<size_t>(npan * P_), x_.bpack.data());
    for (index_t j = 0; j < npan; ++j)
      for (index_t s = 0; s < nb_; ++s) {
        double* dst = x_.bpack.data() + (j * nb_ + s) * kNR;
        for (index_t n = 0; n < kNR && j * kNR + n < wext_; ++n)
          dst[n] = cbb[s * wext_ + j * kNR + n];
        x_.brow[j * P_ + x_.slot_of[s]] = dst;
      }
    x_.apack.resize(static_cast<size_t>(P_ * kMR + kPackRows));
    x_.zeros.assign(static_cast<size_t>(P_), 0.0);
    if (!row_mode_) x_.gather.resize(static_cast<size_t>(kMR * P_));
    x_.list.resize(static_cast<size_t>(nb_));
    x_.one.resize(static_cast<size_t>(P_ + 8));  // + 8: whole-vector stores of set_slots
    x_.masks.resize(static_cast<size_t>((P_ + 7) / 8));
    // Sized once and filled through plain pointers and local counts (push_back kept its
    // size in memory).
    x_.sparse_line.resize(static_cast<size_t>(kSparseGroup));
    x_.sparse_ptr.resize(static_cast<size_t>(kSparseGroup + 1));
    x_.sparse_val.resize(static_cast<size_t>(kSparseEntries + P_));
    x_.sparse_step.resize(static_cast<size_t>(kSparseEntries + P_));
    x_.sparse_ptr[0] = 0;
  }

  const double* gather(index_t l) {
    double* g = x_.gather.data() + np_ * P_;
    for (index_t s = 0; s < nb_; ++s) g[s] = planes_[s].base[l * planes_[s].st2];
    return g;
  }

  // ESOP: scans line l once; returns true if it is dense (it waits for the block kernel),
  // false if it was handled here (all zero, or queued as a sparse line).
  bool scan_line(index_t l, const double* row, index_t L, std::uint8_t* zero_out) {
    // Rows ahead into the cache: the scan is the stage's only pass over V.
    constexpr index_t kAhead = 8;
    if (row_mode_ && l + kAhead < L)
      for (index_t c = 0; c < P_; c += 8) __builtin_prefetch(rows_ + (l + kAhead) * row_len_ + c);
    index_t nnz = 0;
    unsigned inf_nan = 0;
    for (index_t c = 0; c * 8 < P_; ++c) {
      unsigned in = 0;
      const unsigned m = nonzero8(row + 8 * c, P_ - 8 * c, in) & x_.step_bits[c];
      x_.masks[c] = static_cast<std::uint8_t>(m);
      nnz += std::popcount(m);
      inf_nan |= in & x_.step_bits[c];
    }
    bad_ |= inf_nan != 0 ? 1 : 0;
    if (zero_out != nullptr) zero_out[l] = nnz == 0 ? 1 : 0;
    if (nnz == 0) {  // an all-zero line (Inf and NaN count as non-zero): W stays +0
      if (fresh_) simd::zero_fill(w_ + l * wext_, wext_);
      return false;
    }
    if (nnz * 4 >= nb_) return true;
    queue_sparse(l, row);
    return false;
  }

  // A sparse line runs alone over its own non-zeros, in streaming order.
  void queue_sparse(index_t l, const double* row) {
    std::int32_t* one = x_.one.data();
    const std::int32_t* step_of = x_.step_of_slot.data();
    const index_t n1 = simd::set_slots(x_.masks.data(), P_, one);
    if (!natural_)
      std::sort(one, one + n1,
                [&](std::int32_t a, std::int32_t b) { return step_of[a] < step_of[b]; });
    double* val = x_.sparse_val.data() + n_entries_;
    std::int32_t* stp = x_.sparse_step.data() + n_entries_;
    std::uint64_t* cnt = counts_.data();
    for (index_t i = 0; i < n1; ++i) {
      const std::int32_t st = step_of[one[i]];
      val[i] = row[one[i]];
      stp[i] = st;
      ++cnt[st];
    }
    n_entries_ += n1;
    x_.sparse_line[n_sparse_] = l;
    x_.sparse_ptr[++n_sparse_] = n_entries_;
    if (n_sparse_ == kSparseGroup || n_entries_ >= kSparseEntries) flush_sparse();
  }

  // kMR dense lines (or fewer at the end), packed by transposes, through the block kernel.
  void flush() {
    const double* r[kPackRows];
    double* wr[kMR];
    for (index_t m = 0; m < kPackRows; ++m) r[m] = m < np_ ? pend_row_[m] : x_.zeros.data();
    for (index_t m = 0; m < kMR; ++m) wr[m] = m < np_ ? w_ + pend_line_[m] * wext_ : nullptr;
    pack_rows(r, P_, x_.apack.data());
    index_t nl = 0;
    for (index_t s = 0; s < nb_; ++s) {
      const std::int32_t p = x_.slot_of[s];
      if (!esop_) {
        x_.list[nl++] = p;
        continue;
      }
      const unsigned nz = nonzero_block(x_.apack.data() + static_cast<index_t>(p) * kMR);
      if (nz == 0) continue;
      x_.list[nl++] = p;
      counts_[s] += static_cast<std::uint64_t>(std::popcount(nz));
    }
    block_rows(np_, x_.list.data(), nl, x_.apack.data(), x_.brow.data(), P_, wext_, wr, fresh_);
    np_ = 0;
  }

  void flush_sparse() {
    for (index_t n0 = 0, j = 0; n0 < wext_; n0 += kNR, ++j) {
      const double* panel = x_.bpack.data() + j * nb_ * kNR;
      for (index_t g = 0; g < n_sparse_; ++g) {
        const index_t e0 = x_.sparse_ptr[g];
        sparse_kernel(x_.sparse_val.data() + e0, x_.sparse_step.data() + e0,
                      x_.sparse_ptr[g + 1] - e0, panel, std::min(kNR, wext_ - n0),
                      w_ + x_.sparse_line[g] * wext_ + n0, fresh_);
      }
    }
    n_sparse_ = n_entries_ = 0;
  }

  const std::vector<PlaneRef<double>>& planes_;
  const double* rows_;
  index_t row_len_, wext_;
  double* w_;
  bool esop_, fresh_;
  std::vector<std::uint64_t>& counts_;
  std::uint64_t& bad_;
  LeftScratch& x_;
  index_t nb_, P_ = 0;
  bool row_mode_ = false, natural_ = true;
  index_t pend_line_[kPackRows] = {};
  const double* pend_row_[kPackRows] = {};
  index_t np_ = 0, n_sparse_ = 0, n_entries_ = 0;
};

}  // namespace

// left_batch() on this path (kernels/kernel_table.hpp).
void left_batch_isa(const std::vector<PlaneRef<double>>& planes, const double* rows,
                    index_t row_len, index_t L, const double* cbb, index_t wext, double* w,
                    bool esop, bool fresh, std::vector<std::uint64_t>& counts, std::uint64_t& bad,
                    LeftScratch& x, std::uint8_t* zero_out, StopPoll stop) {
  LeftBatch(planes, rows, row_len, cbb, wext, w, esop, fresh, counts, bad, x)
      .run(L, zero_out, stop);
}

}  // namespace TRIADA_ISA_NS
}  // namespace triada::kernels
#include "kernels/isa_end.hpp"
