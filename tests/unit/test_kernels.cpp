// The kernels of one path (src/kernels) against direct loops of std::fma in the same
// order: bitwise equal results and exact non-zero counts, on ragged sizes (not multiples
// of the register block), zero rows and columns, and Inf / NaN operands. Compiled once per
// kernel path, like the kernels (the region below): each copy's tests carry the path's
// name and test nothing where this CPU cannot run the path. The batches on every path, as
// the executors call them: test_kernel_paths.cpp.
#include <cmath>
#include <cstring>
#include <limits>
#include <random>
#include <vector>

#include "kernels/isa.hpp"
#include "kernels/packing.hpp"
#include "support/catch.hpp"

using namespace triada;

namespace {

bool same_bits(const std::vector<double>& a, const std::vector<double>& b) {
  return a.size() == b.size() && std::memcmp(a.data(), b.data(), a.size() * sizeof(double)) == 0;
}

// Values with zeros (fraction z) and, if asked, an Inf and a NaN.
std::vector<double> values(std::size_t n, double z, std::mt19937_64& gen, bool inf_nan = false) {
  std::uniform_real_distribution<double> u(-1, 1), c(0, 1);
  std::vector<double> v(n);
  for (auto& x : v) x = c(gen) < z ? 0.0 : u(gen);
  if (inf_nan && n > 2) {
    v[n / 3] = std::numeric_limits<double>::infinity();
    v[n / 2] = std::numeric_limits<double>::quiet_NaN();
  }
  return v;
}

// This CPU runs the path this file was compiled for; else the tests say so and pass.
bool path_runs() {
  if (kernels::cpu_runs(static_cast<kernels::Isa>(TRIADA_ISA_VARIANT))) return true;
  WARN("this CPU cannot run the " TRIADA_ISA_NAME " kernel path: not tested here");
  return false;
}

}  // namespace

// The checks run inside the path's region (compiled for its instruction set), called only
// once path_runs() said the CPU has it.
#include "kernels/isa_begin.hpp"
namespace triada::kernels {
inline namespace TRIADA_ISA_NS {
namespace {

void check_micro_kernels() {
  std::mt19937_64 gen(1);
  for (index_t rows = 1; rows <= kMR; ++rows)
    for (index_t nvalid : {index_t{1}, kNR / 2 + 1, kNR - 1, kNR})
      for (bool fresh : {true, false}) {
        CAPTURE(rows, nvalid, fresh);
        const index_t S = 7;
        const auto a = values(static_cast<size_t>(S * kMR), 0.3, gen, rows == 3);
        const auto b = values(static_cast<size_t>(S * kNR), 0.3, gen);
        std::vector<const double*> brow(S);
        for (index_t s = 0; s < S; ++s) brow[s] = b.data() + s * kNR;
        const std::vector<std::int32_t> list{4, 0, 6, 2, 5};  // not ascending: list order
        auto w = values(static_cast<size_t>(kMR * kNR), 0.0, gen);
        auto expect = w;
        std::vector<double*> wr(kMR);
        for (index_t m = 0; m < kMR; ++m) wr[m] = w.data() + m * kNR;
        kernel_rows(rows, list.data(), static_cast<index_t>(list.size()), a.data(), brow.data(),
                    nvalid, wr.data(), 0, fresh);
        for (index_t m = 0; m < rows; ++m)
          for (index_t n = 0; n < nvalid; ++n) {
            double acc = fresh ? 0.0 : expect[m * kNR + n];
            for (std::int32_t s : list) acc = std::fma(a[s * kMR + m], b[s * kNR + n], acc);
            expect[m * kNR + n] = acc;
          }
        CHECK(same_bits(w, expect));  // columns past nvalid and rows past `rows` untouched
      }
}

void check_sparse_kernel_and_packing() {
  std::mt19937_64 gen(2);
  const auto panel = values(static_cast<size_t>(9 * kNR), 0.2, gen);
  const std::vector<double> val{0.5, -2.0, std::numeric_limits<double>::infinity()};
  const std::vector<std::int32_t> step{8, 1, 3};
  for (index_t nvalid : {index_t{1}, kNR - 1, kNR}) {
    auto w = values(static_cast<size_t>(kNR), 0.0, gen), expect = w;
    sparse_kernel(val.data(), step.data(), 3, panel.data(), nvalid, w.data(), false);
    for (index_t k = 0; k < nvalid; ++k)
      for (int i = 0; i < 3; ++i) expect[k] = std::fma(val[i], panel[step[i] * kNR + k], expect[k]);
    CHECK(same_bits(w, expect));
  }
  for (index_t len = 1; len <= kNR; ++len) {
    CAPTURE(len);
    std::vector<double> src(static_cast<size_t>(kNR), 0.0), dst(static_cast<size_t>(kNR), 7.0);
    std::uint64_t bad = 0;
    CHECK(copy_panel_row(src.data(), len, dst.data(), true, bad) == 0);  // all zero: not copied
    src[len - 1] = -0.0;
    CHECK(copy_panel_row(src.data(), len, dst.data(), true, bad) == 0);  // -0 is zero too
    src[0] = std::numeric_limits<double>::quiet_NaN();
    CHECK(copy_panel_row(src.data(), len, dst.data(), true, bad) == 1);  // NaN is not
    CHECK(bad == 1);
    CHECK(std::isnan(dst[0]));
    for (index_t n = len; n < kNR; ++n) CHECK(dst[n] == 0.0);  // zero padded
  }
  // pack_rows: ap[p * kMR + m] = r[m][p] for ragged P.
  for (index_t P : {index_t{1}, index_t{8}, index_t{13}, index_t{24}}) {
    std::vector<std::vector<double>> rows(kPackRows);
    const double* r[kPackRows];
    for (index_t m = 0; m < kPackRows; ++m) {
      rows[m] = values(static_cast<size_t>(P), 0.3, gen);
      r[m] = rows[m].data();
    }
    std::vector<double> ap(static_cast<size_t>(P * kMR + kPackRows));
    pack_rows(r, P, ap.data());
    bool ok = true;
    for (index_t p = 0; p < P; ++p)
      for (index_t m = 0; m < kMR; ++m) ok = ok && ap[p * kMR + m] == rows[m][p];
    CHECK(ok);
  }
}

}  // namespace
}  // namespace TRIADA_ISA_NS
}  // namespace triada::kernels
#include "kernels/isa_end.hpp"

TEST_CASE(TRIADA_ISA_NAME " kernels: W = fma(A, B, W) in list order, every block size",
          "[kernels]") {
  if (path_runs()) kernels::check_micro_kernels();
}

TEST_CASE(TRIADA_ISA_NAME " kernels: sparse kernel and panel packing", "[kernels]") {
  if (path_runs()) kernels::check_sparse_kernel_and_packing();
}
