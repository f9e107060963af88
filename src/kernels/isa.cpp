// The choice of the kernel path (kernels/isa.hpp) and the table it runs. Compiled for the
// baseline, like everything outside the kernel path code, so that it runs on any CPU and
// can refuse a path before any of its instructions execute.
#include "kernels/isa.hpp"

#include <cstdlib>

#include "core/error.hpp"
#include "kernels/isa_config.hpp"  // generated: the paths this build compiled
#include "kernels/kernel_table.hpp"

namespace triada::kernels {

// Each compiled path's table (kernels/variant_table.cpp, in the path's namespace): data,
// so that looking at a path runs none of its code.
#if TRIADA_ISA_HAVE_AVX512
inline namespace isa_avx512 {
extern const KernelTable kernel_table;
}
#endif
#if TRIADA_ISA_HAVE_AVX2
inline namespace isa_avx2 {
extern const KernelTable kernel_table;
}
#endif
#if TRIADA_ISA_HAVE_PORTABLE
inline namespace isa_portable {
extern const KernelTable kernel_table;
}
#endif

namespace {

const KernelTable* compiled_table(Isa isa) {
  switch (isa) {
#if TRIADA_ISA_HAVE_AVX512
    case Isa::avx512:
      return &isa_avx512::kernel_table;
#endif
#if TRIADA_ISA_HAVE_AVX2
    case Isa::avx2:
      return &isa_avx2::kernel_table;
#endif
#if TRIADA_ISA_HAVE_PORTABLE
    case Isa::portable:
      return &isa_portable::kernel_table;
#endif
    default:
      return nullptr;
  }
}

// The choice: set by the first isa() or by set_isa(); read on every kernel call.
struct Choice {
  const KernelTable* table = nullptr;
  IsaSource source = IsaSource::cpu;
};
Choice g_choice;

std::string names(const std::vector<Isa>& isas, const char* sep) {
  std::string s;
  for (const Isa i : isas) s += (s.empty() ? "" : sep) + std::string(to_string(i));
  return s.empty() ? "none" : s;
}

// "compiled: avx512, avx2, portable", and a -DTRIADA_ARCH build's flags.
std::string compiled_note() {
  const std::string flags = arch_flags();
  return "compiled: " + names(compiled_isas(), ", ") +
         (flags.empty() ? "" : ", built with -DTRIADA_ARCH=" + flags);
}

// Returns if this build and this CPU run `isa`, else throws a config_error saying why.
void check_available(Isa isa, const std::string& what) {
  if (compiled_table(isa) == nullptr)
    throw config_error(what + ": not in this build (" + compiled_note() + ")");
  if (!cpu_runs(isa))
    throw config_error(
        what + ": this CPU cannot run it (available here: " + names(available_isas(), ", ") + ")");
}

}  // namespace

const char* to_string(Isa isa) {
  switch (isa) {
    case Isa::avx512:
      return "avx512";
    case Isa::avx2:
      return "avx2";
    case Isa::portable:
      return "portable";
  }
  return "?";
}

bool parse_isa(std::string_view name, Isa& isa) {
  for (const Isa i : {Isa::avx512, Isa::avx2, Isa::portable})
    if (name == to_string(i)) {
      isa = i;
      return true;
    }
  return false;
}

const char* to_string(IsaSource source) {
  switch (source) {
    case IsaSource::cpu:
      return "cpu";
    case IsaSource::variable:
      return "TRIADA_ISA";
    case IsaSource::program:
      return "program";
    case IsaSource::ranks:
      return "ranks";
  }
  return "?";
}

std::vector<Isa> compiled_isas() {
  std::vector<Isa> out;
  for (const Isa i : {Isa::avx512, Isa::avx2, Isa::portable})
    if (compiled_table(i) != nullptr) out.push_back(i);
  return out;
}

// The features are those kernels/isa_begin.hpp compiles each path for. GCC's and Clang's
// checks include the operating system's support of the registers (XGETBV).
bool cpu_runs(Isa isa) {
#if (defined(__x86_64__) || defined(__i386__)) && (defined(__GNUC__) || defined(__clang__))
  __builtin_cpu_init();
  const bool v3 = __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma") &&
                  __builtin_cpu_supports("popcnt");
  switch (isa) {
    case Isa::avx512:
      return v3 && __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512vl") &&
             __builtin_cpu_supports("avx512dq") && __builtin_cpu_supports("avx512bw") &&
             __builtin_cpu_supports("avx512cd");
    case Isa::avx2:
      return v3;
    case Isa::portable:
      return true;
  }
  return false;
#else
  return isa == Isa::portable;
#endif
}

std::vector<Isa> available_isas() {
  std::vector<Isa> out;
  for (const Isa i : compiled_isas())
    if (cpu_runs(i)) out.push_back(i);
  return out;
}

const char* arch_flags() {
  return TRIADA_ISA_ARCH_FLAGS;
}

Isa choose_isa(const char* value) {
  if (value == nullptr || *value == '\0') {
    const std::vector<Isa> avail = available_isas();
    if (avail.empty())
      throw config_error("no kernel path of this build runs on this CPU (" + compiled_note() + ")");
    return avail.front();
  }
  const std::string what = std::string("TRIADA_ISA=") + value;
  Isa isa = Isa::portable;
  if (!parse_isa(value, isa))
    throw config_error(what +
                       ": not a kernel path (allowed: avx512, avx2, portable; available "
                       "here: " +
                       names(available_isas(), ", ") + ")");
  check_available(isa, what);
  return isa;
}

const KernelTable& active_kernels() {
  if (g_choice.table == nullptr) {
    const char* value = std::getenv("TRIADA_ISA");
    const Isa isa = choose_isa(value);
    g_choice = {compiled_table(isa),
                value != nullptr && *value != '\0' ? IsaSource::variable : IsaSource::cpu};
  }
  return *g_choice.table;
}

Isa isa() {
  return active_kernels().isa;
}

IsaSource isa_source() {
  active_kernels();
  return g_choice.source;
}

void set_isa(Isa isa, IsaSource source) {
  check_available(isa, std::string("kernel path ") + to_string(isa));
  g_choice = {compiled_table(isa), source};
}

ScopedIsa::ScopedIsa(Isa isa) : isa_(kernels::isa()), source_(isa_source()) {
  set_isa(isa);
}

ScopedIsa::~ScopedIsa() {
  g_choice = {compiled_table(isa_), source_};
}

KernelBlock kernel_block() {
  const KernelTable& t = active_kernels();
  return {t.mr, t.nr};
}

std::string isa_summary() {
  return std::string(to_string(isa())) + " (" + to_string(isa_source()) +
         "; compiled: " + names(compiled_isas(), " ") +
         "; this CPU: " + names(available_isas(), " ") + ")";
}

}  // namespace triada::kernels
