#pragma once
// A brick is a rectangular box of cells (or tensor elements). Bounds are half-open:
// the brick holds index i along axis d iff lo[d] <= i < hi[d]. Decomposition,
// hyperslabs and bus segments are all computed from it (heFFTe's box3d).
#include <algorithm>
#include <array>

#include "core/types.hpp"

namespace triada {

struct Brick {
  ext3 lo{0, 0, 0};
  ext3 hi{0, 0, 0};

  index_t extent(int d) const { return std::max<index_t>(0, hi[d] - lo[d]); }
  ext3 extents() const { return {extent(0), extent(1), extent(2)}; }
  index_t count() const { return extent(0) * extent(1) * extent(2); }
  bool empty() const { return count() == 0; }
  bool contains(int d, index_t i) const { return lo[d] <= i && i < hi[d]; }
  Brick intersect(const Brick& o) const {
    Brick r;
    for (int d = 0; d < 3; ++d) {
      r.lo[d] = std::max(lo[d], o.lo[d]);
      r.hi[d] = std::max(r.lo[d], std::min(hi[d], o.hi[d]));
    }
    return r;
  }
  // Local C-order offset of a global index inside this brick.
  index_t local_offset(index_t i1, index_t i2, index_t i3) const {
    return ((i1 - lo[0]) * extent(1) + (i2 - lo[1])) * extent(2) + (i3 - lo[2]);
  }
  bool operator==(const Brick&) const = default;
};

inline Brick whole(const ext3& e) {
  return Brick{{0, 0, 0}, e};
}

// Block split of [0, n) into `parts` ranges differing by at most one element;
// the first n % parts ranges get the extra one. 64-bit throughout: a part may be a cell of
// an axis of 2^31 cells or more.
struct Range {
  index_t lo, hi;
};
inline Range split_range(index_t n, index_t parts, index_t idx) {
  const index_t base = n / parts, extra = n % parts;
  const index_t lo = idx * base + std::min<index_t>(idx, extra);
  return {lo, lo + base + (idx < extra ? 1 : 0)};
}
// Which part of split_range(n, parts, .) holds index i.
inline index_t owner_of(index_t n, index_t parts, index_t i) {
  const index_t base = n / parts, extra = n % parts;
  const index_t cut = extra * (base + 1);
  if (i < cut) return i / (base + 1);
  return extra + (i - cut) / base;
}

}  // namespace triada
