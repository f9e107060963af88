// The planar MXU: products against a direct triple loop, and its cost model.
#include <random>
#include <vector>

#include "core/error.hpp"
#include "mxu/tensor_unit.hpp"
#include "support/catch.hpp"

using namespace triada;

TEST_CASE("the tensor unit multiplies a tall strip by a square block exactly as a triple loop",
          "[mxu]") {
  for (std::int64_t m : {1, 4, 16, 64}) {
    TensorUnit u(m, 7);
    const index_t s = u.side();
    for (index_t r : {s, s + 1, 3 * s, 5 * s - 1}) {
      std::mt19937_64 gen(static_cast<unsigned>(m * 100 + r));
      std::uniform_int_distribution<int> d(-5, 5);
      std::vector<double> A(static_cast<size_t>(r * s)), B(static_cast<size_t>(s * s)),
          C(static_cast<size_t>(r * s), 99.0);
      for (auto& v : A) v = d(gen) % 3 == 0 ? 0 : d(gen);
      for (auto& v : B) v = d(gen) % 2 == 0 ? 0 : d(gen);
      u.reset();
      u.multiply(r, A.data(), s, B.data(), s, C.data(), s);
      std::uint64_t nnz_products = 0;
      for (index_t i = 0; i < r; ++i)
        for (index_t k = 0; k < s; ++k) {
          double ref = 0;
          for (index_t t = 0; t < s; ++t) {
            ref += A[i * s + t] * B[t * s + k];
            nnz_products += (A[i * s + t] != 0 && B[t * s + k] != 0) ? 1 : 0;
          }
          CHECK(C[i * s + k] == ref);  // small integers: exact
        }
      CHECK(u.cost().calls == 1);
      CHECK(u.cost().tensor_time == static_cast<std::uint64_t>(r * s + 7));
      CHECK(u.cost().macs == nnz_products);  // ESOP: only non-zero operand pairs update
      CHECK(u.cost().macs_dense == static_cast<std::uint64_t>(r * s * s));
      CHECK(u.cost().cell_steps == static_cast<std::uint64_t>((r + s - 1) / s * s));
    }
  }
}

TEST_CASE("accumulating calls add to C and dense mode does every update", "[mxu]") {
  TensorUnit u(4, 0, false, Mode::dense);
  const std::vector<double> A{1, 2, 3, 4}, B{1, 0, 0, 1};
  std::vector<double> C{10, 20, 30, 40};
  u.multiply(2, A.data(), 2, B.data(), 2, C.data(), 2, true);
  CHECK(C == std::vector<double>{11, 22, 33, 44});
  CHECK(u.cost().macs == 8);
}

TEST_CASE("bad unit sizes and calls are refused", "[mxu][errors]") {
  CHECK_THROWS_AS(TensorUnit(15, 0), config_error);
  CHECK_THROWS_AS(TensorUnit(0, 0), config_error);
  CHECK_THROWS_AS(TensorUnit(16, -1), config_error);
  TensorUnit weak(16, 0, true);
  std::vector<double> A(8 * 4), B(16), C(8 * 4);
  CHECK_THROWS_AS(weak.multiply(8, A.data(), 4, B.data(), 4, C.data(), 4), triada::internal_error);
  CHECK_NOTHROW(weak.multiply(4, A.data(), 4, B.data(), 4, C.data(), 4));
  TensorUnit u(16, 0);
  CHECK_THROWS_AS(u.multiply(3, A.data(), 4, B.data(), 4, C.data(), 4), triada::internal_error);
}
