#pragma once
// The MXU memory side (mxu/memory_side.hpp) in the reports of triada-conv and triada-tcu:
// the same keys and the same stall fraction in both.
#include <array>
#include <cstdint>
#include <nlohmann/json.hpp>

#include "core/types.hpp"
#include "mxu/memory_side.hpp"

namespace triada {

// MemoryCost's counters (MemoryCost::values() order), as the reports name them.
inline constexpr std::array<const char*, MemoryCost::kCounters> kMemoryCounterKeys = {
    "sram_reads", "sram_writes", "dram_read_bytes", "dram_write_bytes",
    "tile_loads", "tile_hits",   "dram_cycles",     "stall_cycles"};

// The counters under kMemoryCounterKeys, plus stall_fraction against the unit's cycles.
nlohmann::json memory_counters_json(const MemoryCost& c, std::uint64_t cycles);

// Stall cycles over the unit's time (its cycles plus the stalls); 0 without either.
double stall_fraction(double stall_cycles, double cycles);

// The buffer and DRAM parameters, and how many right tiles of a side-S unit stay resident.
nlohmann::json memory_config_json(const MxuMemoryParams& p, index_t side);

}  // namespace triada
