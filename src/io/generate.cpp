#include "io/generate.hpp"

#include <algorithm>
#include <cmath>
#include <numbers>
#include <utility>

#include "core/checked.hpp"
#include "core/error.hpp"

namespace triada {

namespace {

// One stream per independent use, so e.g. the sparsity mask is not correlated with values.
enum Stream : std::uint64_t {
  value_re = 1,
  value_im = 2,
  normal_re = 3,
  normal_im = 4,
  sparsity_mask = 5,
  line_pick = 6,
  plane_pick = 7,
  pattern_pick = 8,
};

double draw(const GenSpec& c, std::uint64_t stream, std::uint64_t box_muller_stream, index_t g) {
  const std::uint64_t h = counter_hash(c.seed, stream, static_cast<std::uint64_t>(g));
  switch (c.dist) {
    case Dist::uniform:
      return 2.0 * unit_interval(h) - 1.0;
    case Dist::normal: {
      const double u1 = static_cast<double>((h >> 11) + 1) * 0x1.0p-53;  // (0, 1]
      const double u2 =
          unit_interval(counter_hash(c.seed, box_muller_stream, static_cast<std::uint64_t>(g)));
      return std::sqrt(-2.0 * std::log(u1)) * std::cos(2.0 * std::numbers::pi * u2);
    }
    case Dist::integer:
      return static_cast<double>(static_cast<int>(h % 19) - 9);
    case Dist::index:
      return static_cast<double>(g);
    case Dist::ones:
      return 1.0;
  }
  return 0.0;
}

index_t rounded_count(double fraction, index_t n) {
  return static_cast<index_t>(std::llround(fraction * static_cast<double>(n)));
}

// Elements of a pattern group whose hashes are held at once.
index_t pattern_group(const GenSpec& c) {
  return c.pattern_m == 0 ? 0 : std::min(c.pattern_m, c.shape[c.pattern_axis - 1]);
}

// Zeroes in `out` (brick b, C order) the elements the N:M pattern drops: in each group
// along the axis, all but the N smallest hashes of (seed, pattern_pick, global index),
// ties to the lower position. A group may straddle bricks: every rank hashes all of it.
// Returns how many of the zeroed elements were non-zero.
template <class T>
index_t apply_pattern(const GenSpec& c, const Brick& b, std::vector<T>& out) {
  if (c.pattern_m == 0) return 0;
  const int a = c.pattern_axis - 1, p = (a + 1) % 3, q = (a + 2) % 3;
  const ext3 e = b.extents(), gs{c.shape[1] * c.shape[2], c.shape[2], 1};
  const ext3 ls{e[1] * e[2], e[2], 1};  // strides of the brick and of the tensor
  const index_t M = c.pattern_m, N = c.pattern_n;
  std::vector<std::pair<std::uint64_t, index_t>> keys(static_cast<size_t>(pattern_group(c)));
  index_t removed = 0;
  for (index_t ip = b.lo[p]; ip < b.hi[p]; ++ip) {
    for (index_t iq = b.lo[q]; iq < b.hi[q]; ++iq) {
      const index_t g_line = ip * gs[p] + iq * gs[q];
      const index_t l_line = (ip - b.lo[p]) * ls[p] + (iq - b.lo[q]) * ls[q];
      for (index_t g0 = b.lo[a] / M * M; g0 < b.hi[a]; g0 += M) {
        const index_t r = std::min(M, c.shape[a] - g0);
        if (r <= N) continue;
        for (index_t j = 0; j < r; ++j) {
          const auto g = static_cast<std::uint64_t>(g_line + (g0 + j) * gs[a]);
          keys[static_cast<size_t>(j)] = {counter_hash(c.seed, pattern_pick, g), j};
        }
        std::nth_element(keys.begin(), keys.begin() + N, keys.begin() + r);
        for (index_t j = N; j < r; ++j) {
          const index_t i = g0 + keys[static_cast<size_t>(j)].second;
          if (i < b.lo[a] || i >= b.hi[a]) continue;
          T& v = out[static_cast<size_t>(l_line + (i - b.lo[a]) * ls[a])];
          removed += !is_zero(v);
          v = T{};
        }
      }
    }
  }
  return removed;
}

}  // namespace

std::string sparsity_pattern_string(const GenSpec& spec) {
  if (spec.pattern_m == 0) return "none";
  return std::to_string(spec.pattern_n) + ":" + std::to_string(spec.pattern_m);
}

Dist parse_dist(const std::string& s) {
  if (s == "uniform") return Dist::uniform;
  if (s == "normal") return Dist::normal;
  if (s == "int") return Dist::integer;
  if (s == "index") return Dist::index;
  if (s == "ones") return Dist::ones;
  throw config_error("expected uniform, normal, int, index or ones, got '" + s + "'");
}

std::uint64_t splitmix64(std::uint64_t x) {
  x += 0x9e3779b97f4a7c15ULL;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
  return x ^ (x >> 31);
}

std::uint64_t counter_hash(std::uint64_t seed, std::uint64_t stream, std::uint64_t index) {
  return splitmix64(splitmix64(splitmix64(seed) ^ stream) ^ index);
}

RandomSubset::RandomSubset(std::uint64_t seed, std::uint64_t stream, index_t n, index_t m)
    : seed_(seed), stream_(stream), m_(m) {
  if (m <= 0 || m >= n) return;
  std::vector<std::uint64_t> keys(static_cast<size_t>(n));
  for (index_t id = 0; id < n; ++id) keys[id] = hash(id);
  std::vector<std::uint64_t> sorted = keys;
  std::nth_element(sorted.begin(), sorted.begin() + (m - 1), sorted.end());
  kth_ = sorted[m - 1];
  index_t below = 0;
  for (std::uint64_t k : keys) below += k < kth_;
  for (index_t id = 0; id < n && below + static_cast<index_t>(ties_.size()) < m; ++id)
    if (keys[id] == kth_) ties_.push_back(id);
  all_ = false;
}

bool RandomSubset::contains(index_t id) const {
  if (m_ <= 0) return false;
  if (all_) return true;
  const std::uint64_t h = hash(id);
  return h < kth_ || (h == kth_ && std::binary_search(ties_.begin(), ties_.end(), id));
}

std::uint64_t RandomSubset::hash(index_t id) const {
  return counter_hash(seed_, stream_, static_cast<std::uint64_t>(id));
}

std::uint64_t generate_bytes(const GenSpec& c, const Brick& b, std::size_t element_bytes,
                             const std::string& what) {
  using u64 = std::uint64_t;
  u64 bytes = checked_mul(checked_product<u64>(b.extents(), what), element_bytes, what);
  // A RandomSubset of n ids keeps their hashes and a sorted copy while it is built.
  auto subset = [&](double fraction, index_t n) {
    const index_t m = rounded_count(fraction, n);
    return m > 0 && m < n ? checked_mul(static_cast<u64>(n), u64{16}, what) : u64{0};
  };
  bytes = checked_add(bytes, subset(c.zero_lines, checked_mul(c.shape[0], c.shape[1], what)), what);
  bytes = checked_add(bytes, subset(c.zero_planes, c.shape[c.plane_axis - 1]), what);
  return checked_add(bytes, checked_mul(static_cast<u64>(pattern_group(c)), u64{16}, what), what);
}

template <class T>
index_t generate_brick(const GenSpec& c, const Brick& b, std::vector<T>& out,
                       const PlaneProgress& on_plane) {
  const auto [N1, N2, N3] = c.shape;
  const int pa = c.plane_axis - 1;
  const index_t n_lines = checked_mul(N1, N2, "shape " + to_string(c.shape));
  const RandomSubset lines(c.seed, line_pick, n_lines, rounded_count(c.zero_lines, n_lines));
  const RandomSubset planes(c.seed, plane_pick, c.shape[pa],
                            rounded_count(c.zero_planes, c.shape[pa]));
  out.assign(static_cast<size_t>(b.count()), T{});
  index_t nonzeros = 0;
  size_t k = 0;
  for (index_t i1 = b.lo[0]; i1 < b.hi[0]; ++i1) {
    for (index_t i2 = b.lo[1]; i2 < b.hi[1]; ++i2) {
      const bool line_zero = lines.contains(i1 * N2 + i2);
      for (index_t i3 = b.lo[2]; i3 < b.hi[2]; ++i3, ++k) {
        const index_t g = (i1 * N2 + i2) * N3 + i3;
        const index_t coord[3] = {i1, i2, i3};
        if (line_zero || planes.contains(coord[pa])) continue;
        if (c.sparsity > 0 &&
            unit_interval(counter_hash(c.seed, sparsity_mask, static_cast<std::uint64_t>(g))) <
                c.sparsity)
          continue;
        if constexpr (is_complex_v<T>) {
          const bool real_only = c.dist == Dist::index || c.dist == Dist::ones;
          out[k] = {draw(c, value_re, normal_re, g),
                    real_only ? 0.0 : draw(c, value_im, normal_im, g)};
        } else {
          out[k] = draw(c, value_re, normal_re, g);
        }
        nonzeros += !is_zero(out[k]);
      }
    }
    if (on_plane) on_plane(i1 + 1 - b.lo[0], b.hi[0] - b.lo[0]);
  }
  return nonzeros - apply_pattern(c, b, out);
}

template index_t generate_brick(const GenSpec&, const Brick&, std::vector<double>&,
                                const PlaneProgress&);
template index_t generate_brick(const GenSpec&, const Brick&, std::vector<cplx>&,
                                const PlaneProgress&);

}  // namespace triada
