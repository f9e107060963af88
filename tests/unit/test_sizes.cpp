// Checked size arithmetic (core/checked.hpp) and where user-controlled sizes meet it:
// the plan, the dense counters, the coefficient matrices, the per-process memory check.
#include <cstdlib>
#include <functional>
#include <limits>
#include <new>
#include <string>
#include <vector>

#include "actuator/coefficients.hpp"
#include "core/checked.hpp"
#include "core/error.hpp"
#include "counters/counters.hpp"
#include "geometry/memory_model.hpp"
#include "geometry/plan.hpp"
#include "support/catch.hpp"

using namespace triada;

namespace {
constexpr index_t kMax = std::numeric_limits<index_t>::max();

// Sets TRIADA_MEMORY_LIMIT for the scope of a test.
struct MemoryLimit {
  explicit MemoryLimit(const std::string& bytes) {
    setenv("TRIADA_MEMORY_LIMIT", bytes.c_str(), 1);
  }
  ~MemoryLimit() { unsetenv("TRIADA_MEMORY_LIMIT"); }
};

std::string message_of(const std::function<void()>& f) {
  try {
    f();
  } catch (const input_error& e) {
    return e.what();
  }
  return "";
}
}  // namespace

TEST_CASE("checked_mul returns exact products and refuses any that overflow", "[sizes]") {
  CHECK(checked_mul(index_t{3037000499}, index_t{3037000499}, "x") == index_t{9223372030926249001});
  CHECK(checked_mul(std::uint64_t{1} << 32, (std::uint64_t{1} << 32) - 1, "x") ==
        (std::uint64_t{1} << 32) * ((std::uint64_t{1} << 32) - 1));
  CHECK(checked_mul(index_t{0}, kMax, "x") == 0);
  CHECK_THROWS_AS(checked_mul(index_t{3037000500}, index_t{3037000500}, "x"), input_error);
  CHECK_THROWS_AS(checked_mul(std::uint64_t{1} << 32, std::uint64_t{1} << 32, "x"), input_error);
  CHECK_THROWS_AS(checked_mul(index_t{4}, index_t{1} << 62, "x"), input_error);
  CHECK_THROWS_AS(checked_mul(index_t{-1}, index_t{2}, "x"),
                  input_error);  // sizes are never negative
  CHECK_THROWS_AS(checked_add(std::uint64_t{1} << 63, std::uint64_t{1} << 63, "x"), input_error);
  CHECK(checked_add(std::uint64_t{1} << 62, std::uint64_t{1} << 62, "x") == std::uint64_t{1} << 63);
  const std::string msg = message_of([] { checked_mul(index_t{4}, index_t{1} << 62, "c.h5:/C1"); });
  CHECK(msg == "c.h5:/C1: 4 x 4611686018427387904 does not fit a 64-bit size");
}

TEST_CASE("checked_product checks every step of a shape's element count", "[sizes]") {
  CHECK(checked_product<index_t>(ext3{7, 12, 5}, "s") == 420);
  CHECK(checked_product<index_t>(ext3{1, 1, index_t{1} << 40}, "s") == index_t{1} << 40);
  CHECK_THROWS_AS(
      checked_product<index_t>(ext3{index_t{1} << 21, index_t{1} << 21, index_t{1} << 21}, "s"),
      input_error);
  // Each factor fits and the wrapped product would be small: 2^32 * 2^32 * 2 wraps to 0.
  CHECK_THROWS_AS(
      checked_product<std::uint64_t>(std::vector<std::uint64_t>{1ull << 32, 1ull << 32, 2}, "s"),
      input_error);
}

TEST_CASE("failed allocations become one input error naming the input", "[sizes]") {
  const std::string m1 =
      message_of([] { out_of_memory_is_input_error("in.h5:/x", [] { throw std::bad_alloc(); }); });
  CHECK(m1 == "in.h5:/x: out of memory");
  const std::string m2 = message_of([] {
    out_of_memory_is_input_error("in.h5:/x", [] {
      std::vector<double> v;
      v.reserve(v.max_size() + 1);
    });
  });
  CHECK(m2.rfind("in.h5:/x: out of memory", 0) == 0);
  CHECK(out_of_memory_is_input_error("x", [] { return 42; }) == 42);
}

TEST_CASE("a plan whose cells or elements overflow 64 bits is refused", "[sizes]") {
  PlanRequest r;
  r.in_shape = r.out_shape = {8, 8, 8};
  r.balanced_dims = {1, 1, 1};
  r.mesh = ext3{3000000, 3000000, 3000000};
  const std::string msg = message_of([&] { make_plan(r); });
  CHECK(msg.find("mesh.cells 3000000x3000000x3000000") != std::string::npos);
  CHECK(msg.find("does not fit a 64-bit size") != std::string::npos);
  r.mesh = ext3{2000000, 2000000, 2000000};  // 8e18 cells: fits
  CHECK(make_plan(r).mesh == ext3{2000000, 2000000, 2000000});
  r.mesh.reset();
  r.in_shape = r.out_shape = {index_t{1} << 22, index_t{1} << 22, index_t{1} << 22};
  CHECK_THROWS_AS(make_plan(r), input_error);
}

TEST_CASE("dense closed forms refuse counts that would wrap", "[sizes]") {
  PlanRequest r;
  r.in_shape = {index_t{1} << 20, index_t{1} << 20, 4};  // 2^42 elements: the plan fits
  r.out_shape = {index_t{1} << 20, index_t{1} << 20, index_t{1} << 22};
  r.balanced_dims = {1, 1, 1};
  r.stage_order = {1, 2, 3};
  const Plan p = make_plan(r);
  // Stage along 2: 2^20 * 2^20 * 2^(20+2) MACs = 2^62 fit; along 3: 2^40 lines * 4 * 2^22 = 2^64.
  CHECK_THROWS_AS(dense_counters(p), input_error);
  r.out_shape[2] = 4;
  const auto d = dense_counters(make_plan(r));
  CHECK(d[1][Counter::macs] == std::uint64_t{1} << 62);
}

TEST_CASE("a coefficient matrix whose size overflows or does not fit is refused", "[sizes]") {
  const std::string msg = message_of([] {
    make_coefficients(TransformKind::dct, index_t{1} << 40, Norm::ortho, false,
                      "axis 3 of in.h5:/x");
  });
  CHECK(msg.rfind("axis 3 of in.h5:/x: the 1099511627776x1099511627776 dct coefficient matrix "
                  "(complex128): ",
                  0) == 0);
  CHECK(msg.find("does not fit a 64-bit size") != std::string::npos);
  {
    const MemoryLimit limit("1000000");  // 1 MB: a 256 x 256 complex matrix (1 MiB) does not fit
    const std::string m2 = message_of([] {
      make_coefficients(TransformKind::dft, 256, Norm::ortho, false, "axis 1 of in.h5:/x");
    });
    CHECK(m2 ==
          "axis 1 of in.h5:/x: the 256x256 dft coefficient matrix (complex128): needs 1.00 MiB, "
          "0.954 MiB available (TRIADA_MEMORY_LIMIT)");
    CHECK(make_coefficients(TransformKind::dft, 128, Norm::ortho, false, "a").data.size() ==
          128 * 128);
  }
}

TEST_CASE("available memory: the override, else MemAvailable within the cgroup's room", "[sizes]") {
  {
    const MemoryLimit limit("12345");
    const AvailableMemory a = available_memory();
    CHECK(a.bytes == 12345);
    CHECK(a.source == "TRIADA_MEMORY_LIMIT");
    CHECK_NOTHROW(require_memory(12345, "x"));
    CHECK_THROWS_AS(require_memory(12346, "x"), input_error);
  }
  {
    const MemoryLimit limit("12k");
    CHECK_THROWS_AS(available_memory(), config_error);
  }
  const AvailableMemory a = available_memory();
  CHECK(a.bytes > 0);
  CHECK((a.source == "MemAvailable" || a.source == "cgroup limit"));
}

TEST_CASE("format_bytes gives MiB at every size, with the digits to compare two figures",
          "[sizes]") {
  CHECK(format_bytes(std::uint64_t{0}) == "0 MiB");
  CHECK(format_bytes(std::uint64_t{512}) == "0.000488 MiB");
  CHECK(format_bytes(std::uint64_t{1536}) == "0.00146 MiB");
  CHECK(format_bytes(std::uint64_t{1000000}) == "0.954 MiB");
  CHECK(format_bytes(10.0 * 1048576 - 1) == "10.0 MiB");
  CHECK(format_bytes(std::uint64_t{1} << 20) == "1.00 MiB");
  CHECK(format_bytes(std::uint64_t{17576000000}) == "16761.8 MiB");
  CHECK(format_bytes(std::uint64_t{1} << 63) == "8796093022208.0 MiB");
}
