#include "mxu/memory_side.hpp"

#include <algorithm>
#include <bit>
#include <cstring>
#include <string>

#include "core/error.hpp"

namespace triada {

namespace {

using u64 = std::uint64_t;
__extension__ using u128 = unsigned __int128;

// Double-buffered left and result tiles of s x s words (the model's staging).
constexpr u64 kStagingTiles = 4;

u64 bits_of(double v) {
  u64 b = 0;
  std::memcpy(&b, &v, sizeof b);
  return b;
}

// A tile's words folded into 64 bits, each word mixed in fully (rotate, xor, multiply by
// an odd constant) so that tiles differing only in high bits (small integers, sparse
// tiles) do not collide; a splitmix64 finish. Equality is still checked word for word.
u64 tile_hash(const double* B, index_t ldb, index_t s) {
  u64 h = 0x243F6A8885A308D3ull;
  for (index_t i = 0; i < s; ++i)
    for (index_t k = 0; k < s; ++k)
      h = (std::rotl(h, 29) ^ bits_of(B[i * ldb + k])) * 0x9E3779B97F4A7C15ull;
  h = (h ^ (h >> 30)) * 0xBF58476D1CE4E5B9ull;
  h = (h ^ (h >> 27)) * 0x94D049BB133111EBull;
  return h ^ (h >> 31);
}

void check_params(const MxuMemoryParams& p) {
  if (p.word_bits < 8 || p.word_bits > 128 || p.word_bits % 8 != 0)
    throw config_error("[mxu] word_bits: expected a multiple of 8 in [8, 128], got " +
                       std::to_string(p.word_bits));
  if (p.dram_gbps.num == 0 || p.dram_gbps.den == 0)
    throw config_error("[mxu] dram_gbps: expected a positive bandwidth");
  if (p.clock_ghz.num == 0 || p.clock_ghz.den == 0)
    throw config_error("[mxu] clock_ghz: expected a positive clock");
}

}  // namespace

std::array<u64, MemoryCost::kCounters> MemoryCost::values() const {
  return {sram_reads, sram_writes, dram_read_bytes, dram_write_bytes,
          tile_loads, tile_hits,   dram_cycles,     stall_cycles};
}

MemoryCost MemoryCost::from_values(const u64* v) {
  return {v[0], v[1], v[2], v[3], v[4], v[5], v[6], v[7]};
}

MemoryCost& MemoryCost::operator+=(const MemoryCost& o) {
  std::array<u64, kCounters> a = values();
  const std::array<u64, kCounters> b = o.values();
  for (std::size_t i = 0; i < kCounters; ++i) a[i] += b[i];
  return *this = from_values(a.data());
}

MemoryCost operator-(MemoryCost a, const MemoryCost& b) {
  std::array<u64, MemoryCost::kCounters> d = a.values();
  const std::array<u64, MemoryCost::kCounters> e = b.values();
  for (std::size_t i = 0; i < MemoryCost::kCounters; ++i) d[i] -= e[i];
  return MemoryCost::from_values(d.data());
}

MemorySide::MemorySide(const MxuMemoryParams& params, index_t side)
    : params_(params), s_(side), capacity_(0) {
  check_params(params_);
  if (side < 1) throw config_error("memory side: the unit's side must be >= 1");
  const u64 tile = static_cast<u64>(side) * static_cast<u64>(side);
  const u64 words = params_.sram_words();
  if (words / tile < kStagingTiles + 1)
    throw config_error("[mxu] sram_kib: " + std::to_string(params_.sram_kib) + " KiB holds " +
                       std::to_string(words) + " words of " + std::to_string(params_.word_bits) +
                       " bits; an MXU of side " + std::to_string(side) +
                       " needs at least 5 s^2 = " + std::to_string((kStagingTiles + 1) * tile) +
                       " (double-buffered left and result tiles and one right tile)");
  capacity_ = words / tile - kStagingTiles;
}

u64 MemorySide::transfer_cycles(u64 bytes) const {
  // bytes / (G num/den / (C num/den)) = bytes G.den C.num / (G.num C.den), rounded up.
  const Decimal &g = params_.dram_gbps, &c = params_.clock_ghz;
  const u128 top = u128{bytes} * g.den * c.num, bottom = u128{g.num} * c.den;
  return static_cast<u64>((top + bottom - 1) / bottom);
}

bool MemorySide::holds(const Tile& t, const double* B, index_t ldb) const {
  const std::uint64_t* bits = t.bits.data();
  const auto row = static_cast<size_t>(s_) * sizeof(double);
  for (index_t i = 0; i < s_; ++i)
    if (std::memcmp(B + i * ldb, bits + i * s_, row) != 0) return false;
  return true;
}

std::list<MemorySide::Tile>::iterator MemorySide::cached_at(const double* B, index_t ldb) {
  const auto c = at_.find(B);
  return c != at_.end() && holds(*c->second, B, ldb) ? c->second : lru_.end();
}

void MemorySide::remember(const double* B, std::list<Tile>::iterator it) {
  const auto old = at_.find(it->seen_at);
  if (old != at_.end() && old->second == it) at_.erase(old);
  it->seen_at = B;
  at_[B] = it;
}

bool MemorySide::touch_tile(const double* B, index_t ldb) {
  if (const auto hit = cached_at(B, ldb); hit != lru_.end()) {
    lru_.splice(lru_.begin(), lru_, hit);  // now the most recent
    return true;
  }
  const u64 h = tile_hash(B, ldb, s_);
  const auto [first, last] = index_.equal_range(h);
  for (auto it = first; it != last; ++it)
    if (holds(*it->second, B, ldb)) {
      lru_.splice(lru_.begin(), lru_, it->second);
      remember(B, it->second);
      return true;
    }
  load(B, ldb, h);
  return false;
}

void MemorySide::load(const double* B, index_t ldb, u64 h) {
  if (lru_.size() == capacity_) {  // the least recent tile's node takes the new words
    unlink(std::prev(lru_.end()));
    lru_.splice(lru_.begin(), lru_, std::prev(lru_.end()));
  } else {
    lru_.emplace_front();
    lru_.front().bits.resize(static_cast<size_t>(s_) * static_cast<size_t>(s_));
  }
  Tile& t = lru_.front();
  for (index_t i = 0; i < s_; ++i)
    std::memcpy(t.bits.data() + i * s_, B + i * ldb, static_cast<size_t>(s_) * sizeof(double));
  t.hash = h;
  t.seen_at = nullptr;
  index_.emplace(h, lru_.begin());
  remember(B, lru_.begin());
}

void MemorySide::unlink(std::list<Tile>::iterator victim) {
  const auto [vf, vl] = index_.equal_range(victim->hash);
  for (auto it = vf; it != vl; ++it)
    if (it->second == victim) {
      index_.erase(it);
      break;
    }
  const auto c = at_.find(victim->seen_at);
  if (c != at_.end() && c->second == victim) at_.erase(c);
}

void MemorySide::on_call(index_t r, const double* B, index_t ldb, bool accumulate,
                         u64 compute_cycles) {
  const u64 wb = params_.word_bytes(), rs = static_cast<u64>(r) * static_cast<u64>(s_),
            tile = static_cast<u64>(s_) * static_cast<u64>(s_);
  u64 dram_read = rs, dram_write = rs;  // words: left in, result out
  cost_.sram_writes += rs + rs;         // left staged, result written by the unit
  cost_.sram_reads += rs + tile + rs;   // left and right read by the unit, result drained
  if (touch_tile(B, ldb)) {
    ++cost_.tile_hits;
  } else {
    ++cost_.tile_loads;
    dram_read += tile;
    cost_.sram_writes += tile;
  }
  if (accumulate) {  // partial sums come back from DRAM and are read into the unit
    dram_read += rs;
    cost_.sram_writes += rs;
    cost_.sram_reads += rs;
  }
  cost_.dram_read_bytes += dram_read * wb;
  cost_.dram_write_bytes += dram_write * wb;
  const u64 transfer = transfer_cycles((dram_read + dram_write) * wb);
  cost_.dram_cycles += transfer;
  cost_.stall_cycles += transfer > compute_cycles ? transfer - compute_cycles : 0;
}

void MemorySide::on_host_pass(u64 read_words, u64 write_words) {
  const u64 wb = params_.word_bytes();
  cost_.dram_read_bytes += read_words * wb;
  cost_.dram_write_bytes += write_words * wb;
  const u64 transfer = transfer_cycles((read_words + write_words) * wb);
  cost_.dram_cycles += transfer;
  cost_.stall_cycles += transfer;  // no call overlaps a host pass
}

void MemorySide::start_work_unit() {
  lru_.clear();
  index_.clear();
  at_.clear();
}

}  // namespace triada
