#include "physical/offchip.hpp"

#include <algorithm>
#include <array>
#include <utility>

#include "physical/named_choices.hpp"

namespace triada {

namespace {

constexpr std::array<std::pair<const char*, MemoryKind>, 4> kKinds{{{"none", MemoryKind::none},
                                                                    {"hbm3", MemoryKind::hbm3},
                                                                    {"hbm2e", MemoryKind::hbm2e},
                                                                    {"ddr5", MemoryKind::ddr5}}};
constexpr std::array<std::pair<const char*, Overlap>, 2> kOverlaps{
    {{"none", Overlap::none}, {"double_buffer", Overlap::double_buffer}}};

double elements(const ext3& s) {
  return double(s[0]) * double(s[1]) * double(s[2]);
}

}  // namespace

std::string to_string(MemoryKind k) {
  return name_of(k, kKinds);
}
std::string to_string(Overlap o) {
  return name_of(o, kOverlaps);
}
MemoryKind parse_memory_kind(const std::string& s) {
  return parse_choice(s, kKinds, "a memory kind");
}
Overlap parse_overlap(const std::string& s) {
  return parse_choice(s, kOverlaps, "an overlap");
}

// Per chip; sources and the stacks or channels assumed: meshcfg/default.ini [memory].
MemoryKindFigures memory_kind_figures(MemoryKind k) {
  switch (k) {
    case MemoryKind::hbm3:
      return {3350, 3.9};  // 5 stacks, as the H100 SXM
    case MemoryKind::hbm2e:
      return {2039, 3.9};  // 5 stacks, as the A100 80GB
    case MemoryKind::ddr5:
      return {307.2, 15};  // 8 channels of DDR5-4800
    case MemoryKind::none:
      break;
  }
  return {};
}

std::vector<std::vector<int>> pass_stages(const Plan& plan, int passes) {
  const int n = static_cast<int>(plan.stages.size());
  std::vector<std::vector<int>> out(static_cast<size_t>(std::clamp(passes, 1, std::max(n, 1))));
  const int k = static_cast<int>(out.size());
  // The first pass takes the stages the later ones, one each, leave.
  for (int i = 0; i < n; ++i) out[static_cast<size_t>(std::max(0, i - (n - k)))].push_back(i);
  return out;
}

std::uint64_t held_block(const Plan& plan, int passes, Overlap overlap) {
  const auto f = [&](int axis) { return static_cast<std::uint64_t>(plan.fold[axis - 1]); };
  if (passes <= 1) return f(1) * f(2) * f(3);
  std::uint64_t block = 1;
  for (const std::vector<int>& group : pass_stages(plan, passes)) {
    std::uint64_t tile = 1;
    for (int i : group) tile *= f(plan.stages[static_cast<size_t>(i)].axis);
    block = std::max(block, tile);
  }
  return overlap == Overlap::double_buffer ? 2 * block : block;
}

std::uint64_t pass_tiles(const Plan& plan, const std::vector<int>& stages) {
  const ext3& shape = plan.stages[static_cast<size_t>(stages.front())].in_shape;
  std::uint64_t tiles = 1;
  for (int d = 0; d < 3; ++d) {
    const bool whole = std::any_of(stages.begin(), stages.end(), [&](int i) {
      return plan.stages[static_cast<size_t>(i)].axis == d + 1;
    });
    if (!whole) tiles *= static_cast<std::uint64_t>((shape[d] + plan.mesh[d] - 1) / plan.mesh[d]);
  }
  return tiles;
}

std::vector<PassTraffic> pass_traffic(const Plan& plan, int passes, int word_bits, bool initial,
                                      std::optional<double> actuator_bytes) {
  const double word = word_bits / 8.0;
  std::vector<PassTraffic> out;
  for (const std::vector<int>& group : pass_stages(plan, passes)) {
    PassTraffic t;
    t.stages = group;
    const StagePlan& first = plan.stages[static_cast<size_t>(group.front())];
    const StagePlan& last = plan.stages[static_cast<size_t>(group.back())];
    const double tiles = double(pass_tiles(plan, group));
    t.tiles = pass_tiles(plan, group);
    for (int i : group) {
      const StagePlan& sp = plan.stages[static_cast<size_t>(i)];
      const double c = double(sp.n()) * double(sp.k()) * word;
      const bool held = !actuator_bytes || c <= *actuator_bytes;
      t.coefficient_bytes += held ? c : c * tiles;
      if (held) t.held_coefficient_bytes += c;
    }
    t.bytes_read = elements(first.in_shape) * word + t.coefficient_bytes;
    t.bytes_written = elements(last.out_shape) * word;
    out.push_back(t);
  }
  if (initial && !out.empty()) out.back().bytes_read += elements(plan.out_shape) * word;
  return out;
}

}  // namespace triada
