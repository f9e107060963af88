// The MXU's memory side (mxu/memory_side.hpp): every counter against closed forms written
// out here from the model's definition (doc/design.md §13), on calls small enough to count
// by hand.
#include <algorithm>
#include <cmath>
#include <cstring>
#include <fstream>
#include <list>
#include <random>
#include <string>
#include <vector>

#include "config/mxu_keys.hpp"
#include "config/options.hpp"
#include "core/error.hpp"
#include "mxu/memory_side.hpp"
#include "mxu/tcu_io_bound.hpp"
#include "mxu/tensor_unit.hpp"
#include "support/catch.hpp"

using namespace triada;

namespace {

using u64 = std::uint64_t;

// s = 4 (m = 16), 8-byte words; 1 KiB = 128 words = 8 tiles of 16: 4 staging, 4 resident.
// 8 GB/s at 1 GHz: 8 bytes, one word, per cycle.
MxuMemoryParams small_params(const std::string& gbps = "8", const std::string& ghz = "1") {
  MxuMemoryParams p;
  p.sram_kib = 1;
  p.word_bits = 64;
  REQUIRE(parse_decimal(gbps, p.dram_gbps));
  REQUIRE(parse_decimal(ghz, p.clock_ghz));
  return p;
}

// A right tile whose words all differ from another id's.
std::vector<double> tile(int id, index_t s = 4) {
  std::vector<double> b(static_cast<size_t>(s * s));
  for (size_t i = 0; i < b.size(); ++i) b[i] = id * 1000.0 + static_cast<double>(i);
  return b;
}

}  // namespace

TEST_CASE("one cold call loads its left rows, its right tile and stores its results",
          "[mxu][memory]") {
  MemorySide mem(small_params(), 4);
  REQUIRE(mem.tile_capacity() == 4);  // (128 - 4 * 16) / 16
  const u64 r = 12, s = 4;
  const std::vector<double> b = tile(1);
  mem.on_call(12, b.data(), 4, false, 12);
  const MemoryCost& c = mem.cost();
  CHECK(c.sram_writes == r * s + s * s + r * s);  // left staged, right loaded, results
  CHECK(c.sram_reads == r * s + s * s + r * s);   // unit reads left and right, drain
  CHECK(c.dram_read_bytes == (r * s + s * s) * 8);
  CHECK(c.dram_write_bytes == r * s * 8);
  CHECK(c.tile_loads == 1);
  CHECK(c.tile_hits == 0);
  // 48 + 16 + 48 words at one word per cycle against 12 compute cycles.
  CHECK(c.dram_cycles == 112);
  CHECK(c.stall_cycles == 112 - 12);
}

TEST_CASE("a right tile equal word for word to a resident one is not loaded again",
          "[mxu][memory]") {
  MemorySide mem(small_params(), 4);
  const std::vector<double> b = tile(7), copy = tile(7);  // another buffer, same words
  std::vector<double> wide(4 * 9, -1.0);                  // the same tile inside ldb = 9
  for (int i = 0; i < 4; ++i)
    for (int k = 0; k < 4; ++k)
      wide[static_cast<size_t>(i * 9 + 2 + k)] = b[static_cast<size_t>(i * 4 + k)];
  mem.on_call(4, b.data(), 4, false, 4);
  const MemoryCost first = mem.cost();
  mem.on_call(4, copy.data(), 4, false, 4);
  mem.on_call(4, wide.data() + 2, 9, false, 4);
  const MemoryCost later = mem.cost() - first;
  CHECK(mem.cost().tile_loads == 1);
  CHECK(mem.cost().tile_hits == 2);
  CHECK(later.dram_read_bytes == 2 * 16 * 8);  // left rows only
  CHECK(later.sram_writes == 2 * (16 + 16));   // no tile written
  CHECK(later.sram_reads == 2 * (16 + 16 + 16));
  // A tile differing in one word (or only in the sign of a zero) is another tile.
  std::vector<double> other = tile(7);
  other[5] = -other[5];
  mem.on_call(4, other.data(), 4, false, 4);
  std::vector<double> zeros(16, 0.0), negzero(16, 0.0);
  negzero[0] = -0.0;
  mem.on_call(4, zeros.data(), 4, false, 4);
  mem.on_call(4, negzero.data(), 4, false, 4);
  CHECK(mem.cost().tile_loads == 4);
}

TEST_CASE("the least recently used tile is evicted when the buffer is full and reloaded later",
          "[mxu][memory]") {
  MemorySide mem(small_params(), 4);  // 4 resident tiles
  std::vector<std::vector<double>> t;
  for (int id = 0; id < 6; ++id) t.push_back(tile(id));
  const auto call = [&](int id) { mem.on_call(4, t[static_cast<size_t>(id)].data(), 4, false, 4); };
  for (int id : {0, 1, 2, 3}) call(id);  // 4 loads, full
  call(0);                               // hit: 0 is now the most recent, 1 the least
  call(4);                               // load, evicts 1
  CHECK(mem.cost().tile_loads == 5);
  CHECK(mem.cost().tile_hits == 1);
  call(0);  // still resident
  call(2);  // still resident
  CHECK(mem.cost().tile_hits == 3);
  call(1);  // evicted: reloaded (evicts 3, the least recent now)
  CHECK(mem.cost().tile_loads == 6);
  call(3);  // evicted by the reload of 1
  CHECK(mem.cost().tile_loads == 7);
  const u64 calls = 10;
  CHECK(mem.cost().dram_read_bytes == (calls * 16 + 7 * 16) * 8);
}

TEST_CASE("one buffer rewritten between calls is looked up by its words, not its address",
          "[mxu][memory]") {
  // Random tiles written into one of two staging buffers, as the algorithms do; loads and
  // hits against an LRU of 4 over the tiles' words, kept here.
  MemorySide mem(small_params(), 4);
  std::vector<double> staging[2] = {tile(0), tile(0)};
  std::vector<int> lru;  // ids, most recent first
  u64 loads = 0, hits = 0;
  std::uint64_t x = 12345;
  for (int call = 0; call < 400; ++call) {
    x = x * 6364136223846793005ULL + 1442695040888963407ULL;
    const int id = static_cast<int>((x >> 33) % 7), buf = static_cast<int>((x >> 40) & 1);
    staging[buf] = tile(id);
    mem.on_call(4, staging[buf].data(), 4, false, 4);
    const auto at = std::find(lru.begin(), lru.end(), id);
    if (at != lru.end()) {
      ++hits;
      lru.erase(at);
    } else {
      ++loads;
      if (lru.size() == 4) lru.pop_back();
    }
    lru.insert(lru.begin(), id);
  }
  CHECK(mem.cost().tile_loads == loads);
  CHECK(mem.cost().tile_hits == hits);
  CHECK(hits > 50);
  CHECK(loads > 50);
}

TEST_CASE("an address called again is decided by the words now there, whatever it held",
          "[mxu][memory]") {
  // The memory side remembers which slot an address touched last; that slot may since
  // hold another tile, and the address other words. Capacity 4: tile 0 at `at` goes to
  // slot 0; tiles 1..4 from elsewhere evict it, tile 4 taking slot 0.
  // Tiles contiguous (ldb 4) and rows 7 words apart in a wider buffer (ldb 7).
  for (const index_t ldb : {4, 7}) {
    INFO("ldb " << ldb);
    const auto wide = [&](int id) {  // tile(id)'s rows at ldb apart, the gaps other words
      std::vector<double> b(static_cast<size_t>(3 * ldb + 4), -1.0 - id);
      const std::vector<double> t = tile(id);
      for (index_t i = 0; i < 4; ++i) std::copy_n(t.begin() + i * 4, 4, b.begin() + i * ldb);
      return b;
    };
    MemorySide mem(small_params(), 4);
    std::vector<double> at = wide(0);
    std::vector<std::vector<double>> other = {wide(1), wide(2), wide(3), wide(4)};
    mem.on_call(4, at.data(), ldb, false, 4);
    for (const auto& b : other) mem.on_call(4, b.data(), ldb, false, 4);
    REQUIRE(mem.cost().tile_loads == 5);
    at = wide(4);  // slot 0's words now: resident, a hit
    mem.on_call(4, at.data(), ldb, false, 4);
    CHECK(mem.cost().tile_hits == 1);
    at = wide(0);  // evicted: a load
    mem.on_call(4, at.data(), ldb, false, 4);
    CHECK(mem.cost().tile_loads == 6);
    at = wide(2);  // resident in another slot than the address last touched: a hit
    mem.on_call(4, at.data(), ldb, false, 4);
    CHECK(mem.cost().tile_hits == 2);
    at[static_cast<size_t>(2 * ldb + 3)] += 1.0;  // one word of row 2 off: new words, a load
    mem.on_call(4, at.data(), ldb, false, 4);
    CHECK(mem.cost().tile_loads == 7);
    mem.start_work_unit();  // empty again: the same address and words load
    mem.on_call(4, at.data(), ldb, false, 4);
    CHECK(mem.cost().tile_loads == 8);
  }
}

namespace {

// The model of mxu/memory_side.hpp written out plainly, as the oracle of the randomized
// test below: resident right tiles as a list of bit-pattern vectors, most recent first,
// found by a linear scan; 34 GB/s at 0.7 GHz moves 340 bytes in 7 cycles.
struct ReferenceMemory {
  u64 s, capacity, word_bytes;
  std::list<std::vector<u64>> resident;
  MemoryCost c;

  static u64 cycles(u64 bytes) { return (bytes * 7 + 339) / 340; }

  void call(u64 r, const double* B, u64 ldb, bool accumulate, u64 compute) {
    std::vector<u64> words(s * s);
    for (u64 i = 0; i < s; ++i) std::memcpy(&words[i * s], B + i * ldb, s * sizeof(double));
    const auto at = std::find(resident.begin(), resident.end(), words);
    const bool hit = at != resident.end();
    if (hit)
      resident.erase(at);
    else if (resident.size() == capacity)
      resident.pop_back();
    resident.push_front(words);
    const u64 rs = r * s, load = hit ? 0 : s * s, back = accumulate ? rs : 0;
    c.tile_hits += hit ? 1 : 0;
    c.tile_loads += hit ? 0 : 1;
    c.sram_writes += rs + load + back + rs;
    c.sram_reads += rs + s * s + back + rs;
    host(rs + load + back, rs, compute);
  }

  void host(u64 read_words, u64 write_words, u64 compute) {
    c.dram_read_bytes += read_words * word_bytes;
    c.dram_write_bytes += write_words * word_bytes;
    const u64 t = cycles((read_words + write_words) * word_bytes);
    c.dram_cycles += t;
    c.stall_cycles += t > compute ? t - compute : 0;
  }
};

// Random calls on both memories: tiles rewritten in staging buffers, called where they
// live, inside a wider array, after an in-place change of one word, equal contents at
// different addresses (the pool repeats itself), host passes and new work units.
struct RandomCalls {
  u64 s;
  std::mt19937_64 rng;
  std::vector<std::vector<double>> pool, staging;
  std::vector<double> wide;

  RandomCalls(u64 side, u64 pool_size, u64 seed) : s(side), rng(seed) {
    for (u64 i = 0; i < pool_size; ++i)
      pool.push_back(i > 0 && pick(5) == 0 ? pool[pick(i)] : fresh(s * s));
    staging.assign(3, std::vector<double>(s * s));
  }
  u64 pick(u64 n) { return std::uniform_int_distribution<u64>(0, n - 1)(rng); }
  double word() {  // few values, both zeros: equal and almost equal tiles are common
    static constexpr double kWords[] = {0.0, -0.0, 1.0, -1.0, 2.0, 0.5};
    return kWords[pick(6)];
  }
  std::vector<double> fresh(u64 n) {
    std::vector<double> v(n);
    for (double& x : v) x = word();
    return v;
  }
  // The next call's right tile: its first word and leading dimension.
  std::pair<const double*, u64> tile() {
    const u64 kind = pick(100), id = pick(pool.size());
    std::vector<double>& t = pool[id];
    if (kind < 40) {
      std::vector<double>& b = staging[pick(staging.size())];
      b = t;
      return {b.data(), s};
    }
    if (kind < 65) return {t.data(), s};
    if (kind < 85) {
      const u64 ld = s + 3, off = pick(4);
      wide = fresh(s * ld);
      for (u64 i = 0; i < s; ++i)
        std::copy(t.begin() + i * s, t.begin() + (i + 1) * s, wide.begin() + i * ld + off);
      return {wide.data() + off, ld};
    }
    t[pick(t.size())] = word();
    return {t.data(), s};
  }
};

}  // namespace

TEST_CASE("the counters equal a plain LRU model's over long random call sequences",
          "[mxu][memory]") {
  // (side, word bits): capacities 28, 10, 12, 1 and 252 right tiles in 1 KiB.
  const std::pair<u64, u64> cases[] = {{2, 64}, {3, 64}, {4, 32}, {5, 64}, {2, 8}};
  for (const auto& [s, bits] : cases) {
    CAPTURE(s, bits);
    MxuMemoryParams p;
    p.sram_kib = 1;
    p.word_bits = bits;
    MemorySide mem(p, static_cast<index_t>(s));
    ReferenceMemory ref{s, 1024 * 8 / bits / (s * s) - 4, bits / 8, {}, {}};
    REQUIRE(mem.tile_capacity() == ref.capacity);
    RandomCalls gen(s, 2 * ref.capacity + 3, 1000 * s + bits);
    const int calls = 20000;
    int first_mismatch = -1;
    for (int k = 0; k < calls; ++k) {
      if (gen.pick(500) == 0) {
        mem.start_work_unit();
        ref.resident.clear();
      }
      if (gen.pick(50) == 0) {
        const u64 rd = gen.pick(100), wr = gen.pick(100);
        mem.on_host_pass(rd, wr);
        ref.host(rd, wr, 0);
      }
      const auto [B, ldb] = gen.tile();
      const u64 r = 1 + gen.pick(3 * s), compute = gen.pick(200);
      const bool accumulate = gen.pick(2) == 1;
      mem.on_call(static_cast<index_t>(r), B, static_cast<index_t>(ldb), accumulate, compute);
      ref.call(r, B, ldb, accumulate, compute);
      if (first_mismatch < 0 && !(mem.cost() == ref.c)) first_mismatch = k;
    }
    CHECK(first_mismatch == -1);
    for (std::size_t i = 0; i < MemoryCost::kCounters; ++i) {
      CAPTURE(i);  // the counter, in MemoryCost's declaration order
      CHECK(mem.cost().values()[i] == ref.c.values()[i]);
    }
    // The sequence exercised hits, evictions and reloads.
    CHECK(ref.c.tile_hits > calls / 20);
    CHECK(ref.c.tile_loads > 2 * ref.capacity);
  }
}

TEST_CASE("a new work unit starts with an empty buffer", "[mxu][memory]") {
  MemorySide mem(small_params(), 4);
  const std::vector<double> b = tile(3);
  mem.on_call(4, b.data(), 4, false, 4);
  mem.on_call(4, b.data(), 4, false, 4);
  mem.start_work_unit();
  mem.on_call(4, b.data(), 4, false, 4);
  CHECK(mem.cost().tile_loads == 2);
  CHECK(mem.cost().tile_hits == 1);
}

TEST_CASE("an accumulating call reads its partial sums back from DRAM", "[mxu][memory]") {
  MemorySide plain(small_params(), 4), acc(small_params(), 4);
  const std::vector<double> b = tile(2);
  const u64 r = 8, s = 4;
  plain.on_call(8, b.data(), 4, false, 8);
  acc.on_call(8, b.data(), 4, true, 8);
  const MemoryCost d = acc.cost() - plain.cost();
  CHECK(d.dram_read_bytes == r * s * 8);
  CHECK(d.dram_write_bytes == 0);
  CHECK(d.sram_writes == r * s);
  CHECK(d.sram_reads == r * s);
  CHECK(d.stall_cycles == r * s);  // one word per cycle, compute already covered
}

TEST_CASE("the unit stalls only when DRAM cannot deliver a call's words in its cycles",
          "[mxu][memory]") {
  const std::vector<double> b = tile(4);
  const u64 r = 16, s = 4, bytes = (r * s + s * s + r * s) * 8;  // 1152
  // Short: 8 GB/s at 1 GHz = 8 bytes per cycle: 144 transfer cycles against 16.
  MemorySide short_bw(small_params("8", "1"), 4);
  short_bw.on_call(16, b.data(), 4, false, 16);
  CHECK(short_bw.cost().stall_cycles == bytes / 8 - 16);
  // Ample: 100 GB/s at 0.5 GHz = 200 bytes per cycle: ceil(1152 / 200) = 6 <= 16.
  MemorySide ample(small_params("100", "0.5"), 4);
  ample.on_call(16, b.data(), 4, false, 16);
  CHECK(ample.cost().dram_cycles == 6);
  CHECK(ample.cost().stall_cycles == 0);
  // Bytes per cycle is exact: 34 GB/s at 0.7 GHz moves 340 bytes in exactly 7 cycles.
  MemorySide tpu(MxuMemoryParams{}, 4);
  CHECK(tpu.transfer_cycles(340) == 7);
  CHECK(tpu.transfer_cycles(341) == 8);
  CHECK(tpu.transfer_cycles(0) == 0);
  // A host pass has no call to overlap: all of its transfer is stall.
  MemorySide host(small_params("8", "1"), 4);
  host.on_host_pass(10, 6);
  CHECK(host.cost().dram_read_bytes == 80);
  CHECK(host.cost().dram_write_bytes == 48);
  CHECK(host.cost().stall_cycles == 16);
}

TEST_CASE("the tensor unit reports each call with its cycles to the memory side", "[mxu][memory]") {
  TensorUnit unit(16, 3);
  MemorySide mem(small_params(), 4);
  unit.set_memory(&mem);
  const index_t r = 9;  // ceil(9 / 4) = 3 chunks of 4 steps: 12 compute cycles
  std::vector<double> A(static_cast<size_t>(r * 4), 1.0), C(static_cast<size_t>(r * 4), 0.0);
  const std::vector<double> b = tile(5);
  unit.multiply(r, A.data(), 4, b.data(), 4, C.data(), 4, false);
  unit.multiply(r, A.data(), 4, b.data(), 4, C.data(), 4, true);
  const u64 rs = 36;
  CHECK(mem.cost().tile_loads == 1);
  CHECK(mem.cost().tile_hits == 1);
  CHECK(mem.cost().dram_read_bytes == (rs + 16 + rs + rs) * 8);
  CHECK(mem.cost().dram_write_bytes == 2 * rs * 8);
  CHECK(mem.cost().stall_cycles == (rs + 16 + rs - 12) + (rs + rs + rs - 12));
  unit.start_work_unit();
  unit.multiply(r, A.data(), 4, b.data(), 4, C.data(), 4, false);
  CHECK(mem.cost().tile_loads == 2);
}

TEST_CASE("a buffer too small for the staging and one right tile is refused by its key",
          "[mxu][memory]") {
  MxuMemoryParams p = small_params();  // 128 words: side 5 needs 5 x 25 = 125, side 6 180
  CHECK(MemorySide(p, 5).tile_capacity() == 1);
  CHECK_THROWS_AS(MemorySide(p, 6), config_error);
  CHECK_THROWS_WITH(MemorySide(p, 6), Catch::Contains("[mxu] sram_kib"));
  const std::string ini = "/tmp/triada_unit_mxu_keys.ini";
  std::ofstream(ini) << "[mxu]\nsram_kib = 2\nword_bits = 16\ndram_gbps = 12.8\nclock_ghz = 1.5\n";
  const MeshConfig m = parse_mesh_file(ini);
  CHECK(m.mxu.sram_kib == 2);
  CHECK(m.mxu.sram_words() == 1024);
  CHECK(m.mxu.dram_gbps.num == 128);
  CHECK(m.mxu.dram_gbps.den == 10);
  CHECK(m.mxu.clock_ghz.num == 15);
  for (const char* bad : {"sram_kib = 0", "word_bits = 12", "dram_gbps = 0", "dram_gbps = 1e3",
                          "clock_ghz = -1", "clock_ghz = .5", "dram_gbps = 1.2345678"}) {
    CAPTURE(bad);
    std::ofstream(ini) << "[mxu]\n" << bad << "\n";
    const std::string key = std::string(bad).substr(0, std::string(bad).find(' '));
    CHECK_THROWS_WITH(parse_mesh_file(ini), Catch::Contains("[mxu] " + key));
  }
}

TEST_CASE("the matrix product's I/O lower bound at M = 3m has the hand-computed value",
          "[mxu][memory]") {
  // side 64, m = 16: M = 48, 64^3 / (2 sqrt(2) sqrt(48)) = 262144 / (8 sqrt(6)) =
  // 32768 / sqrt(6) = 13377.48..., minus M.
  const IoLowerBound b = tcu_io_lower_bound("matmul", 64, 16);
  REQUIRE(b.value);
  CHECK(*b.value == Approx(32768.0 / std::sqrt(6.0) - 48.0).epsilon(1e-12));
  CHECK(*b.value == Approx(13329.48).margin(0.01));
  CHECK_THAT(b.source, Catch::Contains("Irony"));
  // Below the memory's own size the bound says nothing: 512 / sqrt(384) < 48.
  CHECK(*tcu_io_lower_bound("matmul", 8, 16).value == 0.0);
  // No value where no bound for the problem is known, with the reason.
  for (const char* algo : {"dft", "strassen", "ge", "polyeval"}) {
    CAPTURE(algo);
    const IoLowerBound u = tcu_io_lower_bound(algo, 64, 16);
    CHECK_FALSE(u.value);
    CHECK_FALSE(u.reason.empty());
  }
}
