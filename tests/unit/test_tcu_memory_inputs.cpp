// The TCU algorithms' inputs given in memory (mxu/tcu_inputs.hpp MemoryInput, the TCU job's
// TcuConfig::arrays): read as the datasets of the input they name, checked and refused
// with the messages a file's datasets get, and nothing read from memory outside the scope.
#include <string>
#include <vector>

#include "core/error.hpp"
#include "jobs/tcu_runs.hpp"
#include "mxu/tcu_algorithms.hpp"
#include "mxu/tcu_inputs.hpp"
#include "support/catch.hpp"

using namespace triada;

namespace {

tcu_in::MemoryDataset matrix(index_t rows, index_t cols, double scale) {
  tcu_in::MemoryDataset d;
  d.dims = {rows, cols};
  for (index_t i = 0; i < rows * cols; ++i) d.real.push_back(scale * static_cast<double>(i % 7));
  return d;
}

nlohmann::json run(const char* algo, const std::string& input) {
  TcuProblem p;
  p.input = input;
  p.input_name = "--input";
  return run_tcu_once(find_tcu_algorithm(algo), p, 16, 0, false);
}

std::string message_of(const char* algo, const std::string& input) {
  try {
    run(algo, input);
  } catch (const input_error& e) {
    return e.what();
  }
  return "";
}

}  // namespace

TEST_CASE("the TCU algorithms read arrays in memory as the datasets of their input",
          "[tcu][inputs]") {
  const tcu_in::MemoryDatasets ab{{"/A", matrix(6, 6, 1.0)}, {"/B", matrix(6, 6, -0.5)}};
  {
    const tcu_in::MemoryInput scope("inputs", ab);
    std::vector<double> a;
    CHECK(tcu_in::read_square("inputs", "/A", a) == 6);
    CHECK(a == ab.at("/A").real);
    const nlohmann::json r = run("matmul", "inputs");
    CHECK(r["verified"].get<bool>());
    CHECK(r["size"] == 6);
    CHECK(r["input"] == "inputs");
  }
  tcu_in::MemoryDatasets ge{{"/A", matrix(5, 5, 1.0)}, {"/b", matrix(5, 1, 1.0)}};
  for (index_t i = 0; i < 5; ++i) ge["/A"].real[static_cast<std::size_t>(i * 6)] += 20;  // pivots
  const tcu_in::MemoryInput scope("inputs", ge);
  const nlohmann::json r = run("ge", "inputs");
  CHECK(r["verified"].get<bool>());
  CHECK(r["size"] == 5);
}

TEST_CASE("arrays in memory are refused as a file's datasets are", "[tcu][inputs]") {
  tcu_in::MemoryDatasets d{{"/A", matrix(3, 4, 1.0)}, {"/B", matrix(3, 3, 1.0)}};
  {
    const tcu_in::MemoryInput scope("inputs", d);
    CHECK(message_of("matmul", "inputs") == "inputs:/A: expected a non-empty square matrix");
    d.erase("/A");
    CHECK(message_of("matmul", "inputs") == "inputs:/A: no such dataset");
    d["/A"] = matrix(3, 3, 1.0);
    d["/A"].dims = {9};
    CHECK(message_of("matmul", "inputs") == "inputs:/A: expected a non-empty square matrix");
    d["/A"].dims = {1, 3, 3};
    CHECK(message_of("matmul", "inputs") ==
          "inputs:/A: rank 3, expected a rank-1 or rank-2 dataset");
    d["/A"].dims = {3, 0};
    CHECK(message_of("matmul", "inputs") == "inputs:/A: empty extent 3x0");
    d["/A"] = matrix(3, 3, 1.0);
    d["/A"].is_complex = true;
    CHECK(message_of("matmul", "inputs") ==
          "inputs:/A: unsupported element type (complex128; integer or float expected)");
  }
  {
    tcu_in::MemoryDatasets x{{"/x", matrix(4, 4, 1.0)}};
    const tcu_in::MemoryInput scope("inputs", x);
    CHECK(message_of("dft", "inputs") == "inputs:/x: rank 2, expected a rank-1 dataset");
    x["/x"].dims = {};
    CHECK(message_of("dft", "inputs") == "inputs:/x: scalar, expected a rank-1 dataset");
  }
  // Outside the scope the name is a file's again.
  CHECK_THROWS_AS(run("matmul", "inputs"), input_error);
}
