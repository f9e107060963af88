// Test-only reference transforms: FFTW for dft/dct/dht, direct sums for wht and gemt.
// Independent of src/actuator/coefficients.cpp by design (it is what that code is
// checked against).
#include "support/oracle.hpp"

#include <fftw3.h>

#include <algorithm>
#include <bit>
#include <cmath>
#include <complex>
#include <cstddef>
#include <functional>
#include <random>
#include <stdexcept>
#include <string>
#include <utility>

namespace triada::test {

namespace {

std::size_t volume(const ext3& s) {
  return static_cast<std::size_t>(s[0] * s[1] * s[2]);
}

// Calls f(offset, stride) once for every line of `shape` along `axis` (C order).
void for_each_line(const ext3& shape, int axis,
                   const std::function<void(std::size_t, std::size_t)>& f) {
  const auto a = static_cast<std::size_t>(axis);
  std::size_t stride = 1;
  for (std::size_t b = a + 1; b < 3; ++b) stride *= static_cast<std::size_t>(shape[b]);
  std::size_t outer = 1;
  for (std::size_t b = 0; b < a; ++b) outer *= static_cast<std::size_t>(shape[b]);
  const std::size_t len = static_cast<std::size_t>(shape[a]);
  for (std::size_t o = 0; o < outer; ++o) {
    for (std::size_t i = 0; i < stride; ++i) f(o * len * stride + i, stride);
  }
}

// One 1D transform of length n, numpy/scipy scaling (doc/design.md §4), applied in place.
class LineTransform {
 public:
  LineTransform(TransformKind kind, std::size_t n, Norm norm, bool inverse)
      : kind_(kind), n_(n), norm_(norm), inverse_(inverse) {
    const int len = static_cast<int>(n);
    switch (kind) {
      case TransformKind::dft:
        cin_ = fftw_alloc_complex(n);
        cout_ = fftw_alloc_complex(n);
        plan_ = fftw_plan_dft_1d(len, cin_, cout_, inverse ? FFTW_BACKWARD : FFTW_FORWARD,
                                 FFTW_ESTIMATE);
        break;
      case TransformKind::dct:
      case TransformKind::dht: {
        rin_ = fftw_alloc_real(n);
        rout_ = fftw_alloc_real(n);
        const fftw_r2r_kind k = kind == TransformKind::dht ? FFTW_DHT
                                : inverse                  ? FFTW_REDFT01
                                                           : FFTW_REDFT10;
        plan_ = fftw_plan_r2r_1d(len, rin_, rout_, k, FFTW_ESTIMATE);
        break;
      }
      case TransformKind::wht:
        if (!std::has_single_bit(n)) {
          throw std::logic_error("oracle: wht needs a power-of-two size, got " + std::to_string(n));
        }
        break;
      case TransformKind::gemt:
        throw std::logic_error("oracle_transform: gemt is not a built-in transform");
    }
    if (kind != TransformKind::wht && plan_ == nullptr) {
      throw std::logic_error("oracle: FFTW could not plan a transform of size " +
                             std::to_string(n));
    }
  }
  ~LineTransform() {
    if (plan_ != nullptr) fftw_destroy_plan(plan_);
    fftw_free(cin_);
    fftw_free(cout_);
    fftw_free(rin_);
    fftw_free(rout_);
  }
  LineTransform(const LineTransform&) = delete;
  LineTransform& operator=(const LineTransform&) = delete;

  void apply(cplx* x, std::size_t stride) {
    switch (kind_) {
      case TransformKind::dft:
        apply_dft(x, stride);
        break;
      case TransformKind::dct:
      case TransformKind::dht:
        apply_r2r(x, stride, true);
        apply_r2r(x, stride, false);
        break;
      case TransformKind::wht:
        apply_wht(x, stride);
        break;
      case TransformKind::gemt:
        break;
    }
  }

 private:
  double nd() const { return static_cast<double>(n_); }
  // numpy scaling shared by dft, dht and wht: forward 1, inverse 1/N (backward);
  // forward 1/N, inverse 1 (forward); 1/sqrt(N) both ways (ortho).
  double plain_scale() const {
    if (norm_ == Norm::ortho) return 1.0 / std::sqrt(nd());
    if (norm_ == Norm::forward) return inverse_ ? 1.0 : 1.0 / nd();
    return inverse_ ? 1.0 / nd() : 1.0;
  }

  void apply_dft(cplx* x, std::size_t stride) {
    for (std::size_t i = 0; i < n_; ++i) {
      cin_[i][0] = x[i * stride].real();
      cin_[i][1] = x[i * stride].imag();
    }
    fftw_execute(plan_);
    const double s = plain_scale();
    for (std::size_t i = 0; i < n_; ++i) x[i * stride] = cplx(cout_[i][0], cout_[i][1]) * s;
  }

  // FFTW's REDFT10 is y_k = 2 sum_n x_n cos(pi (2n+1) k / 2N) (scipy dct, backward);
  // REDFT01 is x_n = y_0 + 2 sum_{k>=1} y_k cos(pi (2n+1) k / 2N), so scipy's idct is
  // REDFT01 / 2N. FFTW_DHT is the unnormalised sum of x_n cas(2 pi nk/N).
  void apply_r2r(cplx* x, std::size_t stride, bool real_part) {
    for (std::size_t i = 0; i < n_; ++i) {
      rin_[i] = real_part ? x[i * stride].real() : x[i * stride].imag();
    }
    double post0 = 1.0;
    double post = 1.0;
    if (kind_ == TransformKind::dht) {
      post0 = post = plain_scale();
    } else if (!inverse_) {
      if (norm_ == Norm::ortho) {  // f_0 / 2 = sqrt(1/4N), f_k / 2 = sqrt(1/2N)
        post0 = std::sqrt(1.0 / (4.0 * nd()));
        post = std::sqrt(1.0 / (2.0 * nd()));
      } else if (norm_ == Norm::forward) {  // scipy dct(norm="forward"): REDFT10 / 2N
        post0 = post = 1.0 / (2.0 * nd());
      }
    } else if (norm_ == Norm::forward) {  // scipy idct(norm="forward"): REDFT01 as is
    } else if (norm_ == Norm::ortho) {    // x_n = sum_k f_k y_k cos(...): pre-scale y
      rin_[0] *= std::sqrt(1.0 / nd());
      for (std::size_t i = 1; i < n_; ++i) rin_[i] *= std::sqrt(1.0 / (2.0 * nd()));
    } else {
      post0 = post = 1.0 / (2.0 * nd());
    }
    fftw_execute(plan_);
    for (std::size_t i = 0; i < n_; ++i) {
      const double v = rout_[i] * (i == 0 ? post0 : post);
      cplx& dst = x[i * stride];
      dst = real_part ? cplx(v, dst.imag()) : cplx(dst.real(), v);
    }
  }

  // Walsh-Hadamard, Sylvester order: y_k = sum_n x_n (-1)^popcount(n & k).
  void apply_wht(cplx* x, std::size_t stride) {
    std::vector<cplx> y(n_);
    for (std::size_t k = 0; k < n_; ++k) {
      cplx acc(0.0, 0.0);
      for (std::size_t n = 0; n < n_; ++n) {
        const cplx v = x[n * stride];
        acc += (std::popcount(n & k) % 2 == 0) ? v : -v;
      }
      y[k] = acc;
    }
    const double s = plain_scale();
    for (std::size_t k = 0; k < n_; ++k) x[k * stride] = y[k] * s;
  }

  TransformKind kind_;
  std::size_t n_;
  Norm norm_;
  bool inverse_;
  fftw_plan plan_ = nullptr;
  fftw_complex* cin_ = nullptr;
  fftw_complex* cout_ = nullptr;
  double* rin_ = nullptr;
  double* rout_ = nullptr;
};

}  // namespace

std::vector<cplx> oracle_transform(const std::vector<cplx>& x, const ext3& shape,
                                   const std::array<TransformKind, 3>& kinds, Norm norm,
                                   bool inverse) {
  if (x.size() != volume(shape)) {
    throw std::logic_error("oracle_transform: tensor size does not match shape " +
                           to_string(shape));
  }
  std::vector<cplx> y = x;
  for (int a = 0; a < 3; ++a) {
    const auto ua = static_cast<std::size_t>(a);
    LineTransform t(kinds[ua], static_cast<std::size_t>(shape[ua]), norm, inverse);
    for_each_line(shape, a,
                  [&](std::size_t off, std::size_t stride) { t.apply(y.data() + off, stride); });
  }
  return y;
}

std::vector<cplx> oracle_gemt(const std::vector<cplx>& x, const ext3& shape,
                              const std::array<const CoeffMatrix*, 3>& c) {
  using lcplx = std::complex<long double>;
  if (x.size() != volume(shape)) {
    throw std::logic_error("oracle_gemt: tensor size does not match shape " + to_string(shape));
  }
  std::vector<lcplx> v(x.begin(), x.end());
  ext3 cur = shape;
  for (std::size_t a = 0; a < 3; ++a) {
    const CoeffMatrix& m = *c[a];
    if (m.rows != cur[a] || m.data.size() != static_cast<std::size_t>(m.rows * m.cols)) {
      throw std::logic_error("oracle_gemt: matrix " + std::to_string(a + 1) + " is " +
                             std::to_string(m.rows) + "x" + std::to_string(m.cols) +
                             " but axis extent is " + std::to_string(cur[a]));
    }
    ext3 next = cur;
    next[a] = m.cols;
    std::vector<lcplx> w(volume(next));
    // W[.., k, ..] = sum_n V[.., n, ..] * C(n, k)  (doc/design.md §3).
    std::size_t inner = 1;
    for (std::size_t b = a + 1; b < 3; ++b) inner *= static_cast<std::size_t>(cur[b]);
    std::size_t outer = 1;
    for (std::size_t b = 0; b < a; ++b) outer *= static_cast<std::size_t>(cur[b]);
    const auto nrows = static_cast<std::size_t>(m.rows);
    const auto ncols = static_cast<std::size_t>(m.cols);
    for (std::size_t o = 0; o < outer; ++o) {
      for (std::size_t i = 0; i < inner; ++i) {
        for (std::size_t k = 0; k < ncols; ++k) {
          lcplx acc(0.0L, 0.0L);
          for (std::size_t n = 0; n < nrows; ++n) {
            const cplx cv = m.data[n * ncols + k];
            acc += v[(o * nrows + n) * inner + i] * lcplx(cv.real(), cv.imag());
          }
          w[(o * ncols + k) * inner + i] = acc;
        }
      }
    }
    v = std::move(w);
    cur = next;
  }
  std::vector<cplx> y(v.size());
  for (std::size_t i = 0; i < v.size(); ++i) {
    y[i] = cplx(static_cast<double>(v[i].real()), static_cast<double>(v[i].imag()));
  }
  return y;
}

namespace {

double streaming_mac(double w, double y, double c, bool fp32) {
  if (fp32) return std::fmaf(static_cast<float>(y), static_cast<float>(c), static_cast<float>(w));
  return std::fma(y, c, w);
}
cplx streaming_mac(const cplx& w, const cplx& y, const cplx& c, bool) {
  const double re = std::fma(-y.imag(), c.imag(), std::fma(y.real(), c.real(), w.real()));
  const double im = std::fma(y.imag(), c.real(), std::fma(y.real(), c.imag(), w.imag()));
  return {re, im};
}
double coefficient_as(double, const cplx& c) {
  return c.real();
}
cplx coefficient_as(const cplx&, const cplx& c) {
  return c;
}
bool zero_value(double v) {
  return v == 0.0;
}
bool zero_value(const cplx& v) {
  return v.real() == 0.0 && v.imag() == 0.0;
}
// Not inlined: GCC 12.2 -O2 drops a pair of binary32 roundings returned together
// (src/precision/cell_mode.cpp, to_binary32).
[[gnu::noinline]] double binary32(double v) {
  return static_cast<double>(static_cast<float>(v));
}
cplx binary32(const cplx& v) {
  return {binary32(v.real()), binary32(v.imag())};
}

// One stage along axis a (0-based): W[.., k, ..] = start + sum over t in natural order.
template <class T>
std::vector<T> streaming_stage(const std::vector<T>& v, const ext3& cur, std::size_t a,
                               const CoeffMatrix& m, const std::vector<T>& start,
                               const StreamingOptions& opt) {
  std::size_t inner = 1, outer = 1;
  for (std::size_t b = a + 1; b < 3; ++b) inner *= static_cast<std::size_t>(cur[b]);
  for (std::size_t b = 0; b < a; ++b) outer *= static_cast<std::size_t>(cur[b]);
  const auto nrows = static_cast<std::size_t>(m.rows), ncols = static_cast<std::size_t>(m.cols);
  std::vector<T> w = start;
  for (std::size_t o = 0; o < outer; ++o)
    for (std::size_t i = 0; i < inner; ++i)
      for (std::size_t k = 0; k < ncols; ++k) {
        T& acc = w[(o * ncols + k) * inner + i];
        for (std::size_t n = 0; n < nrows; ++n) {
          const T y = v[(o * nrows + n) * inner + i];
          const T cv = coefficient_as(y, m.data[n * ncols + k]);
          if (opt.esop && (zero_value(y) || zero_value(cv))) continue;
          acc = streaming_mac(acc, y, cv, opt.fp32);
        }
      }
  return w;
}

template <class T>
std::vector<T> streaming_impl(const std::vector<T>& x, const ext3& shape,
                              const std::array<const CoeffMatrix*, 3>& c,
                              const StreamingOptions& opt, const std::vector<T>* y0) {
  if (x.size() != volume(shape)) throw std::logic_error("oracle_streaming: wrong tensor size");
  std::vector<T> v = x;
  ext3 cur = shape;
  for (int st = 0; st < 3; ++st) {
    const auto a = static_cast<std::size_t>(opt.order[st] - 1);
    const CoeffMatrix& m = *c[a];
    if (m.rows != cur[a]) throw std::logic_error("oracle_streaming: matrix does not fit");
    ext3 next = cur;
    next[a] = m.cols;
    std::vector<T> start(volume(next), T{});
    if (st == 2 && y0) {
      if (y0->size() != start.size()) throw std::logic_error("oracle_streaming: wrong y0 size");
      for (std::size_t i = 0; i < start.size(); ++i)
        start[i] = opt.fp32 ? binary32((*y0)[i]) : (*y0)[i];
    }
    v = streaming_stage(v, cur, a, m, start, opt);
    cur = next;
  }
  return v;
}

}  // namespace

std::vector<double> oracle_streaming(const std::vector<double>& x, const ext3& shape,
                                     const std::array<const CoeffMatrix*, 3>& c,
                                     const StreamingOptions& opt, const std::vector<double>* y0) {
  return streaming_impl(x, shape, c, opt, y0);
}
std::vector<cplx> oracle_streaming(const std::vector<cplx>& x, const ext3& shape,
                                   const std::array<const CoeffMatrix*, 3>& c,
                                   const StreamingOptions& opt, const std::vector<cplx>* y0) {
  return streaming_impl(x, shape, c, opt, y0);
}

double max_rel_error(const std::vector<cplx>& got, const std::vector<cplx>& ref) {
  if (got.size() != ref.size()) {
    throw std::logic_error("max_rel_error: sizes differ (" + std::to_string(got.size()) + " vs " +
                           std::to_string(ref.size()) + ")");
  }
  double diff = 0.0;
  double scale = 0.0;
  double got_max = 0.0;
  for (std::size_t i = 0; i < got.size(); ++i) {
    diff = std::max(diff, std::abs(got[i] - ref[i]));
    scale = std::max(scale, std::abs(ref[i]));
    got_max = std::max(got_max, std::abs(got[i]));
  }
  return scale == 0.0 ? got_max : diff / scale;
}

std::vector<cplx> random_tensor(const ext3& shape, std::uint64_t seed, double zero_fraction,
                                bool complex_values, bool integers) {
  // Bits are turned into values by hand (not std::uniform_*_distribution) so the data are
  // the same with every standard library.
  std::mt19937_64 gen(seed);
  const auto unit = [&gen] { return static_cast<double>(gen() >> 11) * 0x1p-53; };  // [0,1)
  const auto value = [&] {
    if (integers) return static_cast<double>(static_cast<int>(gen() % 17) - 8);
    return 2.0 * unit() - 1.0;
  };
  std::vector<cplx> x(volume(shape));
  for (cplx& e : x) {
    const bool zero = unit() < zero_fraction;
    const double re = value();
    const double im = complex_values ? value() : 0.0;
    e = zero ? cplx(0.0, 0.0) : cplx(re, im);
  }
  return x;
}

}  // namespace triada::test
