// A consumer that enables only C++ (tests/cli/test_package.sh builds it with
// project(cxx_only LANGUAGES CXX)): a DCT of ones on arrays, sqrt(24) at y[0, 0, 0].
#include <mpi.h>

#include <iomanip>
#include <iostream>
#include <triada/triada.hpp>
#include <vector>

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  triada::TransformConfig cfg;
  cfg.input = {"x", ""};
  cfg.output = {"y", ""};
  cfg.kinds = {triada::TransformKind::dct, triada::TransformKind::dct, triada::TransformKind::dct};
  cfg.transform_spec = "dct";
  cfg.quiet = true;
  const std::vector<double> x(24, 1.0);
  triada::ArrayInputs in;
  in.x = triada::array_view(x.data(), {2, 3, 4});
  const triada::TransformResult r = triada::TransformJob(cfg).run(in, MPI_COMM_WORLD, std::cout);
  std::cout << "cxx-only y000 " << std::setprecision(15) << r.y.real.at(0) << "\n";
  MPI_Finalize();
  return 0;
}
