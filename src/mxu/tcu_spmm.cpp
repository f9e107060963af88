// Theorem 3 (Sec. 4.1): sparse matrix multiplication, output-sensitive, for any real values.
//
// Compression (the hashing idea of the paper's reference [12]): the rows of A are hashed
// into b buckets, the columns of B into b buckets, and the dense product of the compressed
// b x sqrt(n) and sqrt(n) x b matrices gives, for each bucket (a, c), the sum of the entries
// c_ij of C with h(i) = a and g(j) = c. With b about sqrt(Z) this is Theorem 3's product of
// a sqrt(Z) x sqrt(n) by a sqrt(n) x sqrt(Z) matrix, run with the fast product (Strassen,
// Theorem 1) the theorem assumes or with Theorem 2's classical blocking.
//
// Why a sketch of the values alone works only for positive integers: a bucket is decoded
// from S0 = sum c, S1 = sum w c, S2 = sum w^2 c (weights w that tell the rows apart). For
// positive c, S0 S2 = S1^2 (Cauchy-Schwarz equality) holds only if the bucket holds one
// entry, and S0 = 0 only if it holds none; with mixed signs both fail (entries cancel), and
// the exact division and equality tests fail for fractional values, which round.
//
// So the positions and the values are found apart:
//  1. Positions: the same sketch on the 0/1 patterns of A and B. Its "values" are the
//     counts c_ij = #{k : A_ik != 0, B_kj != 0}, positive integers, so the singleton test
//     is exact (weights w = 1 + the row's rank among its bucket's rows, which keeps every
//     sum small; each round is checked to stay below 2^53, where binary64 is exact).
//     Decoded entries are subtracted from later rounds' sketches (the residual), rounds
//     with fresh hashes repeat until no bucket is left unresolved, b = ceil(sqrt(U)) for
//     the U entries still unknown; once b would reach sqrt(n) the hash is the identity.
//  2. Values: a value sketch (A's and B's real values hashed alike) read only in buckets
//     that hold exactly one output position, known from step 1. There every nonzero term
//     of the bucket's dot product, sum_k SA[a][k] SB[k][c], is A_ik B_kj of that entry (any
//     other pair of rows and columns in the bucket would be a second position), so the
//     bucket's value is that entry's dot product plus exact zeros: exact for integers,
//     within the dot-product bound for reals (Strassen's bound with the fast product).
//     Rounds hash only the rows and columns of entries still without a value, with
//     b = ceil(sqrt(2 T)) for the T positions among them, and end with the identity.
// Entries whose value is exactly zero (cancellation) are dropped from the output.
//
// Cost: every product on the unit; per round O(I) CPU work for the sketches and O(b^2) for
// the scan; hashing and index arithmetic are free (tcu_products.cpp's convention).
#include <algorithm>
#include <array>
#include <cmath>
#include <limits>
#include <numeric>
#include <random>
#include <string>
#include <unordered_map>
#include <vector>

#include "core/error.hpp"
#include "mxu/tcu_algorithms.hpp"
#include "mxu/tcu_error_bounds.hpp"
#include "mxu/tcu_inputs.hpp"
#include "mxu/tcu_linear_algebra.hpp"

namespace triada {
namespace {

using Mat = std::vector<double>;

constexpr index_t kMaxDenseSide = 4096;   // --input: dense /A and /B
constexpr index_t kMaxSparseSide = 8192;  // generated
constexpr index_t kSpmmPerRow = 3;        // generated: nonzeros per row of A and of B
constexpr int kMaxRounds = 200;
const double kExact = std::ldexp(1.0, 53);  // integers below it are exact in binary64

size_t sz(index_t v) {
  return static_cast<size_t>(v);
}
double dbl(index_t v) {
  return static_cast<double>(v);
}
std::uint64_t u64(index_t v) {
  return static_cast<std::uint64_t>(v);
}
bool by_position(const SparseEntry& x, const SparseEntry& y) {
  return x.row != y.row ? x.row < y.row : x.col < y.col;
}

// The count sketch's products are not exact integers: the unit computes in a cell mode
// below binary64, so the positions cannot be decoded.
struct inexact_sketch : error {
  using error::error;
};

// A hash of the indices 0..side-1 (those with mask[i] set, if a mask is given) into
// `buckets`; identity = the included indices in order, one per bucket. rank[i] is i's
// place among its bucket's indices, members[a] the bucket's indices in that order.
struct Hash {
  index_t buckets = 0;
  std::vector<index_t> of, rank;
  std::vector<std::vector<index_t>> members;
};
Hash make_hash(index_t side, index_t buckets, bool identity, std::mt19937_64& gen,
               const std::vector<char>* mask = nullptr) {
  Hash h;
  h.buckets = buckets;
  h.of.assign(sz(side), -1);
  h.rank.assign(sz(side), -1);
  h.members.resize(sz(buckets));
  std::uniform_int_distribution<index_t> pick(0, buckets - 1);
  index_t next = 0;
  for (index_t i = 0; i < side; ++i) {
    if (mask && !(*mask)[sz(i)]) continue;
    const index_t a = identity ? next++ : pick(gen);
    h.of[sz(i)] = a;
    h.rank[sz(i)] = static_cast<index_t>(h.members[sz(a)].size());
    h.members[sz(a)].push_back(i);
  }
  return h;
}

// Every partial sum of a classical product of depth K is at most K alpha beta (alpha, beta:
// the largest operand magnitudes). In Strassen on D x D blocks (Theorem 1) operands at depth
// t are sums of up to 2^t entries, and a node of side h sums four products of h/2-sided
// blocks of entries <= 2^t alpha, 2^t beta, so every intermediate is at most
// strassen_reach(D, s) alpha beta; the depth chunks' sum is at most K alpha beta.
double strassen_reach(index_t D, index_t s) {
  return 8.0 * dbl(D) * dbl(D) / dbl(s);
}

// The count sketch must stay exact (its entries are >= 0).
void check_exact_counts(double alpha, double beta, index_t K, index_t D, index_t s,
                        TcuProduct product, int round) {
  const double reach =
      (product == TcuProduct::fast ? std::max(strassen_reach(D, s), dbl(K)) : dbl(K)) * alpha *
      beta;
  if (reach < kExact) return;
  throw input_error("spmm: the count sketch of round " + std::to_string(round) +
                    " needs integers up to " + std::to_string(reach) +
                    ", beyond 2^53 where binary64 is exact (the input is too dense)");
}

// The unit's product entries as exact non-negative integers, or inexact_sketch.
std::vector<std::int64_t> as_counts(const Mat& P) {
  std::vector<std::int64_t> out(P.size());
  for (size_t e = 0; e < P.size(); ++e) {
    if (!(P[e] >= 0) || P[e] != std::nearbyint(P[e]) || P[e] >= kExact)
      throw inexact_sketch("spmm: the count sketch is not exact integers (cell mode below fp64)");
    out[e] = static_cast<std::int64_t>(P[e]);
  }
  return out;
}

// One round's sketches of the patterns: S = [S0; S1; S2] (rows weighted 1, w, w^2) and
// T = [T1, T2] (columns weighted w, w^2), b x b each, from the unit.
struct CountSketch {
  std::vector<std::int64_t> S, T;
};
CountSketch count_sketch(TensorUnit& u, const std::vector<SparseEntry>& A,
                         const std::vector<SparseEntry>& B, const Hash& h, const Hash& g,
                         index_t Kp, TcuProduct product, int round) {
  const index_t b = h.buckets;
  Mat SA(sz(3 * b * Kp), 0.0), SB0(sz(Kp * b), 0.0), SB12(sz(Kp * 2 * b), 0.0);
  for (const auto& e : A) {
    const double w = dbl(h.rank[sz(e.row)] + 1);
    SA[sz(h.of[sz(e.row)] * Kp + e.col)] += 1;
    SA[sz((b + h.of[sz(e.row)]) * Kp + e.col)] += w;
    SA[sz((2 * b + h.of[sz(e.row)]) * Kp + e.col)] += w * w;
  }
  for (const auto& e : B) {
    const double w = dbl(g.rank[sz(e.col)] + 1);
    SB0[sz(e.row * b + g.of[sz(e.col)])] += 1;
    SB12[sz(e.row * 2 * b + g.of[sz(e.col)])] += w;
    SB12[sz(e.row * 2 * b + b + g.of[sz(e.col)])] += w * w;
  }
  u.cpu(4 * u64(static_cast<index_t>(A.size() + B.size())));  // w^2 and three additions each
  const double alpha = *std::max_element(SA.begin(), SA.end());
  const double beta = std::max(*std::max_element(SB0.begin(), SB0.end()),
                               *std::max_element(SB12.begin(), SB12.end()));
  check_exact_counts(alpha, beta, Kp, fast_product_side(u.side(), b, Kp, b), u.side(), product,
                     round);
  const Mat SA0(SA.begin(), SA.begin() + b * Kp);
  return {as_counts(tcu_product(u, 3 * b, Kp, b, SA, SB0, product)),
          as_counts(tcu_product(u, b, Kp, 2 * b, SA0, SB12, product))};
}

// A bucket of count v with weighted sums w1 = sum w c, w2 = sum w^2 c holds one entry iff
// w1 = q v and w2 = q^2 v (Cauchy-Schwarz equality, counts > 0); q is its weight, the
// rank + 1 among the bucket's `members` indices. Range first, so no product overflows.
bool single(std::int64_t v, std::int64_t w1, std::int64_t w2, size_t members, std::int64_t& q) {
  if (w1 % v != 0) return false;
  q = w1 / v;
  return q >= 1 && q <= static_cast<std::int64_t>(members) && w2 % v == 0 && w2 / v == q * q;
}

// Decodes one round: subtracts the known positions from the sketch, then takes every
// bucket whose residual is one entry (S1 = q S0, S2 = q^2 S0, T1 = q' S0, T2 = q'^2 S0).
// Appends the new positions (value: the count) to `found`; returns the unresolved buckets.
index_t decode_round(TensorUnit& u, CountSketch& k, const Hash& h, const Hash& g,
                     std::vector<SparseEntry>& found, index_t& recovered) {
  const index_t b = h.buckets;
  const auto at = [b](index_t part, index_t e) { return sz(part * b * b + e); };
  for (const auto& f : found) {
    const index_t e = h.of[sz(f.row)] * b + g.of[sz(f.col)];
    const auto v = static_cast<std::int64_t>(f.v), wi = h.rank[sz(f.row)] + 1,
               wj = g.rank[sz(f.col)] + 1;
    k.S[at(0, e)] -= v;
    k.S[at(1, e)] -= wi * v;
    k.S[at(2, e)] -= wi * wi * v;
    k.T[sz((e / b) * 2 * b + e % b)] -= wj * v;
    k.T[sz((e / b) * 2 * b + b + e % b)] -= wj * wj * v;
  }
  u.cpu(9 * u64(static_cast<index_t>(found.size())));
  index_t unresolved = 0, nonempty = 0;
  recovered = 0;
  const size_t before = found.size();
  for (index_t e = 0; e < b * b; ++e) {
    const std::int64_t v = k.S[at(0, e)];
    if (v < 0) throw inexact_sketch("spmm: a negative residual count (cell mode below fp64)");
    if (v == 0) continue;
    ++nonempty;
    const std::int64_t s1 = k.S[at(1, e)], s2 = k.S[at(2, e)];
    const std::int64_t t1 = k.T[sz((e / b) * 2 * b + e % b)];
    const std::int64_t t2 = k.T[sz((e / b) * 2 * b + b + e % b)];
    const auto& rows = h.members[sz(e / b)];
    const auto& cols = g.members[sz(e % b)];
    std::int64_t qi = 0, qj = 0;
    if (single(v, s1, s2, rows.size(), qi) && single(v, t1, t2, cols.size(), qj))
      found.push_back({rows[sz(qi - 1)], cols[sz(qj - 1)], static_cast<double>(v)});
    else
      ++unresolved;
  }
  recovered = static_cast<index_t>(found.size() - before);
  u.cpu(u64(b * b + 12 * nonempty));  // a test per bucket; 2 divisions, 2 remainders, ...
  return unresolved;
}

// Step 1: the positions of C's structural nonzeros (value field: the count c_ij).
std::vector<SparseEntry> spmm_positions(TensorUnit& u, const std::vector<SparseEntry>& A,
                                        const std::vector<SparseEntry>& B, index_t side,
                                        std::mt19937_64& gen, TcuProduct product,
                                        nlohmann::json& rounds, index_t& Zub) {
  const index_t s = u.side(), Kp = round_up(side, s);
  const index_t I = static_cast<index_t>(A.size() + B.size());
  // Upper bound on nnz(C): sum_k nnz(A(:,k)) nnz(B(k,:)) (I counts + 2 sqrt(n) operations).
  std::vector<index_t> ca(sz(side), 0), rb(sz(side), 0);
  for (const auto& e : A) ++ca[sz(e.col)];
  for (const auto& e : B) ++rb[sz(e.row)];
  Zub = 0;
  for (index_t k = 0; k < side; ++k) Zub += ca[sz(k)] * rb[sz(k)];
  u.cpu(u64(I + 2 * side));
  Zub = std::min(Zub, side * side);
  std::vector<SparseEntry> found;
  index_t U = Zub;
  for (int round = 0;; ++round) {
    if (round >= kMaxRounds) throw inexact_sketch("spmm: the position rounds did not converge");
    const auto want = static_cast<index_t>(std::ceil(std::sqrt(dbl(std::max<index_t>(U, 1)))));
    const bool identity = want >= side;
    const index_t b = identity ? side : std::max(want, std::min(s, side));
    const Hash h = make_hash(side, b, identity, gen), g = make_hash(side, b, identity, gen);
    CountSketch k = count_sketch(u, A, B, h, g, Kp, product, round);
    index_t recovered = 0;
    const index_t unresolved = decode_round(u, k, h, g, found, recovered);
    rounds.push_back({{"buckets", b},
                      {"identity_hash", identity},
                      {"recovered", recovered},
                      {"unresolved_buckets", unresolved}});
    if (unresolved == 0) break;
    U = std::max(U - recovered, 2 * unresolved);
  }
  std::sort(found.begin(), found.end(), by_position);  // a position twice: counts were wrong
  for (size_t i = 1; i < found.size(); ++i)
    if (!by_position(found[i - 1], found[i]))
      throw inexact_sketch("spmm: a position decoded twice (cell mode below fp64)");
  return found;
}

// One value round over the positions `pending` (indices into `pos`) still without a value.
// Returns how many got one.
index_t value_round(TensorUnit& u, const std::vector<SparseEntry>& A,
                    const std::vector<SparseEntry>& B, index_t side,
                    const std::vector<SparseEntry>& pos, const std::vector<index_t>& pending,
                    std::vector<double>& value, std::vector<char>& done, std::mt19937_64& gen,
                    TcuProduct product, nlohmann::json& rounds) {
  const index_t s = u.side(), Kp = round_up(side, s);
  std::vector<char> rmask(sz(side), 0), cmask(sz(side), 0);
  for (index_t e : pending) rmask[sz(pos[sz(e)].row)] = cmask[sz(pos[sz(e)].col)] = 1;
  std::vector<index_t> T;  // the positions inside the hashed rows and columns
  for (index_t e = 0; e < static_cast<index_t>(pos.size()); ++e)
    if (rmask[sz(pos[sz(e)].row)] && cmask[sz(pos[sz(e)].col)]) T.push_back(e);
  u.cpu(u64(static_cast<index_t>(pos.size())));
  const auto nr = static_cast<index_t>(std::count(rmask.begin(), rmask.end(), 1));
  const auto nc = static_cast<index_t>(std::count(cmask.begin(), cmask.end(), 1));
  const index_t want = std::max(
      static_cast<index_t>(std::ceil(std::sqrt(2.0 * dbl(static_cast<index_t>(T.size()))))), s);
  const bool identity = want >= std::max(nr, nc);
  const Hash h = make_hash(side, identity ? nr : want, identity, gen, &rmask);
  const Hash g = make_hash(side, identity ? nc : want, identity, gen, &cmask);
  const index_t br = h.buckets, bc = g.buckets;
  Mat SA(sz(br * Kp), 0.0), SB(sz(Kp * bc), 0.0);
  index_t adds = 0;
  for (const auto& e : A) {
    if (!rmask[sz(e.row)]) continue;
    SA[sz(h.of[sz(e.row)] * Kp + e.col)] += e.v;
    ++adds;
  }
  for (const auto& e : B) {
    if (!cmask[sz(e.col)]) continue;
    SB[sz(e.row * bc + g.of[sz(e.col)])] += e.v;
    ++adds;
  }
  u.cpu(u64(adds));
  const Mat V = tcu_product(u, br, Kp, bc, SA, SB, product);
  std::vector<index_t> occupancy(sz(br * bc), 0);
  for (index_t e : T) ++occupancy[sz(h.of[sz(pos[sz(e)].row)] * bc + g.of[sz(pos[sz(e)].col)])];
  index_t valued = 0;
  for (index_t e : pending) {
    const index_t bucket = h.of[sz(pos[sz(e)].row)] * bc + g.of[sz(pos[sz(e)].col)];
    if (occupancy[sz(bucket)] != 1) continue;
    value[sz(e)] = V[sz(bucket)];
    done[sz(e)] = 1;
    ++valued;
  }
  u.cpu(u64(static_cast<index_t>(T.size() + pending.size())));
  rounds.push_back(
      {{"buckets", {br, bc}},
       {"identity_hash", identity},
       {"positions_hashed", static_cast<index_t>(T.size())},
       {"valued", valued},
       {"block_side", product == TcuProduct::fast ? nlohmann::json(fast_product_side(s, br, Kp, bc))
                                                  : nlohmann::json(nullptr)}});
  return valued;
}

// Step 2: the value of every position.
std::vector<double> spmm_values(TensorUnit& u, const std::vector<SparseEntry>& A,
                                const std::vector<SparseEntry>& B, index_t side,
                                const std::vector<SparseEntry>& pos, std::mt19937_64& gen,
                                TcuProduct product, nlohmann::json& rounds) {
  std::vector<double> value(pos.size(), 0.0);
  std::vector<char> done(pos.size(), 0);
  std::vector<index_t> pending(pos.size());
  std::iota(pending.begin(), pending.end(), 0);
  for (int round = 0; !pending.empty(); ++round) {
    if (round >= kMaxRounds) throw inexact_sketch("spmm: the value rounds did not converge");
    value_round(u, A, B, side, pos, pending, value, done, gen, product, rounds);
    std::erase_if(pending, [&](index_t e) { return done[sz(e)] != 0; });
  }
  return value;
}

// The entries as the algorithm takes them: inside the matrix, finite, one per position;
// exact zeros are not entries.
void check_entries(std::vector<SparseEntry>& M, index_t side, const char* name) {
  std::erase_if(M, [](const SparseEntry& e) { return e.v == 0; });
  for (const auto& e : M)
    if (e.row < 0 || e.row >= side || e.col < 0 || e.col >= side || !std::isfinite(e.v))
      throw input_error(std::string("spmm: ") + name + " has an entry (" + std::to_string(e.row) +
                        ", " + std::to_string(e.col) + ") outside the " + std::to_string(side) +
                        "x" + std::to_string(side) + " matrix or not finite");
  std::sort(M.begin(), M.end(), by_position);
  for (size_t i = 1; i < M.size(); ++i)
    if (M[i].row == M[i - 1].row && M[i].col == M[i - 1].col)
      throw input_error(std::string("spmm: ") + name + " repeats the entry (" +
                        std::to_string(M[i].row) + ", " + std::to_string(M[i].col) + ")");
}

// alpha* = max_k sum_i |A_ik| and beta* = max_k sum_j |B_kj| bound every value sketch entry.
std::pair<double, double> sketch_magnitudes(const std::vector<SparseEntry>& A,
                                            const std::vector<SparseEntry>& B, index_t side) {
  std::vector<double> ca(sz(side), 0.0), rb(sz(side), 0.0);
  for (const auto& e : A) ca[sz(e.col)] += std::abs(e.v);
  for (const auto& e : B) rb[sz(e.row)] += std::abs(e.v);
  return {*std::max_element(ca.begin(), ca.end()), *std::max_element(rb.begin(), rb.end())};
}

}  // namespace

std::vector<SparseEntry> tcu_spmm_entries(TensorUnit& u, std::vector<SparseEntry> A,
                                          std::vector<SparseEntry> B, index_t side,
                                          std::uint64_t seed, nlohmann::json* details,
                                          TcuProduct product) {
  if (side < 1) throw config_error("spmm: the matrix side must be >= 1");
  check_entries(A, side, "A");
  check_entries(B, side, "B");
  const auto [alpha, beta] = sketch_magnitudes(A, B, side);
  const index_t s = u.side(), Kp = round_up(side, s), D = fast_product_side(s, side, Kp, side);
  // Value sketches and their products' intermediates (check_exact_counts) must stay finite.
  if ((strassen_reach(D, s) + dbl(Kp)) * alpha * beta > std::numeric_limits<double>::max() / 4)
    throw input_error("spmm: values too large; the sketches' sums could overflow binary64");
  std::mt19937_64 gen(seed ^ 0x5a17c0ffeeULL);
  nlohmann::json rounds = nlohmann::json::array(), vrounds = nlohmann::json::array();
  index_t Zub = 0;
  std::vector<SparseEntry> pos = spmm_positions(u, A, B, side, gen, product, rounds, Zub);
  const std::vector<double> value = spmm_values(u, A, B, side, pos, gen, product, vrounds);
  std::vector<SparseEntry> C;
  for (size_t e = 0; e < pos.size(); ++e)
    if (value[e] != 0) C.push_back({pos[e].row, pos[e].col, value[e]});
  std::sort(C.begin(), C.end(), by_position);
  if (details) {
    (*details)["compression"] =
        "positions: rows of A / columns of B hashed into b = ceil(sqrt(U)) buckets, the 0/1 "
        "patterns' counts weighted 1, w, w^2 (w = 1 + rank in the bucket), singleton buckets "
        "decoded exactly, repeated with fresh hashes on the residual; values: sketches of the "
        "values read in buckets holding one position";
    (*details)["I"] = static_cast<index_t>(A.size() + B.size());
    (*details)["Z_upper_bound"] = Zub;
    (*details)["Z"] = static_cast<index_t>(pos.size());
    (*details)["nonzeros"] = static_cast<index_t>(C.size());
    (*details)["cancelled"] = static_cast<index_t>(pos.size() - C.size());
    (*details)["rounds"] = rounds;
    (*details)["value_rounds"] = vrounds;
    (*details)["padding"] = product == TcuProduct::fast
                                ? "sketches zero-padded to Strassen blocks of side sqrt(m) 2^k"
                                : "sketches zero-padded to multiples of sqrt(m)";
  }
  return C;
}

std::vector<SparseEntry> reference_sparse_product(std::vector<SparseEntry> A,
                                                  const std::vector<SparseEntry>& B, index_t side) {
  std::sort(A.begin(), A.end(), by_position);
  std::vector<std::vector<SparseEntry>> brows(sz(side));
  for (const auto& e : B) brows[sz(e.row)].push_back(e);
  std::vector<double> acc(sz(side), 0.0);
  std::vector<char> touched(sz(side), 0);
  std::vector<index_t> cols;
  std::vector<SparseEntry> C;
  size_t a = 0;
  for (index_t i = 0; i < side; ++i) {
    cols.clear();
    for (; a < A.size() && A[a].row == i; ++a)
      for (const auto& b : brows[sz(A[a].col)]) {
        if (!touched[sz(b.col)]) {
          touched[sz(b.col)] = 1;
          cols.push_back(b.col);
        }
        acc[sz(b.col)] += A[a].v * b.v;
      }
    std::sort(cols.begin(), cols.end());
    for (index_t j : cols) {
      if (acc[sz(j)] != 0) C.push_back({i, j, acc[sz(j)]});
      acc[sz(j)] = 0;
      touched[sz(j)] = 0;
    }
  }
  return C;
}

// =======================================================================================
// Bound: sqrt(n/Z) (Z/m)^w0 (m + l) + I (Theorem 3, Z >= m).

namespace {
double spmm_theorem(double n, double m, double l, double Z, double I, TcuProduct product) {
  if (Z <= 0) return I;
  return std::sqrt(n / Z) * std::pow(Z / m, product_omega0(product)) * (m + l) + I;
}
}  // namespace

namespace {

// The table's bound: the generated input's Z = min(9 sqrt(n), n), I = 6 sqrt(n), fast.
double bound_spmm(double n, double m, double l) {
  const double side = std::sqrt(n);
  const double Z = std::min(double(kSpmmPerRow * kSpmmPerRow) * side, n);
  return spmm_theorem(n, m, l, Z, 2.0 * double(kSpmmPerRow) * side, TcuProduct::fast);
}
const char* formula_spmm() {
  return "sqrt(n/Z) (Z/m)^w0 (m + l) + I, w0 = log_4 7 (fast product), Z = min(9 sqrt(n), n), "
         "I = 6 sqrt(n) (the generated input)";
}
double exponent_spmm() {  // Z ~ sqrt(n): n^(1/4 + w0/2)
  return 0.25 + product_omega0(TcuProduct::fast) / 2;
}

// =======================================================================================
// The run: inputs, the algorithm, the check against reference_sparse_product.

namespace {

// Each row gets min(d, side) distinct columns; values are integers in [-9, 9] without 0
// (mixed signs, so entries of C can cancel; integers, so the check is exact).
std::vector<SparseEntry> random_sparse(index_t side, index_t d, std::mt19937_64& gen) {
  std::vector<SparseEntry> e;
  std::uniform_int_distribution<index_t> col(0, side - 1);
  std::uniform_int_distribution<int> val(1, 18);
  const index_t k = std::min(d, side);
  std::vector<index_t> picked;
  for (index_t i = 0; i < side; ++i) {
    picked.clear();
    while (static_cast<index_t>(picked.size()) < k) {
      const index_t c = col(gen);
      if (std::find(picked.begin(), picked.end(), c) == picked.end()) picked.push_back(c);
    }
    std::sort(picked.begin(), picked.end());
    for (index_t c : picked) {
      const int v = val(gen);
      e.push_back({i, c, static_cast<double>(v <= 9 ? v - 10 : v - 9)});
    }
  }
  return e;
}

std::vector<SparseEntry> dense_to_entries(const Mat& a, index_t side) {
  std::vector<SparseEntry> e;
  for (index_t i = 0; i < side; ++i)
    for (index_t j = 0; j < side; ++j)
      if (a[sz(i * side + j)] != 0) e.push_back({i, j, a[sz(i * side + j)]});
  return e;
}

struct SpmmInput {
  index_t side = 0;
  std::vector<SparseEntry> A, B;
  std::string source;
};
SpmmInput spmm_input(const TcuProblem& p) {
  SpmmInput in;
  if (!p.input.empty()) {
    const std::string file = tcu_in::input_file(p, "spmm", "/A and /B");
    Mat a, b;
    const index_t na = tcu_in::read_square(file, "/A", a), nb = tcu_in::read_square(file, "/B", b);
    if (na != nb) throw input_error(file + ": /A and /B differ in size");
    in.side = tcu_in::resolve_size(p, na, "spmm");
    tcu_in::check_size(p.size_name, "spmm", in.side, kMaxDenseSide, "a matrix side",
                       tcu_in::size_source(p, "/A"));
    in.A = dense_to_entries(a, in.side);
    in.B = dense_to_entries(b, in.side);
    in.source = p.input;
    return in;
  }
  tcu_in::check_size(p.size_name, "spmm", p.size, kMaxSparseSide, "a matrix side");
  in.side = p.size;
  std::mt19937_64 gen(p.seed);
  in.A = random_sparse(in.side, kSpmmPerRow, gen);
  in.B = random_sparse(in.side, kSpmmPerRow, gen);
  in.source = std::to_string(kSpmmPerRow) +
              " nonzeros (integers in [-9, 9] without 0) per row of A and B, seed " +
              std::to_string(p.seed);
  return in;
}

bool integers(const std::vector<SparseEntry>& M) {
  return std::all_of(M.begin(), M.end(),
                     [](const SparseEntry& e) { return e.v == std::nearbyint(e.v); });
}

// The check. Classical: the value of a one-position bucket is that entry's dot product (with
// exact zeros), so |C - Cref| <= (2K + 2) u (|A||B|) entrywise, both sides' dot-product
// bounds (K = the padded side; plus 2K times the smallest subnormal for underflow). Fast:
// plus, per value round, the sum of q = K/D Strassen products (strassen_error_factor) and
// the q - 1 CPU additions of partial tiles (each <= D alpha* beta*), times u alpha* beta*,
// with 1% for the bound's O(u^2) remainder. Exact equality where every sum is an exact
// integer: integer data whose largest intermediate stays below 2^53.
struct SpmmCheck {
  bool ok = true, exact = false;
  double max_abs_error = 0;
};
SpmmCheck check_spmm(const std::vector<SparseEntry>& C, const std::vector<SparseEntry>& A,
                     const std::vector<SparseEntry>& B, index_t side, index_t s,
                     const nlohmann::json& value_rounds) {
  const index_t K = round_up(side, s);
  const auto [alpha, beta] = sketch_magnitudes(A, B, side);
  double normwise = 0, reach = 0;  // the fast product's error factor and its largest value
  for (const auto& r : value_rounds) {
    if (!r["block_side"].is_number()) continue;
    const auto D = r["block_side"].get<index_t>();
    const index_t q = (K + D - 1) / D;
    normwise = std::max(normwise, dbl(q) * strassen_error_factor(D, s) + dbl(q * (q - 1) * D));
    reach = std::max(reach, (strassen_reach(D, s) + dbl(K)) * alpha * beta);
  }
  std::vector<SparseEntry> absA(A), absB(B);
  for (auto& e : absA) e.v = std::abs(e.v);
  for (auto& e : absB) e.v = std::abs(e.v);
  std::unordered_map<index_t, std::array<double, 3>> at;  // computed, reference, |A||B|
  for (const auto& e : C) at[e.row * side + e.col][0] = e.v;
  for (const auto& e : reference_sparse_product(A, B, side)) at[e.row * side + e.col][1] = e.v;
  double largest = 0;
  for (const auto& e : reference_sparse_product(absA, absB, side)) {
    at[e.row * side + e.col][2] = e.v;
    largest = std::max(largest, e.v);
  }
  SpmmCheck chk;
  chk.exact = integers(A) && integers(B) && std::max(largest, reach) < kExact;
  const double u = std::ldexp(1.0, -53), gamma = dbl(2 * K + 2) * u;
  const double tiny = 2 * dbl(K) * std::numeric_limits<double>::denorm_min();
  for (const auto& [key, v] : at) {
    const double err = std::abs(v[0] - v[1]);
    chk.max_abs_error = std::max(chk.max_abs_error, err);
    const double bound = gamma * v[2] + 1.01 * normwise * u * alpha * beta + tiny;
    if (chk.exact ? err != 0 : !(err <= bound)) chk.ok = false;
  }
  return chk;
}

}  // namespace

TcuRun run_spmm(TensorUnit& u, const TcuProblem& p) {
  const SpmmInput in = spmm_input(p);
  const double n = dbl(in.side) * dbl(in.side);
  TcuRun run;
  run.details = {{"size", in.side}, {"theorem_n", n}, {"input", in.source}};
  std::vector<SparseEntry> C;
  try {
    C = tcu_spmm_entries(u, in.A, in.B, in.side, p.seed, &run.details, p.product);
  } catch (const inexact_sketch& e) {
    if (u.cell_mode() == CellMode::fp64) throw internal_error(e.what());
    run.details["failure"] = e.what();
    run.details["Z"] = static_cast<index_t>(reference_sparse_product(in.A, in.B, in.side).size());
    run.details["I"] = static_cast<index_t>(in.A.size() + in.B.size());
  }
  const bool failed = run.details.contains("failure");
  const SpmmCheck chk =
      failed ? SpmmCheck{false, false, 0}
             : check_spmm(C, in.A, in.B, in.side, u.side(), run.details["value_rounds"]);
  run.verified = chk.ok;
  run.reference =
      chk.exact ? "CPU sparse row-by-row product, exact equality of every entry"
      : p.product == TcuProduct::classical
          ? "CPU sparse row-by-row product, |C - Cref| <= (2K+2) 2^-53 (|A||B|) entrywise"
          : "CPU sparse row-by-row product, |C - Cref| <= (2K+2) 2^-53 (|A||B|) + "
            "Strassen's bound (Higham Thm 23.2) on the value sketches";
  if (!failed) run.details["max_abs_error"] = chk.max_abs_error;
  const double Z = run.details["Z"].get<double>(), I = run.details["I"].get<double>();
  set_product_bounds(
      run, p.product, n, u,
      [Z, I](double n_, double m, double l, TcuProduct q) {
        return spmm_theorem(n_, m, l, Z, I, q);
      },
      "sqrt(n/Z) (Z/m)^w0 (m + l) + I, the run's Z and I, w0 = " + omega0_text(p.product),
      0.25 + product_omega0(p.product) / 2);
  run.details["theorem_condition_Z_ge_m"] = Z >= dbl(u.m());
  return run;
}

}  // namespace

const TcuAlgorithm tcu_spmm{"spmm",     "Theorem 3",  "matrix side sqrt(n)", run_spmm,
                            bound_spmm, formula_spmm, exponent_spmm};

}  // namespace triada
