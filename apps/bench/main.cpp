// triada-bench: the fused and reference executors against OpenBLAS dgemm and FFTW on this
// machine (bench.hpp). The OpenBLAS measurement re-executes this program as a child
// (--openblas-child, no MPI), dispatched here before MPI starts.
#include "apps/bench/bench.hpp"
#include "apps/common/run_main.hpp"

int main(int argc, char** argv) {
  if (triada::is_openblas_child(argc, argv)) return triada::run_openblas_child(argc, argv);
  return triada::run_main("triada-bench", argc, argv, triada::run_bench);
}
