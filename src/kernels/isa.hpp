#pragma once
// The kernels' instruction-set path, chosen at run time. The default build compiles the
// kernels once per path (kernels/isa_variant.hpp) and runs the best one this CPU and its
// operating system support, unless the environment variable TRIADA_ISA names another:
//   avx512    AVX-512 F, VL, DQ, BW, CD with AVX2, FMA, POPCNT (x86-64-v4's vector set)
//   avx2      AVX2, FMA, POPCNT (x86-64-v3's vector set)
//   portable  no instruction-set extension (any x86-64, any other processor)
// Every path gives the same bits (simd.hpp). The ranks of a run use one path
// (mesh/kernel_path.hpp), since ranks of one node read each other's packed panels.
#include <string>
#include <string_view>
#include <vector>

#include "core/types.hpp"

namespace triada::kernels {

enum class Isa { portable = 0, avx2 = 1, avx512 = 2 };

const char* to_string(Isa isa);
// "avx512", "avx2", "portable"; false for any other word.
bool parse_isa(std::string_view name, Isa& isa);

// The paths this build compiled, best first: all three on x86-64 with GCC or Clang, only
// portable elsewhere, only the one of its flags with -DTRIADA_ARCH.
std::vector<Isa> compiled_isas();
// Whether this CPU, and the state its operating system saves, can run the path.
bool cpu_runs(Isa isa);
// Compiled and runnable here, best first (empty only if a -DTRIADA_ARCH build runs on a
// CPU that lacks its path).
std::vector<Isa> available_isas();
// The compiler flags of a -DTRIADA_ARCH build ("" in the default build).
const char* arch_flags();

// The path for TRIADA_ISA = `value` (nullptr or "": unset, the best available). Throws
// config_error naming TRIADA_ISA and the allowed or available values for an unknown name,
// a path this build lacks or this CPU cannot run.
Isa choose_isa(const char* value);

// How the path in use was chosen.
enum class IsaSource {
  cpu,       // the best this CPU runs (TRIADA_ISA unset)
  variable,  // TRIADA_ISA
  program,   // set_isa() (tests)
  ranks,     // the best every rank runs, where the ranks' CPUs differ (kernel_path.hpp)
};
const char* to_string(IsaSource source);

// The path the kernels run. The first call chooses it (choose_isa(getenv("TRIADA_ISA")))
// and may throw that config_error; later calls return it.
Isa isa();
IsaSource isa_source();
// Runs `isa` from now on; throws config_error (as choose_isa) if it is not available.
// Not while kernels run on another thread.
void set_isa(Isa isa, IsaSource source = IsaSource::program);

// Tests: runs a path while in scope, then the previous choice again.
class ScopedIsa {
 public:
  explicit ScopedIsa(Isa isa);
  ~ScopedIsa();
  ScopedIsa(const ScopedIsa&) = delete;
  ScopedIsa& operator=(const ScopedIsa&) = delete;

 private:
  Isa isa_;
  IsaSource source_;
};

// The register block of the path in use: rows (kMR) and columns (kNR) of W it keeps in
// registers.
struct KernelBlock {
  index_t rows = 0, columns = 0;
};
KernelBlock kernel_block();

// One line for --version: "avx512 (cpu; compiled: avx512 avx2 portable)".
std::string isa_summary();

}  // namespace triada::kernels
