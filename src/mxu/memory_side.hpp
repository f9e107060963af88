#pragma once
// The memory side of the planar MXU (doc/design.md §3.11): an on-chip buffer (SRAM) of
// [mxu] sram_kib between host memory (DRAM) and the unit, fed over a link of dram_gbps,
// in the manner of SCALE-Sim (Samajdar et al.: SRAM buffers between DRAM and the array,
// DRAM bandwidth, stall cycles) and of the TCU paper's Sec. 5 (Theorem 12: a call is
// simulated by loading its operands into an internal memory and writing its result back).
//
// The model, per tensor-unit call C (r x s) [+]= A (r x s) B (s x s), s = sqrt(m), words of
// word_bits bits:
//  - left:    A's r s words come from DRAM into the buffer and are read by the unit:
//             DRAM read r s words, SRAM write r s, SRAM read r s.
//  - right:   B's s^2 words are read by the unit from the buffer (SRAM read s^2). They are
//             loaded from DRAM (DRAM read s^2, SRAM write s^2, a tile load) unless a tile
//             equal to B word for word (bit patterns) is resident (a tile hit). Resident
//             right tiles are kept least-recently-used, as many as fit beside the streaming
//             staging: double-buffered left and result tiles of s x s words, 4 s^2 words,
//             so capacity = floor((sram words - 4 s^2) / s^2) >= 1.
//  - result:  the unit writes r s words into the buffer, which drains them to DRAM
//             (SRAM write r s, SRAM read r s, DRAM write r s words). With accumulate the
//             partial sums come back first (DRAM read r s, SRAM write r s, SRAM read r s).
//  - time:    the call's DRAM bytes take ceil(bytes / (dram_gbps / clock_ghz)) cycles; the
//             buffer is double-buffered, so the transfer overlaps the call's compute cycles
//             and the unit stalls for max(0, transfer cycles - compute cycles).
// A host pass (the explicit convolution's lowering) moves DRAM bytes with no call to
// overlap: all of its transfer cycles are stall cycles. start_work_unit() empties the
// buffer (cold), so counts are sums over work units whichever rank runs them.
#include <array>
#include <cstddef>
#include <cstdint>
#include <vector>

#include "core/types.hpp"
#include "physical/mxu_memory.hpp"

namespace triada {

// Exact counters of the memory side; words for SRAM, bytes for DRAM.
struct MemoryCost {
  std::uint64_t sram_reads = 0, sram_writes = 0;            // words
  std::uint64_t dram_read_bytes = 0, dram_write_bytes = 0;  // bytes
  std::uint64_t tile_loads = 0, tile_hits = 0;              // right tiles loaded / reused
  std::uint64_t dram_cycles = 0;   // sum of the transfer cycles (calls and host passes)
  std::uint64_t stall_cycles = 0;  // cycles the unit waits for DRAM

  // The counters in declaration order (sums, reports, reductions over ranks).
  static constexpr std::size_t kCounters = 8;
  std::array<std::uint64_t, kCounters> values() const;
  static MemoryCost from_values(const std::uint64_t* v);

  MemoryCost& operator+=(const MemoryCost& o);
  bool operator==(const MemoryCost&) const = default;
};
MemoryCost operator-(MemoryCost a, const MemoryCost& b);

class MemorySide {
 public:
  // Throws config_error naming [mxu] sram_kib when not even one right tile fits beside the
  // staging (sram words < 5 s^2), or a bad parameter ([mxu] word_bits, dram_gbps, clock_ghz).
  MemorySide(const MxuMemoryParams& params, index_t side);

  // One call of r rows: B with leading dimension ldb; compute_cycles = the call's cycles
  // (ceil(r / s) s steps x the cell mode's sub-steps).
  void on_call(index_t r, const double* B, index_t ldb, bool accumulate,
               std::uint64_t compute_cycles);
  // A host pass reading and writing DRAM words while the unit waits (explicit lowering).
  void on_host_pass(std::uint64_t read_words, std::uint64_t write_words);
  // A new work unit starts with an empty buffer.
  void start_work_unit();

  const MemoryCost& cost() const { return cost_; }
  void reset() { cost_ = {}; }
  const MxuMemoryParams& params() const { return params_; }
  index_t side() const { return s_; }
  std::uint64_t tile_capacity() const { return capacity_; }
  // ceil(bytes clock_ghz / dram_gbps), exactly.
  std::uint64_t transfer_cycles(std::uint64_t bytes) const;

 private:
  static constexpr std::uint64_t kNone = ~std::uint64_t{0};
  // A resident right tile: its words are bits_[slot s^2, (slot + 1) s^2); prev/next link
  // the slots least-recently-used, most recent at head_.
  struct Slot {
    std::uint64_t hash, prev, next;
  };
  // The content index: open addressing with linear probing over a power-of-two table,
  // at most half full; an entry names its slot (kNone: empty) and keeps the slot's hash
  // so that a probe touches a tile's words only when the hashes agree.
  struct Entry {
    std::uint64_t hash = 0, slot = kNone;
  };
  // True if B is resident (and now most recent); otherwise loads it, evicting the least
  // recently used tile when full.
  bool touch_tile(const double* B, index_t ldb);
  // The slot holding B's words (bit patterns, compared word for word), else kNone.
  std::uint64_t find(const double* B, index_t ldb, std::uint64_t h) const;
  // B's words into a free slot, or the least recent one's when full; returns the slot.
  std::uint64_t load(const double* B, index_t ldb, std::uint64_t h);
  void insert_entry(std::uint64_t h, std::uint64_t slot);
  void erase_entry(std::uint64_t slot);  // backward-shift deletion, no tombstones
  void grow_table();
  void lru_unlink(std::uint64_t slot);
  void lru_push_front(std::uint64_t slot);

  MxuMemoryParams params_;
  index_t s_;
  std::uint64_t capacity_;
  MemoryCost cost_;
  std::vector<Slot> slots_;          // resident tiles (grows up to capacity_)
  std::vector<std::uint64_t> bits_;  // their words, s^2 per slot, row-major
  std::uint64_t head_ = kNone, tail_ = kNone;
  std::vector<Entry> table_;
  // The slot each recent call address (B, ldb) touched, direct-mapped: algorithms call the
  // same tiles from the same places over and over, and comparing the words with that
  // slot's first finds a hit without hashing. The words decide, as in find(): a rewritten
  // buffer misses there and goes on to find(); equal words are in one slot only (a hit is
  // never loaded twice), so a match is the slot find() would give. Every slot below
  // slots_.size() is resident (eviction reuses the slot at once); a new work unit clears it.
  struct Recent {
    const double* B = nullptr;
    index_t ldb = 0;
    std::uint64_t slot = kNone;
  };
  static constexpr std::size_t kRecent = 1024;  // a power of two
  std::vector<Recent> recent_;
};

}  // namespace triada
