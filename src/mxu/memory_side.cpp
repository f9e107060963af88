#include "mxu/memory_side.hpp"

#include <algorithm>
#include <bit>
#include <cstdint>
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
// tiles) do not collide; a splitmix64 finish. Four independent lanes (word i into lane
// i mod 4): the multiplies overlap instead of forming one chain of s^2 latencies. Only an
// index: equality is still checked word for word, so the hash never changes a count.
u64 tile_hash(const double* B, index_t ldb, index_t s) {
  u64 h[4] = {0x243F6A8885A308D3ull, 0x13198A2E03707344ull, 0xA4093822299F31D0ull,
              0x082EFA98EC4E6C89ull};
  index_t lane = 0;
  for (index_t i = 0; i < s; ++i)
    for (index_t k = 0; k < s; ++k, lane = (lane + 1) & 3)
      h[lane] = (std::rotl(h[lane], 29) ^ bits_of(B[i * ldb + k])) * 0x9E3779B97F4A7C15ull;
  u64 x = h[0];
  for (int j = 1; j < 4; ++j) x = (std::rotl(x, 29) ^ h[j]) * 0x9E3779B97F4A7C15ull;
  x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ull;
  x = (x ^ (x >> 27)) * 0x94D049BB133111EBull;
  return x ^ (x >> 31);
}

// True if the s x s tile at B holds the words `bits` (row-major), bit pattern for bit
// pattern (memcmp of each row: bytes equal exactly when the words' bits are).
bool same_words(const double* B, index_t ldb, index_t s, const u64* bits) {
  const auto row = static_cast<size_t>(s) * sizeof(double);
  if (ldb == s) return std::memcmp(B, bits, row * static_cast<size_t>(s)) == 0;  // one block
  for (index_t i = 0; i < s; ++i, bits += s)
    if (std::memcmp(B + i * ldb, bits, row) != 0) return false;
  return true;
}

// The recent-address table's entry for (B, ldb).
std::size_t recent_index(const double* B, index_t ldb, std::size_t size) {
  u64 a = reinterpret_cast<std::uintptr_t>(B) ^ (static_cast<u64>(ldb) << 48);
  a = (a ^ (a >> 29)) * 0xBF58476D1CE4E5B9ull;
  return static_cast<std::size_t>(a >> 32) & (size - 1);
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
    : params_(params), s_(side), capacity_(0), recent_(kRecent) {
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

bool MemorySide::touch_tile(const double* B, index_t ldb) {
  Recent& recent = recent_[recent_index(B, ldb, recent_.size())];
  // The words decide: a match is the one slot holding them, the slot find() would give.
  const bool seen = recent.B == B && recent.ldb == ldb && recent.slot < slots_.size() &&
                    same_words(B, ldb, s_, bits_.data() + recent.slot * static_cast<u64>(s_) * s_);
  const u64 h = seen ? 0 : tile_hash(B, ldb, s_);
  u64 slot = seen ? recent.slot : find(B, ldb, h);
  const bool hit = slot != kNone;
  if (hit)
    lru_unlink(slot);
  else
    slot = load(B, ldb, h);  // not seen: h is the tile's hash
  lru_push_front(slot);      // now the most recent
  recent = {B, ldb, slot};
  return hit;
}

u64 MemorySide::find(const double* B, index_t ldb, u64 h) const {
  if (table_.empty()) return kNone;
  const u64 mask = table_.size() - 1, tile = static_cast<u64>(s_) * static_cast<u64>(s_);
  for (u64 i = h & mask; table_[i].slot != kNone; i = (i + 1) & mask) {
    if (table_[i].hash != h) continue;
    if (same_words(B, ldb, s_, bits_.data() + table_[i].slot * tile)) return table_[i].slot;
  }
  return kNone;
}

u64 MemorySide::load(const double* B, index_t ldb, u64 h) {
  const u64 tile = static_cast<u64>(s_) * static_cast<u64>(s_);
  u64 slot = slots_.size();
  if (slot == capacity_) {  // full: the least recent tile's slot takes the new words
    slot = tail_;
    erase_entry(slot);
    lru_unlink(slot);
  } else {
    slots_.push_back({});
    bits_.resize(bits_.size() + tile);
  }
  u64* bits = bits_.data() + slot * tile;
  for (index_t r = 0; r < s_; ++r)
    std::memcpy(bits + r * s_, B + r * ldb, static_cast<size_t>(s_) * sizeof(double));
  slots_[slot].hash = h;
  insert_entry(h, slot);
  return slot;
}

void MemorySide::insert_entry(u64 h, u64 slot) {
  if (2 * (slots_.size() + 1) > table_.size()) grow_table();
  const u64 mask = table_.size() - 1;
  u64 i = h & mask;
  while (table_[i].slot != kNone) i = (i + 1) & mask;
  table_[i] = {h, slot};
}

void MemorySide::erase_entry(u64 slot) {
  const u64 mask = table_.size() - 1;
  u64 i = slots_[slot].hash & mask;
  while (table_[i].slot != slot) i = (i + 1) & mask;
  // Move back each later entry of the run whose home is not cyclically in (i, j].
  for (u64 j = (i + 1) & mask; table_[j].slot != kNone; j = (j + 1) & mask) {
    const u64 home = table_[j].hash & mask;
    const bool stays = i <= j ? (i < home && home <= j) : (i < home || home <= j);
    if (stays) continue;
    table_[i] = table_[j];
    i = j;
  }
  table_[i] = Entry{};
}

void MemorySide::grow_table() {
  std::vector<Entry> old = std::move(table_);
  table_.assign(std::max<size_t>(64, 2 * old.size()), Entry{});
  const u64 mask = table_.size() - 1;
  for (const Entry& e : old) {
    if (e.slot == kNone) continue;
    u64 i = e.hash & mask;
    while (table_[i].slot != kNone) i = (i + 1) & mask;
    table_[i] = e;
  }
}

void MemorySide::lru_unlink(u64 slot) {
  const Slot& t = slots_[slot];
  (t.prev == kNone ? head_ : slots_[t.prev].next) = t.next;
  (t.next == kNone ? tail_ : slots_[t.next].prev) = t.prev;
}

void MemorySide::lru_push_front(u64 slot) {
  slots_[slot].prev = kNone;
  slots_[slot].next = head_;
  (head_ == kNone ? tail_ : slots_[head_].prev) = slot;
  head_ = slot;
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
  slots_.clear();
  bits_.clear();
  table_.clear();  // grows again with the work unit's own tiles
  head_ = tail_ = kNone;
  std::fill(recent_.begin(), recent_.end(), Recent{});
}

}  // namespace triada
