#include "jobs/array_view.hpp"

#include <complex>
#include <cstdint>
#include <cstring>

#include "core/error.hpp"

namespace triada {

namespace {

// One element at p (numpy arrays may be unaligned: memcpy, which compiles to a load).
template <class S>
S load(const std::byte* p) {
  S v;
  std::memcpy(&v, p, sizeof v);
  return v;
}

template <class T, class S>
T convert(const S& v) {
  if constexpr (std::is_same_v<T, cplx>) {
    if constexpr (std::is_same_v<S, std::complex<float>> || std::is_same_v<S, cplx>)
      return cplx(static_cast<double>(v.real()), static_cast<double>(v.imag()));
    else
      return cplx(static_cast<double>(v), 0.0);
  } else {
    return static_cast<double>(v);  // callers never pass complex values to a real run
  }
}

template <class S, class T>
void copy_box_as(const ArrayView& a, const Brick& box, const ext3& origin, T* out) {
  const index_t s2 = a.strides[2];
  for (index_t i = box.lo[0]; i < box.hi[0]; ++i)
    for (index_t j = box.lo[1]; j < box.hi[1]; ++j) {
      const std::byte* p = a.data + (i - origin[0]) * a.strides[0] +
                           (j - origin[1]) * a.strides[1] + (box.lo[2] - origin[2]) * s2;
      for (index_t k = box.lo[2]; k < box.hi[2]; ++k, p += s2) *out++ = convert<T>(load<S>(p));
    }
}

// The loop of copy_box_as for a's element type (checked by check_array before).
template <class T>
void copy_box_typed(const ArrayView& a, const Brick& box, const ext3& origin, std::vector<T>& out) {
  out.resize(static_cast<std::size_t>(box.count()));
  T* o = out.data();
  const int n = a.itemsize;
  switch (a.kind) {
    case 'i':
      if (n == 1) return copy_box_as<std::int8_t>(a, box, origin, o);
      if (n == 2) return copy_box_as<std::int16_t>(a, box, origin, o);
      if (n == 4) return copy_box_as<std::int32_t>(a, box, origin, o);
      return copy_box_as<std::int64_t>(a, box, origin, o);
    case 'u':
      if (n == 1) return copy_box_as<std::uint8_t>(a, box, origin, o);
      if (n == 2) return copy_box_as<std::uint16_t>(a, box, origin, o);
      if (n == 4) return copy_box_as<std::uint32_t>(a, box, origin, o);
      return copy_box_as<std::uint64_t>(a, box, origin, o);
    case 'f':
      if (n == 4) return copy_box_as<float>(a, box, origin, o);
      return copy_box_as<double>(a, box, origin, o);
    default:
      if constexpr (std::is_same_v<T, cplx>) {
        if (n == 8) return copy_box_as<std::complex<float>>(a, box, origin, o);
        return copy_box_as<cplx>(a, box, origin, o);
      }
      throw error(a.type_name + ": complex values for a real run");  // a bug of the caller
  }
}

// A view of C-order elements of one type.
ArrayView c_order(const void* data, const std::vector<index_t>& shape, char kind, int itemsize,
                  const char* type_name) {
  ArrayView v{true, static_cast<const std::byte*>(data), shape, {}, kind, itemsize, type_name};
  index_t stride = itemsize;
  v.strides.resize(shape.size());
  for (std::size_t d = shape.size(); d-- > 0; stride *= shape[d]) v.strides[d] = stride;
  return v;
}
}  // namespace

ArrayView array_view(const double* data, const std::vector<index_t>& shape) {
  return c_order(data, shape, 'f', sizeof(double), "float64");
}
ArrayView array_view(const cplx* data, const std::vector<index_t>& shape) {
  return c_order(data, shape, 'c', sizeof(cplx), "complex128");
}

bool ArrayView::supported() const {
  switch (kind) {
    case 'i':
    case 'u':
      return itemsize == 1 || itemsize == 2 || itemsize == 4 || itemsize == 8;
    case 'f':
      return itemsize == 4 || itemsize == 8;
    case 'c':
      return itemsize == 8 || itemsize == 16;
    default:
      return false;
  }
}

std::string ArrayView::shape_string() const {
  std::string s;
  for (std::size_t d = 0; d < shape.size(); ++d) s += (d ? "x" : "") + std::to_string(shape[d]);
  return s;
}

void check_array(const ArrayView& a, int rank, const std::string& name) {
  if (!a.given) throw input_error(name + ": missing (no array given)");  // not "scalar"
  if (static_cast<int>(a.shape.size()) != rank)
    throw input_error(
        name + ": " +
        (a.shape.empty() ? std::string("scalar") : "rank " + std::to_string(a.shape.size())) +
        ", expected a rank-" + std::to_string(rank) + (rank == 3 ? " tensor" : " matrix"));
  for (index_t n : a.shape)
    if (n < 0)
      throw input_error(name + ": extent " + std::to_string(n) + " (" + a.shape_string() + ")");
  if (a.strides.size() != a.shape.size())
    throw input_error(name + ": " + std::to_string(a.strides.size()) + " strides for a rank-" +
                      std::to_string(a.shape.size()) + " array");
  if (!a.supported()) throw input_error(name + ": unsupported element type (" + a.type_name + ")");
  for (index_t n : a.shape)
    if (n == 0) throw input_error(name + ": empty extent " + a.shape_string());
  if (a.data == nullptr) throw input_error(name + ": no data (a null pointer)");
}

void copy_box(const ArrayView& a, const Brick& box, const ext3& origin, std::vector<double>& out) {
  copy_box_typed(a, box, origin, out);
}
void copy_box(const ArrayView& a, const Brick& box, const ext3& origin, std::vector<cplx>& out) {
  copy_box_typed(a, box, origin, out);
}

std::string matrix_label(const std::string& name, index_t rows, index_t cols) {
  return name + ": the " + std::to_string(rows) + "x" + std::to_string(cols) + " matrix";
}

CoeffMatrix to_matrix(const ArrayView& a, const std::string& name) {
  // The matrix as a 1 x rows x cols tensor: the same conversion as the bricks'.
  ArrayView t = a;
  t.shape = {1, a.shape[0], a.shape[1]};
  t.strides = {0, a.strides[0], a.strides[1]};
  CoeffMatrix m;
  m.rows = a.shape[0];
  m.cols = a.shape[1];
  m.is_complex = a.is_complex();
  matrix_elements(m.rows, m.cols, 1, matrix_label(name, m.rows, m.cols));
  copy_box(t, Brick{{0, 0, 0}, {1, m.rows, m.cols}}, {0, 0, 0}, m.data);
  return m;
}

}  // namespace triada
