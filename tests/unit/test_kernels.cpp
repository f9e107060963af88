// The fused executor's kernels (src/kernels) against direct loops of std::fma in the same
// order: bitwise equal results and exact non-zero counts, on ragged sizes (not multiples
// of the register block), zero rows and columns, and Inf / NaN operands.
#include <catch2/catch.hpp>
#include <cmath>
#include <cstring>
#include <limits>
#include <random>
#include <vector>

#include "kernels/left_batch.hpp"
#include "kernels/packing.hpp"
#include "kernels/right_batch.hpp"

using namespace triada;
using namespace triada::kernels;

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

}  // namespace

TEST_CASE("micro kernels: W = fma(A, B, W) in list order, every block size", "[kernels]") {
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

TEST_CASE("sparse kernel and panel packing", "[kernels]") {
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

TEST_CASE("left and right batches against a direct loop", "[kernels]") {
  std::mt19937_64 gen(3);
  for (bool esop : {true, false})
    for (index_t L : {index_t{1}, index_t{17}, index_t{40}})
      for (index_t wext : {index_t{3}, index_t{21}}) {
        CAPTURE(esop, L, wext);
        const index_t nb = 11;
        // V as rows of nb (axis 3 layout): line l's pivots at v[l * nb + s].
        auto v = values(static_cast<size_t>(L * nb), 0.7, gen);
        for (index_t s = 0; s < nb; ++s) v[static_cast<size_t>((L / 2) * nb + s)] = 0;  // zero line
        const auto c = values(static_cast<size_t>(nb * wext), 0.3, gen);
        std::vector<double> expect(static_cast<size_t>(L * wext), 0.0);
        for (index_t s = 0; s < nb; ++s)
          for (index_t l = 0; l < L; ++l)
            for (index_t k = 0; k < wext; ++k) {
              const double y = v[l * nb + s], cc = c[s * wext + k];
              if (esop && (y == 0 || cc == 0)) continue;
              expect[l * wext + k] = std::fma(y, cc, expect[l * wext + k]);
            }
        std::vector<PlaneRef<double>> planes(static_cast<size_t>(nb));
        for (index_t s = 0; s < nb; ++s) planes[s] = {v.data() + s, 0, nb};
        std::vector<double> w(static_cast<size_t>(L * wext), 5.0);
        std::vector<std::uint64_t> counts(static_cast<size_t>(nb), 0);
        std::uint64_t bad = 0;
        LeftScratch lx;
        left_batch(planes, v.data(), nb, L, c.data(), wext, w.data(), esop, true, counts, bad, lx,
                   nullptr);
        CHECK(same_bits(w, expect));
        // The same product with the data on the right: W (wext x L) = C^T V^T, planes as
        // rows of L (columns = lines).
        std::vector<double> vt(static_cast<size_t>(nb * L));
        for (index_t s = 0; s < nb; ++s)
          for (index_t l = 0; l < L; ++l) vt[s * L + l] = v[l * nb + s];
        std::vector<PlaneRef<double>> rp(static_cast<size_t>(nb));
        for (index_t s = 0; s < nb; ++s) rp[s] = {vt.data() + s * L, 0, 1};
        std::vector<char> mine(static_cast<size_t>(nb), 1);
        RightBatchArgs ra;
        ra.nb = nb;
        ra.N = L;
        ra.wext = wext;
        ra.cbb = c.data();
        std::vector<double> wr(static_cast<size_t>(wext * L), 5.0);
        ra.w = wr.data();
        ra.w_row = L;
        ra.planes = &rp;
        ra.mine = &mine;
        ra.esop = esop;
        ra.fresh = true;
        PrivatePanels store(nb, esop);
        RightScratch rx;
        std::vector<std::uint64_t> rcounts(static_cast<size_t>(nb), 0);
        right_batch(ra, KnownZero{}, store, rx, rcounts, bad);
        std::vector<double> expect_t(static_cast<size_t>(wext * L));
        for (index_t l = 0; l < L; ++l)
          for (index_t k = 0; k < wext; ++k) expect_t[k * L + l] = expect[l * wext + k];
        CHECK(same_bits(wr, expect_t));
        if (esop) {
          for (index_t s = 0; s < nb; ++s) {
            std::uint64_t n = 0;
            for (index_t l = 0; l < L; ++l) n += v[l * nb + s] != 0 ? 1 : 0;
            CHECK(counts[s] == n);
            CHECK(rcounts[s] == n);
          }
        }
      }
}
