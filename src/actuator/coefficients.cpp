// Coefficient matrices of doc/design.md §4 (numpy/scipy conventions for the three norms).
#include "actuator/coefficients.hpp"

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstdint>
#include <utility>
#include <vector>

#include "core/checked.hpp"
#include "core/error.hpp"
#include "geometry/memory_model.hpp"

namespace triada {

std::size_t matrix_elements(index_t rows, index_t cols, int copies, const std::string& label) {
  const auto elements = static_cast<std::uint64_t>(checked_mul(rows, cols, label));
  require_memory(checked_mul(checked_mul(elements, sizeof(cplx), label), copies, label),
                 label + (copies > 1 ? " (" + std::to_string(copies) + " copies)" : ""));
  return static_cast<std::size_t>(elements);
}

namespace {

// Elements of an n x n matrix, checked, after making sure `copies` such matrices fit
// in memory (`what` names the input, `name` the matrix).
std::size_t square_elements(index_t n, int copies, const std::string& what,
                            const std::string& name) {
  return matrix_elements(
      n, n, copies,
      what + ": the " + std::to_string(n) + "x" + std::to_string(n) + " " + name + " (complex128)");
}

constexpr long double kPi = 3.141592653589793238462643383279502884L;

// (a * b) mod m for 0 <= a, b < m, without overflow for any m < 2^63.
index_t mul_mod(index_t a, index_t b, index_t m) {
  __extension__ using u128 = unsigned __int128;
  return static_cast<index_t>((static_cast<u128>(a) * static_cast<u128>(b)) % static_cast<u128>(m));
}

// cos and sin of the angle 2 pi m / n for an integer phase 0 <= m < n (doc/design.md §4:
// entries come from the reduced integer phase). The phase is folded into the first
// octant [0, pi/4] in exact integer arithmetic (the same reduction FFTW uses for its
// twiddles), evaluated in long double, and unfolded with exact sign/swap rules, so
// each entry is within about half an ulp of the true value once rounded to double.
struct CosSin {
  long double c;
  long double s;
};
CosSin cos_sin_turn(index_t m, index_t n) {
  const index_t quarter = n;  // a quarter turn, in units where a full turn is 4n
  n *= 4;
  m *= 4;
  unsigned octant = 0;
  if (m > n - m) {  // angle in (pi, 2 pi): reflect, sin changes sign
    m = n - m;
    octant |= 4;
  }
  if (m - quarter > 0) {  // angle in (pi/2, pi]: rotate back by pi/2
    m -= quarter;
    octant |= 2;
  }
  if (m > quarter - m) {  // angle in (pi/4, pi/2]: mirror about pi/4, swap cos and sin
    m = quarter - m;
    octant |= 1;
  }
  const long double theta = 2.0L * kPi * static_cast<long double>(m) / static_cast<long double>(n);
  long double c = std::cos(theta);
  long double s = std::sin(theta);
  if (octant & 1U) std::swap(c, s);
  if (octant & 2U) {
    const long double t = c;
    c = -s;
    s = t;
  }
  if (octant & 4U) s = -s;
  return {c, s};
}

// cos_sin_turn(m, n) for every phase m < n: an entry's value depends only on its phase,
// so a matrix evaluates n of them instead of one per entry (the same calls, the same bits;
// a 512-point DCT-II matrix took 0.1 s entry by entry).
std::vector<CosSin> turn_table(index_t n) {
  std::vector<CosSin> t(static_cast<std::size_t>(n));
  for (index_t m = 0; m < n; ++m) t[static_cast<std::size_t>(m)] = cos_sin_turn(m, n);
  return t;
}

double to_double(long double v) {
  return static_cast<double>(v);
}

// numpy's scaling of dft, dht and wht: 1/N on the inverse (backward), on the forward
// (forward), 1/sqrt(N) on both (ortho).
long double plain_scale(index_t size, Norm norm, bool inverse) {
  const auto nn = static_cast<long double>(size);
  switch (norm) {
    case Norm::ortho:
      return 1.0L / std::sqrt(nn);
    case Norm::forward:
      return inverse ? 1.0L : 1.0L / nn;
    case Norm::backward:
      break;
  }
  return inverse ? 1.0L / nn : 1.0L;
}

// DFT (numpy.fft): forward exp(-2 pi i nk/N), inverse exp(+2 pi i nk/N), scaled by
// plain_scale.
void fill_dft(CoeffMatrix& c, index_t size, Norm norm, bool inverse) {
  const long double scale = plain_scale(size, norm, inverse);
  const long double sign = inverse ? 1.0L : -1.0L;
  const std::vector<CosSin> turns = turn_table(size);
  for (index_t n = 0; n < size; ++n) {
    for (index_t k = 0; k < size; ++k) {
      const CosSin t = turns[static_cast<std::size_t>(mul_mod(n, k, size))];
      c(n, k) = cplx(to_double(scale * t.c), to_double(sign * scale * t.s));
    }
  }
}

// DHT: cas(2 pi nk/N) = cos + sin both ways, scaled by plain_scale. cas is symmetric in
// n and k, so the inverse is the same shape.
// cas(2 pi m/N) = sqrt(2) cos(2 pi (8m - N) / 8N): evaluated that way instead of
// cos + sin, the zeros of cas (m/N = 3/8, 7/8) come out exactly 0 (which ESOP skips)
// and there is no cancellation near them.
void fill_dht(CoeffMatrix& c, index_t size, Norm norm, bool inverse) {
  const long double scale = plain_scale(size, norm, inverse);
  const long double sqrt2 = 1.414213562373095048801688724209698079L;
  const index_t period = 8 * size;
  const std::vector<CosSin> turns = turn_table(period);
  for (index_t n = 0; n < size; ++n) {
    for (index_t k = 0; k < size; ++k) {
      const index_t m = mul_mod(n, k, size);
      const index_t shifted = (8 * m - size + period) % period;
      const long double cosv = turns[static_cast<std::size_t>(shifted)].c;
      c(n, k) = cplx(to_double(scale * sqrt2 * cosv), 0.0);
    }
  }
}

// DCT-II (scipy.fft.dct), cos(pi (2n+1) k / (2N)) = cos(2 pi m / (4N)) with the phase
// m = (2n+1) k mod 4N.
//   backward forward: C(n,k) = 2 cos(...);  inverse (scipy idct, DCT-III / 2N):
//     D(k,n) = (k == 0 ? 1 : 2) cos(pi (2n+1) k / (2N)) / (2N)
//   forward: the same with the 1/(2N) moved to the forward matrix (scipy norm="forward")
//   ortho forward: C(n,k) = f_k cos(...), f_0 = sqrt(1/N), f_k = sqrt(2/N);
//     inverse = transpose.
// Rows of the stored matrix index the input, so the inverse stores D(k, n) at (k, n).
long double dct_factor(index_t k, long double nn, Norm norm, bool inverse) {
  switch (norm) {
    case Norm::ortho:
      return k == 0 ? std::sqrt(1.0L / nn) : std::sqrt(2.0L / nn);
    case Norm::forward:
      return inverse ? (k == 0 ? 1.0L : 2.0L) : 1.0L / nn;
    case Norm::backward:
      break;
  }
  return inverse ? (k == 0 ? 1.0L : 2.0L) / (2.0L * nn) : 2.0L;
}

void fill_dct(CoeffMatrix& c, index_t size, Norm norm, bool inverse) {
  const auto nn = static_cast<long double>(size);
  const index_t period = 4 * size;
  const std::vector<CosSin> turns = turn_table(period);
  std::vector<long double> factors(static_cast<std::size_t>(size));
  for (index_t k = 0; k < size; ++k)
    factors[static_cast<std::size_t>(k)] = dct_factor(k, nn, norm, inverse);
  for (index_t n = 0; n < size; ++n) {
    for (index_t k = 0; k < size; ++k) {
      const index_t m = mul_mod((2 * n + 1) % period, k, period);
      const long double cosv = turns[static_cast<std::size_t>(m)].c;
      const long double factor = factors[static_cast<std::size_t>(k)];
      const double v = to_double(factor * cosv);
      if (inverse) {
        c(k, n) = cplx(v, 0.0);
      } else {
        c(n, k) = cplx(v, 0.0);
      }
    }
  }
}

// WHT, Sylvester (natural) order: H(n,k) = (-1)^popcount(n & k), scaled by plain_scale
// (H * H = N I).
void fill_wht(CoeffMatrix& c, index_t size, Norm norm, bool inverse) {
  const long double scale = plain_scale(size, norm, inverse);
  const double plus = to_double(scale);
  for (index_t n = 0; n < size; ++n) {
    for (index_t k = 0; k < size; ++k) {
      const bool odd = (std::popcount(static_cast<std::uint64_t>(n & k)) & 1) != 0;
      c(n, k) = cplx(odd ? -plus : plus, 0.0);
    }
  }
}

}  // namespace

TransformKind parse_transform(const std::string& word) {
  if (word == "dft") return TransformKind::dft;
  if (word == "dct") return TransformKind::dct;
  if (word == "dht") return TransformKind::dht;
  if (word == "wht") return TransformKind::wht;
  if (word == "gemt") return TransformKind::gemt;
  throw config_error("unknown transform '" + word + "' (expected dft, dct, dht, wht or gemt)");
}

std::string to_string(TransformKind k) {
  switch (k) {
    case TransformKind::dft:
      return "dft";
    case TransformKind::dct:
      return "dct";
    case TransformKind::dht:
      return "dht";
    case TransformKind::wht:
      return "wht";
    case TransformKind::gemt:
      return "gemt";
  }
  return "?";
}

Norm parse_norm(const std::string& word) {
  if (word == "ortho") return Norm::ortho;
  if (word == "backward") return Norm::backward;
  if (word == "forward") return Norm::forward;
  throw config_error("unknown norm '" + word + "' (expected ortho, backward or forward)");
}

std::string to_string(Norm n) {
  switch (n) {
    case Norm::ortho:
      return "ortho";
    case Norm::backward:
      return "backward";
    case Norm::forward:
      return "forward";
  }
  return "?";
}

void check_transform_size(TransformKind kind, index_t n, const std::string& what) {
  if (kind == TransformKind::gemt) {
    throw config_error(what + ": gemt coefficient matrices are read from a file, not built in");
  }
  if (n < 1) {
    throw input_error(what + ": transform size must be at least 1, got " + std::to_string(n));
  }
  if (kind == TransformKind::wht && !std::has_single_bit(static_cast<std::uint64_t>(n))) {
    throw input_error(what + ": wht needs a power-of-two size, got " + std::to_string(n));
  }
}

CoeffMatrix make_coefficients(TransformKind kind, index_t n, Norm norm, bool inverse,
                              const std::string& what) {
  check_transform_size(kind, n, what);
  CoeffMatrix c;
  c.rows = n;
  c.cols = n;
  c.data.assign(square_elements(n, 1, what, to_string(kind) + " coefficient matrix"),
                cplx(0.0, 0.0));
  switch (kind) {
    case TransformKind::dft:
      // Always complex (as numpy's fft output), even for N <= 2 where it happens to be real.
      c.is_complex = true;
      fill_dft(c, n, norm, inverse);
      break;
    case TransformKind::dct:
      fill_dct(c, n, norm, inverse);
      break;
    case TransformKind::dht:
      fill_dht(c, n, norm, inverse);
      break;
    case TransformKind::wht:
      fill_wht(c, n, norm, inverse);
      break;
    case TransformKind::gemt:
      break;  // handled above
  }
  return c;
}

void check_square(const CoeffMatrix& c, const std::string& what) {
  if (c.rows != c.cols) {
    throw input_error(what + ": matrix is not square (" + std::to_string(c.rows) + "x" +
                      std::to_string(c.cols) + ")");
  }
}

CoeffMatrix invert(const CoeffMatrix& c, const std::string& what) {
  check_square(c, what);
  const index_t n = c.rows;
  const std::size_t elements = square_elements(n, 2, what, "matrix to invert");
  CoeffMatrix a = c;  // reduced in place to the identity
  CoeffMatrix inv;
  inv.rows = n;
  inv.cols = n;
  inv.is_complex = c.is_complex;
  inv.data.assign(elements, cplx(0.0, 0.0));
  for (index_t i = 0; i < n; ++i) inv(i, i) = 1.0;

  double max_abs = 0.0;
  for (const cplx& v : c.data) max_abs = std::max(max_abs, std::abs(v));
  // Relative pivot threshold: a pivot this small against the matrix scale means the
  // matrix is singular to working precision.
  const double tol = 1e-14 * max_abs * static_cast<double>(n);

  // Gauss-Jordan elimination with partial pivoting on [a | inv].
  for (index_t col = 0; col < n; ++col) {
    index_t piv = col;
    double best = std::abs(a(col, col));
    for (index_t r = col + 1; r < n; ++r) {
      const double v = std::abs(a(r, col));
      if (v > best) {
        best = v;
        piv = r;
      }
    }
    if (!(best > tol)) throw input_error(what + ": matrix is singular");
    if (piv != col) {
      for (index_t k = 0; k < n; ++k) {
        std::swap(a(piv, k), a(col, k));
        std::swap(inv(piv, k), inv(col, k));
      }
    }
    const cplx rp = 1.0 / a(col, col);
    for (index_t k = 0; k < n; ++k) {
      a(col, k) *= rp;
      inv(col, k) *= rp;
    }
    for (index_t r = 0; r < n; ++r) {
      if (r == col) continue;
      const cplx f = a(r, col);
      if (f == cplx(0.0, 0.0)) continue;
      for (index_t k = 0; k < n; ++k) {
        a(r, k) -= f * a(col, k);
        inv(r, k) -= f * inv(col, k);
      }
    }
  }
  return inv;
}

}  // namespace triada
