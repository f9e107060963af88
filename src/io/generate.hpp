#pragma once
// Synthetic test tensors from a counter-based generator: every value is a pure function
// of (seed, stream, global index) through splitmix64, so any brick of the tensor can be
// generated on its own and the result does not depend on the rank layout. Used by
// triada-gen (files) and triada-bench (brick-local inputs, no file).
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "core/types.hpp"
#include "geometry/brick.hpp"

namespace triada {

// Value distributions: uniform in [-1, 1), normal (mean 0, sd 1), integers in [-9, 9],
// the global C-order index n1*N2*N3 + n2*N3 + n3, or ones.
enum class Dist { uniform, normal, integer, index, ones };
// "uniform" | "normal" | "int" | "index" | "ones"; throws config_error naming --dist.
Dist parse_dist(const std::string& word);

struct GenSpec {
  ext3 shape{};  // the whole tensor (N1, N2, N3)
  Dist dist = Dist::uniform;
  double sparsity = 0;     // each element zero independently with this probability
  double zero_lines = 0;   // exactly round(F * N1 * N2) (i1, i2) lines along axis 3 zero
  double zero_planes = 0;  // exactly round(F * N) planes orthogonal to plane_axis zero
  int plane_axis = 1;      // 1..3
  // N:M structured sparsity (NVIDIA's 2:4) along pattern_axis: of every group of M
  // consecutive elements (from index 0) N, chosen at random, keep their value and the
  // others are zero; a last group of r < M elements keeps min(N, r). pattern_m = 0: none.
  index_t pattern_n = 0;
  index_t pattern_m = 0;
  int pattern_axis = 3;  // 1..3
  std::uint64_t seed = 1;
};

// "N:M", or "none" without a pattern.
std::string sparsity_pattern_string(const GenSpec& spec);

// Counter-based randomness: splitmix64 finaliser, and the hash of (seed, stream, index).
std::uint64_t splitmix64(std::uint64_t x);
std::uint64_t counter_hash(std::uint64_t seed, std::uint64_t stream, std::uint64_t index);
// The top 53 bits of a hash as a double in [0, 1).
inline double unit_interval(std::uint64_t h) {
  return static_cast<double>(h >> 11) * 0x1.0p-53;
}

// Exactly m of the ids [0, n), chosen uniformly at random as the m smallest hashes of
// (seed, stream, id) (ties, practically absent, go to the lower id); every rank computes
// the same subset. Construction is O(n) time and memory.
class RandomSubset {
 public:
  RandomSubset(std::uint64_t seed, std::uint64_t stream, index_t n, index_t m);
  bool contains(index_t id) const;

 private:
  std::uint64_t hash(index_t id) const;
  std::uint64_t seed_, stream_;
  index_t m_;
  bool all_ = true;  // m >= n; cleared by the constructor otherwise
  std::uint64_t kth_ = 0;
  std::vector<index_t> ties_;
};

// The slab along axis 1 that rank `rank` of `size` generates (triada-gen).
inline Brick generator_slab(const ext3& shape, int size, int rank) {
  const Range r = split_range(shape[0], size, rank);
  return {{r.lo, 0, 0}, {r.hi, shape[1], shape[2]}};
}

// Bytes generate_brick needs for brick `b`: the brick in elements of `element_bytes`
// and the random pickers of zero lines and planes. Throws input_error naming `what` if
// a size overflows 64 bits.
std::uint64_t generate_bytes(const GenSpec& spec, const Brick& b, std::size_t element_bytes,
                             const std::string& what);

// Fills `out` with the brick `b` (clipped by the caller to the tensor) of the tensor
// `spec` describes, in C order of the brick, and returns its number of non-zeros.
// T is double or cplx (complex draws real and imaginary parts independently; index and
// ones have imaginary part 0). `on_plane` (if any) is called after each plane along axis 1
// with the planes done and the brick's total (triada-gen's progress).
using PlaneProgress = std::function<void(index_t done, index_t total)>;
template <class T>
index_t generate_brick(const GenSpec& spec, const Brick& b, std::vector<T>& out,
                       const PlaneProgress& on_plane = {});

extern template index_t generate_brick(const GenSpec&, const Brick&, std::vector<double>&,
                                       const PlaneProgress&);
extern template index_t generate_brick(const GenSpec&, const Brick&, std::vector<cplx>&,
                                       const PlaneProgress&);

}  // namespace triada
