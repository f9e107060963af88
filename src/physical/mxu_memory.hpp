#pragma once
// Parameters of the planar MXU's memory side (the mesh config's [mxu] keys, doc/design.md
// §3.11): an on-chip buffer between host memory (DRAM) and the unit, as SCALE-Sim models a
// systolic array (Samajdar et al., "SCALE-Sim: Systolic CNN Accelerator Simulator") and as
// the TCU paper's Sec. 5 simulates a call in an internal memory. The model itself is
// mxu/memory_side.hpp; defaults and their sources are in meshcfg/default.ini.
#include <cstdint>
#include <string>

namespace triada {

// A positive decimal given in the config ("34", "0.7"), kept exact as num / den with den a
// power of ten, so that bytes per cycle is an exact rational.
struct Decimal {
  std::uint64_t num = 1, den = 1;
  std::string text = "1";
  double value() const { return static_cast<double>(num) / static_cast<double>(den); }
  bool operator==(const Decimal&) const = default;
};

struct MxuMemoryParams {
  std::uint64_t sram_kib = 24576;   // on-chip buffer, KiB (TPU v1's 24 MiB Unified Buffer)
  std::uint64_t word_bits = 64;     // one operand word (fp64)
  Decimal dram_gbps{34, 1, "34"};   // DRAM <-> buffer, 10^9 bytes per second (TPU v1)
  Decimal clock_ghz{7, 10, "0.7"};  // the unit's clock, 10^9 cycles per second (TPU v1)
  std::uint64_t word_bytes() const { return word_bits / 8; }
  // Whole words the buffer holds.
  std::uint64_t sram_words() const { return sram_kib * 1024 / word_bytes(); }
  bool operator==(const MxuMemoryParams&) const = default;
};

}  // namespace triada
