// The kernels' instruction-set paths (kernels/isa.hpp): which paths exist and run here (the
// CPU's flags in /proc/cpuinfo are the oracle), how TRIADA_ISA's values are read and
// refused, the forced path and its register block; then the batches the executors call
// on every path this CPU runs, each against a direct loop of std::fma in the same order,
// and the paths against each other: the same bits and the same counts.
#include <algorithm>
#include <cmath>
#include <cstring>
#include <fstream>
#include <limits>
#include <random>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "core/error.hpp"
#include "kernels/isa.hpp"
#include "kernels/left_batch.hpp"
#include "kernels/panels.hpp"
#include "kernels/right_batch.hpp"
#include "support/catch.hpp"

using namespace triada;
using namespace triada::kernels;

namespace {

bool same_bits(const std::vector<double>& a, const std::vector<double>& b) {
  return a.size() == b.size() && std::memcmp(a.data(), b.data(), a.size() * sizeof(double)) == 0;
}

// The first "flags" line of /proc/cpuinfo as a set (empty where there is none).
std::set<std::string> cpuinfo_flags() {
  std::ifstream f("/proc/cpuinfo");
  std::string line;
  std::set<std::string> flags;
  while (std::getline(f, line))
    if (line.rfind("flags", 0) == 0) {
      std::istringstream words(line.substr(line.find(':') + 1));
      for (std::string w; words >> w;) flags.insert(w);
      break;
    }
  return flags;
}

std::string message_of(const char* value) {
  try {
    choose_isa(value);
  } catch (const config_error& e) {
    return e.what();
  }
  return "";
}

}  // namespace

TEST_CASE("kernel paths: names, the paths compiled and those this CPU runs", "[kernels][isa]") {
  for (const Isa i : {Isa::avx512, Isa::avx2, Isa::portable}) {
    Isa back = Isa::portable;
    CHECK(parse_isa(to_string(i), back));
    CHECK(back == i);
  }
  Isa unused = Isa::avx2;
  CHECK_FALSE(parse_isa("AVX512", unused));
  CHECK_FALSE(parse_isa("", unused));
  const std::vector<Isa> compiled = compiled_isas(), avail = available_isas();
  REQUIRE_FALSE(compiled.empty());
  if (*arch_flags() == '\0') CHECK(compiled.back() == Isa::portable);  // always there
  CHECK(cpu_runs(Isa::portable));
  const std::set<std::string> f = cpuinfo_flags();
  if (!f.empty()) {  // Linux: the kernel lists what the CPU has and the OS enables
    const bool v3 = f.count("avx2") && f.count("fma") && f.count("popcnt");
    CHECK(cpu_runs(Isa::avx2) == v3);
    CHECK(cpu_runs(Isa::avx512) ==
          (v3 && f.count("avx512f") && f.count("avx512vl") && f.count("avx512dq") &&
           f.count("avx512bw") && f.count("avx512cd")));
  }
  std::vector<Isa> expect;
  for (const Isa i : compiled)
    if (cpu_runs(i)) expect.push_back(i);
  CHECK(avail == expect);
  REQUIRE_FALSE(avail.empty());
  CHECK(choose_isa(nullptr) == avail.front());  // TRIADA_ISA unset: the best available
  CHECK(choose_isa("") == avail.front());
  for (const Isa i : avail) CHECK(choose_isa(to_string(i)) == i);
}

TEST_CASE("kernel paths: a TRIADA_ISA this build or CPU cannot run is a config error",
          "[kernels][isa]") {
  CHECK_THROWS_AS(choose_isa("sse2"), config_error);
  const std::string bad = message_of("sse2");
  CHECK(bad.find("TRIADA_ISA=sse2") != std::string::npos);
  CHECK(bad.find("allowed: avx512, avx2, portable") != std::string::npos);
  CHECK(message_of("Avx2").find("TRIADA_ISA=Avx2") != std::string::npos);  // exact names
  for (const Isa i : {Isa::avx512, Isa::avx2, Isa::portable}) {
    const std::vector<Isa> c = compiled_isas();
    const bool compiled = std::find(c.begin(), c.end(), i) != c.end();
    if (compiled && cpu_runs(i)) continue;
    CAPTURE(to_string(i));
    const std::string m = message_of(to_string(i));
    CHECK(m.find(std::string("TRIADA_ISA=") + to_string(i)) != std::string::npos);
    CHECK(m.find(compiled ? "this CPU cannot run it" : "not in this build") != std::string::npos);
    CHECK_THROWS_AS(set_isa(i), config_error);
  }
}

TEST_CASE("kernel paths: a forced path runs in its scope with its own register block",
          "[kernels][isa]") {
  const Isa before = isa();
  const IsaSource source = isa_source();
  for (const Isa i : available_isas()) {
    CAPTURE(to_string(i));
    {
      ScopedIsa forced(i);
      CHECK(isa() == i);
      CHECK(isa_source() == IsaSource::program);
      const KernelBlock b = kernel_block();
      CHECK(b.rows == (i == Isa::avx512 ? 14 : 6));
      CHECK(b.columns == (i == Isa::avx512 ? 16 : 8));  // two vectors of the path
      CHECK(nr() == b.columns);
      CHECK(panel_chunk(1000) % nr() == 0);
      CHECK(isa_summary().rfind(to_string(i), 0) == 0);
    }
    CHECK(isa() == before);
    CHECK(isa_source() == source);
  }
}

namespace {

// Values with zeros (fraction z).
std::vector<double> values(std::size_t n, double z, std::mt19937_64& gen) {
  std::uniform_real_distribution<double> u(-1, 1), c(0, 1);
  std::vector<double> v(n);
  for (auto& x : v) x = c(gen) < z ? 0.0 : u(gen);
  return v;
}

// What one path's batches give: W along axis 3 (lines x wext) and along axis 1 (wext x
// lines), and both batches' non-zero counts per step.
struct Batches {
  std::vector<double> left, right;
  std::vector<std::uint64_t> left_counts, right_counts;
  std::uint64_t bad = 0;
};

// V (L lines of nb pivots, v[l * nb + s]) times C (nb x wext) on the path in use.
Batches run_batches(const std::vector<double>& v, const std::vector<double>& c, index_t L,
                    index_t nb, index_t wext, bool esop) {
  Batches r;
  std::vector<PlaneRef<double>> planes(static_cast<size_t>(nb));
  for (index_t s = 0; s < nb; ++s) planes[s] = {v.data() + s, 0, nb};
  r.left.assign(static_cast<size_t>(L * wext), 5.0);
  r.left_counts.assign(static_cast<size_t>(nb), 0);
  LeftScratch lx;
  left_batch(planes, v.data(), nb, L, c.data(), wext, r.left.data(), esop, true, r.left_counts,
             r.bad, lx, nullptr);
  // The same product with the data on the right: W (wext x L) = C^T V^T, planes as rows
  // of L (columns = lines).
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
  r.right.assign(static_cast<size_t>(wext * L), 5.0);
  ra.w = r.right.data();
  ra.w_row = L;
  ra.planes = &rp;
  ra.mine = &mine;
  ra.esop = esop;
  ra.fresh = true;
  PrivatePanels store(nb, esop);
  RightScratch rx;
  r.right_counts.assign(static_cast<size_t>(nb), 0);
  right_batch(ra, KnownZero{}, store, rx, r.right_counts, r.bad);
  return r;
}

}  // namespace

TEST_CASE("kernel paths: left and right batches give a direct loop's bits and counts on every path",
          "[kernels][isa]") {
  std::mt19937_64 gen(3);
  for (bool esop : {true, false})
    for (index_t L : {index_t{1}, index_t{17}, index_t{40}, index_t{131}})
      for (index_t wext : {index_t{3}, index_t{21}, index_t{33}}) {
        CAPTURE(esop, L, wext);
        const index_t nb = wext == 33 ? 37 : 11;
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
        std::vector<double> expect_t(static_cast<size_t>(wext * L));
        for (index_t l = 0; l < L; ++l)
          for (index_t k = 0; k < wext; ++k) expect_t[k * L + l] = expect[l * wext + k];
        std::vector<std::uint64_t> nnz(static_cast<size_t>(nb), 0);
        for (index_t s = 0; s < nb; ++s)
          for (index_t l = 0; l < L; ++l) nnz[s] += v[l * nb + s] != 0 ? 1 : 0;
        std::vector<Batches> runs;
        for (const Isa i : available_isas()) {
          CAPTURE(to_string(i));
          ScopedIsa forced(i);
          runs.push_back(run_batches(v, c, L, nb, wext, esop));
          const Batches& r = runs.back();
          CHECK(same_bits(r.left, expect));
          CHECK(same_bits(r.right, expect_t));
          CHECK(r.bad == 0);
          if (esop) {
            CHECK(r.left_counts == nnz);
            CHECK(r.right_counts == nnz);
          }
          // Against the first path run: outputs and counters identical.
          CHECK(same_bits(r.left, runs.front().left));
          CHECK(same_bits(r.right, runs.front().right));
          CHECK(r.left_counts == runs.front().left_counts);
          CHECK(r.right_counts == runs.front().right_counts);
        }
        CHECK(runs.size() == available_isas().size());
      }
}
