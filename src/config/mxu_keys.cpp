#include "config/mxu_keys.hpp"

#include "config/key_readers.hpp"
#include "config/options.hpp"
#include "core/error.hpp"

namespace po = boost::program_options;

namespace triada {

namespace {

// Defaults: meshcfg/default.ini, which gives every source (TPU v1, Jouppi et al. 2017).
constexpr KeySpec kKeys[] = {
    {"mxu.sram_kib", "24576",
     "the MXU's on-chip buffer between DRAM and the unit, KiB (TPU v1 Unified Buffer: 24 MiB)"},
    {"mxu.word_bits", "64", "bits of one operand word in the buffer and in DRAM (fp64: 64)"},
    {"mxu.dram_gbps", "34", "DRAM <-> buffer bandwidth, 10^9 bytes/s (TPU v1: 34 GB/s)"},
    {"mxu.clock_ghz", "0.7", "the MXU's clock, GHz: turns DRAM bytes into cycles (TPU v1: 0.7)"},
};

Decimal decimal(const po::variables_map& vm, const KeySource& src, const std::string& key) {
  Decimal d;
  const std::string& s = key_text(vm, key);
  if (!parse_decimal(s, d))
    throw config_error(src(key) +
                       ": expected a positive decimal in (0, 1e6] with at most 6 "
                       "decimals, got '" +
                       printable(s) + "'");
  return d;
}

}  // namespace

bool parse_decimal(const std::string& s, Decimal& out) {
  const size_t dot = s.find('.');
  const std::string whole = s.substr(0, dot),
                    frac = dot == std::string::npos ? "" : s.substr(dot + 1);
  if (whole.empty() || whole.size() > 7 || frac.size() > 6 ||
      (dot != std::string::npos && frac.empty()))
    return false;
  std::uint64_t num = 0, den = 1;
  for (const char c : whole + frac) {
    if (c < '0' || c > '9') return false;
    num = num * 10 + static_cast<std::uint64_t>(c - '0');
  }
  for (size_t i = 0; i < frac.size(); ++i) den *= 10;
  if (num == 0 || num > 1000000 * den) return false;
  out = Decimal{num, den, s};
  return true;
}

void add_mxu_options(po::options_description& d) {
  add_keys(d, kKeys);
}

MxuMemoryParams mxu_memory_from(const po::variables_map& vm, const KeySource& src) {
  MxuMemoryParams p;
  p.sram_kib = key_integer(vm, src, "mxu.sram_kib", 1, std::uint64_t{1} << 40);
  p.word_bits = key_integer(vm, src, "mxu.word_bits", 8, 128);
  if (p.word_bits % 8 != 0)
    throw config_error(src("mxu.word_bits") + ": expected a multiple of 8, got '" +
                       printable(key_text(vm, "mxu.word_bits")) + "'");
  p.dram_gbps = decimal(vm, src, "mxu.dram_gbps");
  p.clock_ghz = decimal(vm, src, "mxu.clock_ghz");
  return p;
}

}  // namespace triada
