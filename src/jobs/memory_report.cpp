#include "jobs/memory_report.hpp"

namespace triada {

nlohmann::json memory_counters_json(const MemoryCost& c, std::uint64_t cycles) {
  const auto values = c.values();
  nlohmann::json j = nlohmann::json::object();
  for (size_t i = 0; i < values.size(); ++i) j[kMemoryCounterKeys[i]] = values[i];
  j["stall_fraction"] =
      stall_fraction(static_cast<double>(c.stall_cycles), static_cast<double>(cycles));
  return j;
}

double stall_fraction(double stall_cycles, double cycles) {
  return stall_cycles + cycles > 0 ? stall_cycles / (stall_cycles + cycles) : 0.0;
}

nlohmann::json memory_config_json(const MxuMemoryParams& p, index_t side) {
  return {{"sram_kib", p.sram_kib},
          {"word_bits", p.word_bits},
          {"dram_gbps", p.dram_gbps.value()},
          {"clock_ghz", p.clock_ghz.value()},
          {"right_tiles_resident", MemorySide(p, side).tile_capacity()}};
}

}  // namespace triada
