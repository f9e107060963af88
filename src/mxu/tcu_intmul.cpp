// Theorems 9 and 10 (Sec. 4.7): n-bit integer multiplication. Theorem 9 is the schoolbook
// product as a Toeplitz matrix product on the unit (A' of (n' + s - 1) x s sliding windows
// of a's limbs, B' holding b's limbs column by column); Theorem 10 is Karatsuba recursion
// whose leaves (n' <= max(s, 3) limbs, i.e. about kappa sqrt(m) bits) use Theorem 9.
#include <algorithm>
#include <bit>
#include <cmath>
#include <random>
#include <string>

#include "core/checked.hpp"
#include "core/error.hpp"
#include "mxu/tcu_algorithms.hpp"
#include "mxu/tcu_inputs.hpp"
#include "mxu/tcu_numeric.hpp"

namespace triada {

namespace {

using limbs_t = std::vector<std::uint64_t>;  // kappa-bit limbs, little-endian, each < 2^kappa

constexpr index_t kIntmulMaxBits = 100000;

index_t bit_length(const std::vector<std::uint64_t>& w) {
  for (index_t i = static_cast<index_t>(w.size()) - 1; i >= 0; --i)
    if (w[i] != 0) return 64 * i + 64 - std::countl_zero(w[i]);
  return 0;
}

// Splitting into limbs and packing back is data layout, not charged.
limbs_t to_limbs(const std::vector<std::uint64_t>& w, index_t nl, int kappa) {
  limbs_t l(static_cast<size_t>(nl), 0);
  const std::uint64_t mask = (std::uint64_t{1} << kappa) - 1;
  for (index_t i = 0; i < nl; ++i) {
    const index_t bit = i * kappa, word = bit / 64, off = bit % 64;
    if (word >= static_cast<index_t>(w.size())) break;
    std::uint64_t v = w[word] >> off;
    if (off + kappa > 64 && word + 1 < static_cast<index_t>(w.size()))
      v |= w[word + 1] << (64 - off);
    l[i] = v & mask;
  }
  return l;
}

std::vector<std::uint64_t> from_limbs(const limbs_t& l, index_t nwords, int kappa) {
  std::vector<std::uint64_t> w(static_cast<size_t>(nwords), 0);
  for (index_t i = 0; i < static_cast<index_t>(l.size()); ++i) {
    if (l[i] == 0) continue;
    const index_t bit = i * kappa, word = bit / 64, off = bit % 64;
    if (word >= nwords) throw internal_error("intmul: product longer than |a| + |b| words");
    w[word] |= l[i] << off;
    if (off + kappa > 64) {
      const std::uint64_t hi = l[i] >> (64 - off);
      if (hi != 0) {
        if (word + 1 >= nwords) throw internal_error("intmul: product longer than |a| + |b| words");
        w[word + 1] |= hi;
      }
    }
  }
  return w;
}

// Theorem 9: c = a b for limb vectors a (na limbs) and b (nb limbs), result na + nb limbs.
// C'[i][j] = sum_t a_{i-t} b_{j s + t} is the contribution to coefficient h = i + j s;
// B' (s x q, q = ceil(nb / s)) goes to the unit s columns at a time.
limbs_t toeplitz_product(TensorUnit& unit, const limbs_t& a, const limbs_t& b, int kappa) {
  const index_t s = unit.side(), na = static_cast<index_t>(a.size()),
                nb = static_cast<index_t>(b.size());
  const index_t q = (nb + s - 1) / s, r = na + s - 1;
  const std::uint64_t mask = (std::uint64_t{1} << kappa) - 1;
  std::vector<double> Ap(static_cast<size_t>(r * s), 0.0);
  for (index_t i = 0; i < r; ++i)
    for (index_t t = 0; t < s; ++t)
      if (i - t >= 0 && i - t < na) Ap[i * s + t] = static_cast<double>(a[i - t]);
  const index_t ncoef = na + q * s + 1;
  std::vector<std::uint64_t> lo(static_cast<size_t>(ncoef), 0), hi(lo.size(), 0);
  std::vector<double> B(static_cast<size_t>(s * s)), C(static_cast<size_t>(r * s));
  std::uint64_t ops = 0;
  for (index_t j0 = 0; j0 < q; j0 += s) {
    const index_t cols = std::min(s, q - j0);
    std::fill(B.begin(), B.end(), 0.0);
    for (index_t t = 0; t < s; ++t)
      for (index_t jj = 0; jj < cols; ++jj) {
        const index_t idx = (j0 + jj) * s + t;
        if (idx < nb) B[t * s + jj] = static_cast<double>(b[idx]);
      }
    tcu_tall_multiply(unit, r, Ap.data(), s, B.data(), s, C.data(), s, false);
    // Every entry is an exact integer < s 2^(2 kappa) <= 2^53: split and add (4 operations).
    for (index_t jj = 0; jj < cols; ++jj)
      for (index_t i = 0; i < r; ++i) {
        const auto v = static_cast<std::uint64_t>(C[i * s + jj]);
        const index_t h = i + (j0 + jj) * s;
        lo[h] += v & mask;
        hi[h + 1] += v >> kappa;
      }
    ops += 4 * static_cast<std::uint64_t>(cols * r);
  }
  // Carries: c = C(2^kappa) (4 operations per coefficient).
  limbs_t c(static_cast<size_t>(ncoef), 0);
  std::uint64_t carry = 0;
  for (index_t h = 0; h < ncoef; ++h) {
    const std::uint64_t t = lo[h] + hi[h] + carry;
    c[h] = t & mask;
    carry = t >> kappa;
  }
  ops += 4 * static_cast<std::uint64_t>(ncoef);
  unit.cpu(ops);
  if (carry != 0) throw internal_error("intmul: carry out of the product");
  for (index_t h = na + nb; h < ncoef; ++h)
    if (c[h] != 0) throw internal_error("intmul: product longer than na + nb limbs");
  c.resize(static_cast<size_t>(na + nb));
  return c;
}

// Limb-wise add / subtract with carry, charged 4 operations per limb.
limbs_t add_limbs(TensorUnit& unit, const limbs_t& x, const limbs_t& y, int kappa) {
  const size_t n = std::max(x.size(), y.size());
  const std::uint64_t mask = (std::uint64_t{1} << kappa) - 1;
  limbs_t z(n + 1, 0);
  std::uint64_t carry = 0;
  for (size_t i = 0; i < n; ++i) {
    const std::uint64_t t = (i < x.size() ? x[i] : 0) + (i < y.size() ? y[i] : 0) + carry;
    z[i] = t & mask;
    carry = t >> kappa;
  }
  z[n] = carry;
  unit.cpu(4 * static_cast<std::uint64_t>(n));
  return z;
}

// z -= y (z >= y as integers).
void sub_in_place(TensorUnit& unit, limbs_t& z, const limbs_t& y, int kappa) {
  const std::uint64_t base = std::uint64_t{1} << kappa;
  std::uint64_t borrow = 0;
  size_t i = 0;
  for (; i < y.size() || borrow; ++i) {
    if (i >= z.size()) throw internal_error("karatsuba: negative middle term");
    const std::uint64_t sub = (i < y.size() ? y[i] : 0) + borrow;
    if (z[i] >= sub) {
      z[i] -= sub;
      borrow = 0;
    } else {
      z[i] = z[i] + base - sub;
      borrow = 1;
    }
  }
  unit.cpu(4 * static_cast<std::uint64_t>(i));
}

// z += y << (shift limbs), z long enough.
void add_shifted(TensorUnit& unit, limbs_t& z, const limbs_t& y, size_t shift, int kappa) {
  const std::uint64_t mask = (std::uint64_t{1} << kappa) - 1;
  std::uint64_t carry = 0;
  size_t i = 0;
  for (; i < y.size() || carry; ++i) {
    if (shift + i >= z.size()) throw internal_error("karatsuba: sum overflows its limbs");
    const std::uint64_t t = z[shift + i] + (i < y.size() ? y[i] : 0) + carry;
    z[shift + i] = t & mask;
    carry = t >> kappa;
  }
  unit.cpu(4 * static_cast<std::uint64_t>(i));
}

struct KaratsubaStats {
  index_t leaves = 0, depth = 0;
};

// Theorem 10: a, b of equal length n'; result 2 n' limbs.
limbs_t karatsuba(TensorUnit& unit, const limbs_t& a, const limbs_t& b, int kappa, index_t leaf,
                  KaratsubaStats& st, index_t level) {
  const size_t n = a.size();
  st.depth = std::max(st.depth, level);
  if (static_cast<index_t>(n) <= leaf) {
    ++st.leaves;
    return toeplitz_product(unit, a, b, kappa);
  }
  const size_t h = (n + 1) / 2;
  const limbs_t a0(a.begin(), a.begin() + static_cast<std::ptrdiff_t>(h)),
      b0(b.begin(), b.begin() + static_cast<std::ptrdiff_t>(h));
  limbs_t a1(a.begin() + static_cast<std::ptrdiff_t>(h), a.end()),
      b1(b.begin() + static_cast<std::ptrdiff_t>(h), b.end());
  a1.resize(h, 0);
  b1.resize(h, 0);
  const limbs_t z0 = karatsuba(unit, a0, b0, kappa, leaf, st, level + 1);
  const limbs_t z2 = karatsuba(unit, a1, b1, kappa, leaf, st, level + 1);
  limbs_t z1 = karatsuba(unit, add_limbs(unit, a0, a1, kappa), add_limbs(unit, b0, b1, kappa),
                         kappa, leaf, st, level + 1);
  sub_in_place(unit, z1, z0, kappa);
  sub_in_place(unit, z1, z2, kappa);
  // c = z0 + z1 X + z2 X^2 with X = 2^(kappa h): z0 and z2 do not overlap (copies).
  limbs_t c(4 * h + 2, 0);
  std::copy(z0.begin(), z0.end(), c.begin());
  std::copy(z2.begin(), z2.end(), c.begin() + static_cast<std::ptrdiff_t>(2 * h));
  while (!z1.empty() && z1.back() == 0) z1.pop_back();
  add_shifted(unit, c, z1, h, kappa);
  for (size_t i = 2 * n; i < c.size(); ++i)
    if (c[i] != 0) throw internal_error("karatsuba: product longer than 2n limbs");
  c.resize(2 * n);
  return c;
}

std::vector<std::uint64_t> multiply_words(TensorUnit& unit, const std::vector<std::uint64_t>& a,
                                          const std::vector<std::uint64_t>& b, bool use_karatsuba,
                                          nlohmann::json* details) {
  const int kappa = intmul_kappa(unit.side());
  const index_t bits = std::max<index_t>(1, std::max(bit_length(a), bit_length(b)));
  const index_t nl = (bits + kappa - 1) / kappa;
  const limbs_t la = to_limbs(a, nl, kappa), lb = to_limbs(b, nl, kappa);
  limbs_t c;
  KaratsubaStats st;
  const index_t leaf = std::max<index_t>(unit.side(), 3);
  if (use_karatsuba)
    c = karatsuba(unit, la, lb, kappa, leaf, st, 0);
  else
    c = toeplitz_product(unit, la, lb, kappa);
  if (details) {
    (*details)["kappa"] = kappa;
    (*details)["limbs"] = nl;
    (*details)["limb_padding"] =
        "b's limbs padded with zeros to a multiple of sqrt(m) (B' columns) "
        "and B' to a multiple of sqrt(m) columns";
    if (use_karatsuba) {
      (*details)["leaf_limbs"] = leaf;
      (*details)["leaves"] = st.leaves;
      (*details)["depth"] = st.depth;
    }
  }
  return from_limbs(c, static_cast<index_t>(a.size() + b.size()), kappa);
}

// Uncharged reference: schoolbook on 32-bit digits, exact in 64-bit arithmetic.
std::vector<std::uint64_t> schoolbook_words(const std::vector<std::uint64_t>& a,
                                            const std::vector<std::uint64_t>& b) {
  auto halves = [](const std::vector<std::uint64_t>& w) {
    std::vector<std::uint64_t> h(2 * w.size());
    for (size_t i = 0; i < w.size(); ++i) {
      h[2 * i] = w[i] & 0xffffffffULL;
      h[2 * i + 1] = w[i] >> 32;
    }
    return h;
  };
  const auto x = halves(a), y = halves(b);
  std::vector<std::uint64_t> z(x.size() + y.size(), 0);
  for (size_t i = 0; i < x.size(); ++i) {
    std::uint64_t carry = 0;
    for (size_t j = 0; j < y.size(); ++j) {
      const std::uint64_t t = x[i] * y[j] + z[i + j] + carry;
      z[i + j] = t & 0xffffffffULL;
      carry = t >> 32;
    }
    z[i + y.size()] = carry;
  }
  std::vector<std::uint64_t> w(a.size() + b.size());
  for (size_t i = 0; i < w.size(); ++i) w[i] = z[2 * i] | (z[2 * i + 1] << 32);
  return w;
}

std::vector<std::uint64_t> random_bits(std::mt19937_64& gen, index_t bits) {
  std::vector<std::uint64_t> w(static_cast<size_t>((bits + 63) / 64));
  for (auto& v : w) v = gen();
  if (bits % 64 != 0) w.back() &= (std::uint64_t{1} << (bits % 64)) - 1;
  w[(bits - 1) / 64] |= std::uint64_t{1} << ((bits - 1) % 64);  // exactly `bits` bits
  return w;
}

// An operand from --input: a vector of 32-bit digits, least significant first, as 64-bit
// words (two digits each).
std::vector<std::uint64_t> read_digits(const std::string& file, const char* dset) {
  const std::string name = file + ":" + dset;
  const std::vector<double> d = tcu_in::read_vector(file, dset);
  checked_mul(static_cast<index_t>(d.size()), index_t{32}, name + ": the operand's bits");
  std::vector<std::uint64_t> w((d.size() + 1) / 2, 0);
  for (size_t i = 0; i < d.size(); ++i) {
    if (!(d[i] >= 0 && d[i] < 4294967296.0) || d[i] != std::floor(d[i]))
      throw input_error(name + ": digit " + std::to_string(i) +
                        " is not an integer in [0, 2^32) (32-bit digits, least significant first)");
    w[i / 2] |= static_cast<std::uint64_t>(d[i]) << (32 * (i % 2));
  }
  return w;
}

// The operands: /a and /b of --input, or two random numbers of exactly --size bits.
struct Operands {
  std::vector<std::uint64_t> a, b;
  index_t bits = 0;  // the longer operand's bit length (at least 1): the theorem's n
  std::string source;
};
Operands intmul_operands(const TcuProblem& p, const char* name) {
  Operands o;
  if (p.input.empty()) {
    if (p.size < 1 || p.size > kIntmulMaxBits)
      throw config_error(std::string(name) + ": " + p.size_name + " (bits) must be in [1, " +
                         std::to_string(kIntmulMaxBits) + "], got " + std::to_string(p.size));
    std::mt19937_64 gen(p.seed);
    o.a = random_bits(gen, p.size);
    o.b = random_bits(gen, p.size);
    o.bits = p.size;
    o.source = "random integers of exactly " + std::to_string(p.size) + " bits, seed " +
               std::to_string(p.seed);
    return o;
  }
  const std::string file = tcu_in::input_file(p, name, "/a and /b");
  o.a = read_digits(file, "/a");
  o.b = read_digits(file, "/b");
  const index_t la = bit_length(o.a), lb = bit_length(o.b), bits = std::max<index_t>({la, lb, 1});
  tcu_in::check_size(p.size_name, name, bits, kIntmulMaxBits, "operands of a number of bits",
                     file + (la >= lb ? ":/a" : ":/b"));
  o.bits = tcu_in::resolve_size(p, bits, name);
  o.source = file;
  return o;
}

TcuRun run_multiplication(TensorUnit& unit, const TcuProblem& p, bool use_karatsuba) {
  const char* name = use_karatsuba ? "karatsuba" : "intmul";
  const Operands o = intmul_operands(p, name);
  TcuRun run;
  const auto c = multiply_words(unit, o.a, o.b, use_karatsuba, &run.details);
  run.reference = "schoolbook on 32-bit digits (exact integers)";
  run.verified = c == schoolbook_words(o.a, o.b);
  run.details["bits"] = o.bits;
  run.details["size"] = o.bits;
  run.details["input"] = o.source;
  run.details["product_bits"] = bit_length(c);
  run.details["product_low_word"] = c.empty() ? std::uint64_t{0} : c[0];  // c mod 2^64
  return run;
}

}  // namespace

int intmul_kappa(index_t s) {
  int lg = 0;  // ceil(log2 s)
  while ((index_t{1} << lg) < s) ++lg;
  return (53 - lg) / 2;
}

std::vector<std::uint64_t> tcu_intmul_words(TensorUnit& unit, const std::vector<std::uint64_t>& a,
                                            const std::vector<std::uint64_t>& b) {
  return multiply_words(unit, a, b, false, nullptr);
}

std::vector<std::uint64_t> tcu_karatsuba_words(TensorUnit& unit,
                                               const std::vector<std::uint64_t>& a,
                                               const std::vector<std::uint64_t>& b) {
  return multiply_words(unit, a, b, true, nullptr);
}

namespace {

TcuRun run_intmul(TensorUnit& unit, const TcuProblem& p) {
  return run_multiplication(unit, p, false);
}
TcuRun run_karatsuba(TensorUnit& unit, const TcuProblem& p) {
  return run_multiplication(unit, p, true);
}

namespace {
double kappa_for(double m) {
  return intmul_kappa(static_cast<index_t>(std::llround(std::sqrt(m))));
}
}  // namespace

double bound_intmul(double n, double m, double l) {
  const double k = kappa_for(m);
  return n * n / (k * k * std::sqrt(m)) + n * l / (k * m);
}
const char* formula_intmul() {
  return "n^2 / (kappa^2 sqrt(m)) + n l / (kappa m)";
}
double exponent_intmul() {
  return 2.0;
}

double bound_karatsuba(double n, double m, double l) {
  const double k = kappa_for(m);
  return std::pow(n / (k * std::sqrt(m)), std::log2(3.0)) * (std::sqrt(m) + l / std::sqrt(m));
}
const char* formula_karatsuba() {
  return "(n / (kappa sqrt(m)))^log2(3) (sqrt(m) + l / sqrt(m))";
}
double exponent_karatsuba() {
  return std::log2(3.0);
}

}  // namespace

const TcuAlgorithm tcu_intmul{"intmul",     "Theorem 9",    "bits",         run_intmul,
                              bound_intmul, formula_intmul, exponent_intmul};
const TcuAlgorithm tcu_karatsuba{"karatsuba",       "Theorem 10",    "bits",
                                 run_karatsuba,     bound_karatsuba, formula_karatsuba,
                                 exponent_karatsuba};

}  // namespace triada
