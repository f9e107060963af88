// triada-bench: the fused and reference executors against OpenBLAS dgemm and FFTW on this
// machine (src/bench/bench.hpp). The OpenBLAS measurement re-executes this program as a
// child (--openblas-child, no MPI), dispatched here before MPI starts.
#include "bench/bench.hpp"
#include "core/app.hpp"

int main(int argc, char** argv) {
  if (triada::is_openblas_child(argc, argv)) return triada::run_openblas_child(argc, argv);
  return triada::run_app("triada-bench", argc, argv, triada::run_bench);
}
