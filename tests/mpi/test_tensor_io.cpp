// Parallel HDF5 tensor I/O (doc/design.md §5, §6) at the rank count this executable runs with.
// Tensors hold their global C-order index (doc/design.md §10.10), so write/read with different
// brick splits compare exactly. Checks that may differ between ranks are agreed with
// all_ranks() before a REQUIRE, so no rank leaves a test case while others wait in a
// collective.
#include <mpi.h>
#include <unistd.h>

#include <cstdint>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <sstream>
#include <string>
#include <vector>

#include "core/error.hpp"
#include "io/hdf5.hpp"
#include "io/output_files.hpp"
#include "io/tensor_io.hpp"
#include "mesh/mpi.hpp"
#include "support/catch.hpp"

using namespace triada;
namespace fs = std::filesystem;

namespace {

int rank_of_world() {
  int r = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &r);
  return r;
}
int size_of_world() {
  int s = 1;
  MPI_Comm_size(MPI_COMM_WORLD, &s);
  return s;
}

// True on every rank iff `ok` holds on every rank.
bool all_ranks(bool ok) {
  int mine = ok ? 1 : 0, all = 0;
  MPI_Allreduce(&mine, &all, 1, MPI_INT, MPI_LAND, MPI_COMM_WORLD);
  return all == 1;
}

// A fresh directory per test case, unique across concurrent ctest runs (np and the pid
// of rank 0 in its name); rank 0 creates and removes it.
class TempDir {
 public:
  explicit TempDir(const std::string& tag) {
    std::string p;
    if (rank_of_world() == 0) {
      p = (fs::temp_directory_path() / ("triada-io-np" + std::to_string(size_of_world()) + "-" +
                                        std::to_string(::getpid()) + "-" + tag))
              .string();
      fs::remove_all(p);
      fs::create_directories(p);
    }
    path_ = mpi::bcast_string(MPI_COMM_WORLD, p, 0);
  }
  ~TempDir() {
    MPI_Barrier(MPI_COMM_WORLD);
    std::error_code ec;
    if (rank_of_world() == 0) fs::remove_all(path_, ec);
  }
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;
  std::string file(const std::string& name) const { return path_ + "/" + name; }
  // Names of the entries in the directory, sorted.
  std::vector<std::string> entries() const {
    std::vector<std::string> names;
    for (const auto& e : fs::directory_iterator(path_)) names.push_back(e.path().filename());
    std::sort(names.begin(), names.end());
    return names;
  }

 private:
  std::string path_;
};

index_t global_index(const ext3& s, index_t i1, index_t i2, index_t i3) {
  return (i1 * s[1] + i2) * s[2] + i3;
}

Brick slab(const ext3& shape, int axis, int parts, int idx) {
  Brick b = whole(shape);
  const Range r = split_range(shape[axis], parts, idx);
  b.lo[axis] = r.lo;
  b.hi[axis] = r.hi;
  return b;
}

// This rank's brick in a P1 x P2 x P3 grid of the world (MPI_Dims_create factorisation).
Brick grid_brick(const ext3& shape) {
  const int size = size_of_world(), rank = rank_of_world();
  int dims[3] = {0, 0, 0};
  MPI_Dims_create(size, 3, dims);
  const int c[3] = {rank / (dims[1] * dims[2]), (rank / dims[2]) % dims[1], rank % dims[2]};
  Brick b;
  for (int d = 0; d < 3; ++d) {
    const Range r = split_range(shape[d], dims[d], c[d]);
    b.lo[d] = r.lo;
    b.hi[d] = r.hi;
  }
  return b;
}

// Values of a brick: f(global index) in C order of the brick.
template <class F>
auto fill(const Brick& b, const ext3& shape, F f) {
  std::vector<decltype(f(index_t{}))> v;
  v.reserve(static_cast<size_t>(b.count()));
  for (index_t i1 = b.lo[0]; i1 < b.hi[0]; ++i1)
    for (index_t i2 = b.lo[1]; i2 < b.hi[1]; ++i2)
      for (index_t i3 = b.lo[2]; i3 < b.hi[2]; ++i3)
        v.push_back(f(global_index(shape, i1, i2, i3)));
  return v;
}
double as_index(index_t g) {
  return static_cast<double>(g);
}
cplx as_complex_index(index_t g) {
  return {static_cast<double>(g), -2.0 * static_cast<double>(g) - 1.0};
}

std::string file_bytes(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), {});
}

void write_text(const std::string& path, const std::string& text) {
  std::ofstream(path, std::ios::binary) << text;
}

// Writes a whole tensor, each rank its `brick`.
template <class T>
void write_tensor(const std::string& file, const ext3& shape, const Brick& brick,
                  const std::vector<T>& values, ElementType type) {
  TensorWriter w(MPI_COMM_WORLD, DatasetRef{file, "/x"}, shape, type, false);
  w.write_brick(brick, values);
  w.commit();
}

// ---- serial HDF5 helpers to build odd input files (rank 0 only) ----

void add_dataset(hid_t file, const std::string& name, hid_t type, std::vector<hsize_t> dims,
                 const void* data = nullptr) {
  h5::Dataspace space(
      CHECK_H5(H5Screate_simple(static_cast<int>(dims.size()), dims.data(), nullptr)));
  h5::PropList lcpl(CHECK_H5(H5Pcreate(H5P_LINK_CREATE)));
  CHECK_H5(H5Pset_create_intermediate_group(lcpl.get(), 1));
  h5::Dataset d(CHECK_H5(
      H5Dcreate2(file, name.c_str(), type, space.get(), lcpl.get(), H5P_DEFAULT, H5P_DEFAULT)));
  if (data) CHECK_H5(H5Dwrite(d.get(), type, H5S_ALL, H5S_ALL, H5P_DEFAULT, data));
}

template <class F>
void make_h5(const std::string& path, F body) {
  h5::QuietErrors quiet;
  h5::File f(CHECK_H5(H5Fcreate(path.c_str(), H5F_ACC_TRUNC, H5P_DEFAULT, H5P_DEFAULT)));
  body(f.get());
}

h5::Datatype complex_type(hid_t part, size_t width) {
  h5::Datatype t(CHECK_H5(H5Tcreate(H5T_COMPOUND, 2 * width)));
  CHECK_H5(H5Tinsert(t.get(), "r", 0, part));
  CHECK_H5(H5Tinsert(t.get(), "i", width, part));
  return t;
}

// The message of the input_error `f` throws, or a description of what happened instead.
template <class F>
std::string input_error_of(F f) {
  try {
    f();
  } catch (const input_error& e) {
    return e.what();
  } catch (const std::exception& e) {
    return std::string("not an input_error: ") + e.what();
  }
  return "no error";
}

}  // namespace

TEST_CASE("parse_dataset_ref splits file and dataset at the last ':/'", "[tensor_io]") {
  CHECK(parse_dataset_ref("a.h5:/x").file == "a.h5");
  CHECK(parse_dataset_ref("a.h5:/x").dataset == "/x");
  CHECK(parse_dataset_ref("a.h5").file == "a.h5");
  CHECK(parse_dataset_ref("a.h5").dataset.empty());
  const DatasetRef r = parse_dataset_ref("/data/run:3/a:b.h5:/grp/y");
  CHECK(r.file == "/data/run:3/a:b.h5");
  CHECK(r.dataset == "/grp/y");
  CHECK(parse_dataset_ref("run:3.h5").file == "run:3.h5");
  CHECK(parse_dataset_ref("a.h5:/x").str() == "a.h5:/x");
  CHECK_THROWS_AS(parse_dataset_ref(":/x"), config_error);
}

TEST_CASE("a tensor written by axis-1 slabs reads back exactly through a 3D brick split",
          "[tensor_io]") {
  TempDir dir("slab-to-grid");
  const ext3 shape{5, 6, 7};  // N1 < 7 ranks: some slabs are empty and still take part
  const std::string file = dir.file("t.h5");
  const Brick wb = slab(shape, 0, size_of_world(), rank_of_world());
  write_tensor(file, shape, wb, fill(wb, shape, as_index), ElementType::float64);

  const TensorInfo info = inspect_tensor({file, ""});
  REQUIRE(info.dataset == "/x");
  REQUIRE(info.shape == shape);
  REQUIRE(info.type_name == "float64");
  REQUIRE_FALSE(info.is_complex);

  const Brick rb = grid_brick(shape);
  std::vector<double> got;
  read_brick(MPI_COMM_WORLD, file, info, rb, got);
  REQUIRE(all_ranks(got == fill(rb, shape, as_index)));
}

TEST_CASE("a tensor written by a 3D brick split reads back exactly through axis-3 slabs",
          "[tensor_io]") {
  TempDir dir("grid-to-slab");
  const ext3 shape{4, 3, 9};
  const std::string file = dir.file("t.h5");
  const Brick wb = grid_brick(shape);
  write_tensor(file, shape, wb, fill(wb, shape, as_index), ElementType::float64);

  const TensorInfo info = inspect_tensor({file, "/x"});
  const Brick rb = slab(shape, 2, size_of_world(), rank_of_world());
  std::vector<double> got;
  read_brick(MPI_COMM_WORLD, file, info, rb, got);
  REQUIRE(all_ranks(got == fill(rb, shape, as_index)));
}

TEST_CASE("a complex tensor round-trips exactly as h5py's complex128", "[tensor_io]") {
  TempDir dir("complex");
  const ext3 shape{3, 5, 4};
  const std::string file = dir.file("c.h5");
  const Brick wb = slab(shape, 1, size_of_world(), rank_of_world());
  write_tensor(file, shape, wb, fill(wb, shape, as_complex_index), ElementType::complex128);

  const TensorInfo info = inspect_tensor({file, ""});
  REQUIRE(info.is_complex);
  REQUIRE(info.type_name == "complex128");
  if (rank_of_world() == 0) {  // h5py's layout: {r: f64 at 0, i: f64 at 8}, 16 bytes
    h5::QuietErrors quiet;
    h5::File f(CHECK_H5(H5Fopen(file.c_str(), H5F_ACC_RDONLY, H5P_DEFAULT)));
    h5::Dataset d(CHECK_H5(H5Dopen2(f.get(), "/x", H5P_DEFAULT)));
    h5::Datatype t(CHECK_H5(H5Dget_type(d.get())));
    CHECK(H5Tget_size(t.get()) == 16);
    CHECK(H5Tget_member_offset(t.get(), 0) == 0);
    CHECK(H5Tget_member_offset(t.get(), 1) == 8);
    char* n0 = H5Tget_member_name(t.get(), 0);
    char* n1 = H5Tget_member_name(t.get(), 1);
    CHECK(std::string(n0) == "r");
    CHECK(std::string(n1) == "i");
    H5free_memory(n0);
    H5free_memory(n1);
  }
  const Brick rb = grid_brick(shape);
  std::vector<cplx> got;
  read_brick(MPI_COMM_WORLD, file, info, rb, got);
  REQUIRE(all_ranks(got == fill(rb, shape, as_complex_index)));
}

TEST_CASE("real file data reads into complex values with zero imaginary parts", "[tensor_io]") {
  TempDir dir("real-as-complex");
  const ext3 shape{6, 2, 3};
  const std::string file = dir.file("r.h5");
  const Brick wb = slab(shape, 0, size_of_world(), rank_of_world());
  write_tensor(file, shape, wb, fill(wb, shape, as_index), ElementType::float64);

  const TensorInfo info = inspect_tensor({file, ""});
  const Brick rb = grid_brick(shape);
  std::vector<cplx> got;
  read_brick(MPI_COMM_WORLD, file, info, rb, got);
  REQUIRE(all_ranks(got == fill(rb, shape, [](index_t g) { return cplx{as_index(g), 0.0}; })));
}

TEST_CASE("reading complex file data into real values is a logic error", "[tensor_io]") {
  TempDir dir("complex-as-real");
  const ext3 shape{2, 2, 2};
  const std::string file = dir.file("c.h5");
  const Brick wb = slab(shape, 0, size_of_world(), rank_of_world());
  write_tensor(file, shape, wb, fill(wb, shape, as_complex_index), ElementType::complex128);
  const TensorInfo info = inspect_tensor({file, ""});
  std::vector<double> got;
  // Thrown before any collective call, on every rank alike.
  REQUIRE_THROWS_AS(read_brick(MPI_COMM_WORLD, file, info, grid_brick(shape), got),
                    triada::internal_error);
}

TEST_CASE("int32, float32 and complex64 outputs keep their type and read back as double",
          "[tensor_io]") {
  TempDir dir("types");
  const ext3 shape{4, 4, 5};
  const Brick wb = grid_brick(shape), rb = slab(shape, 0, size_of_world(), rank_of_world());
  for (ElementType type : {ElementType::int32, ElementType::float32, ElementType::complex64}) {
    const std::string name = to_string(type);
    const std::string file = dir.file(name + ".h5");
    if (is_complex(type))
      write_tensor(file, shape, wb, fill(wb, shape, as_complex_index), type);
    else
      write_tensor(file, shape, wb, fill(wb, shape, as_index), type);
    const TensorInfo info = inspect_tensor({file, ""});
    CHECK(info.type_name == name);
    CHECK(info.is_complex == is_complex(type));
    bool same = false;
    if (is_complex(type)) {
      std::vector<cplx> got;
      read_brick(MPI_COMM_WORLD, file, info, rb, got);
      same = got == fill(rb, shape, as_complex_index);
    } else {
      std::vector<double> got;
      read_brick(MPI_COMM_WORLD, file, info, rb, got);
      same = got == fill(rb, shape, as_index);
    }
    INFO("type " << name);
    CHECK(all_ranks(same));
  }
}

TEST_CASE("one writer holds several uint32 datasets, each written by its bricks", "[tensor_io]") {
  TempDir dir("parts");
  const ext3 shape{3, 4, 5}, other{2, 2, 2};
  const std::string file = dir.file("parts.h5");
  const Brick wb = grid_brick(shape), ob = grid_brick(other);
  {
    TensorWriter w(MPI_COMM_WORLD, file,
                   {{"/g/a", shape, ElementType::uint32}, {"b", other, ElementType::uint32}},
                   false);
    const auto a = fill(wb, shape, [](index_t g) { return static_cast<std::uint32_t>(3 * g); });
    const auto b = fill(ob, other, [](index_t g) { return static_cast<std::uint32_t>(g + 7); });
    w.write_brick(0, wb, a);
    w.write_brick(1, ob, b);
    w.attributes_on("/g");
    w.set_attribute("axis", index_t{3});
    CHECK(all_ranks((rank_of_world() == 0) == (w.data_offset(1) > 0)));
    CHECK_THROWS_AS(w.write_brick(2, ob, b), triada::internal_error);
    w.commit();
  }
  const Brick rb = slab(shape, 2, size_of_world(), rank_of_world());
  const TensorInfo a = inspect_tensor({file, "/g/a"}), b = inspect_tensor({file, "/b"});
  CHECK(a.type_name == "uint32");
  CHECK(a.shape == shape);
  CHECK(b.shape == other);
  std::vector<double> got;
  read_brick(MPI_COMM_WORLD, file, a, rb, got);
  CHECK(all_ranks(got == fill(rb, shape, [](index_t g) { return 3.0 * static_cast<double>(g); })));
  read_brick(MPI_COMM_WORLD, file, b, whole(other), got);
  CHECK(all_ranks(got ==
                  fill(whole(other), other, [](index_t g) { return static_cast<double>(g + 7); })));
  if (rank_of_world() == 0) {
    h5::File f = h5::open_read_only(file);
    h5::Object g(CHECK_H5(H5Oopen(f.get(), "/g", H5P_DEFAULT)));
    CHECK(CHECK_H5(H5Aexists(g.get(), "axis")) > 0);
  }
}

TEST_CASE("attributes are written as UTF-8 strings, int64 arrays and float64 scalars",
          "[tensor_io]") {
  TempDir dir("attrs");
  const ext3 shape{2, 3, 2};
  const std::string file = dir.file("a.h5");
  {
    TensorWriter w(MPI_COMM_WORLD, DatasetRef{file, "/out/y"}, shape, false, false);
    const Brick b = slab(shape, 0, size_of_world(), rank_of_world());
    w.write_brick(b, fill(b, shape, as_index));
    w.set_attribute("transform", std::string("dft,dct,wht"));
    w.set_attribute("transform", std::string("dft,dct,wht (ü)"));  // replaces the first
    w.set_attribute("mesh", std::vector<index_t>{2, 3, 2});
    w.set_attribute("empty", std::vector<index_t>{});
    w.set_attribute("scale", 0.25);
    w.commit();
  }
  if (rank_of_world() == 0) {
    h5::QuietErrors quiet;
    h5::File f(CHECK_H5(H5Fopen(file.c_str(), H5F_ACC_RDONLY, H5P_DEFAULT)));
    h5::Dataset d(CHECK_H5(H5Dopen2(f.get(), "/out/y", H5P_DEFAULT)));
    {
      h5::Attribute a(CHECK_H5(H5Aopen(d.get(), "transform", H5P_DEFAULT)));
      h5::Datatype t(CHECK_H5(H5Aget_type(a.get())));
      REQUIRE(H5Tget_class(t.get()) == H5T_STRING);
      CHECK(H5Tis_variable_str(t.get()) > 0);
      CHECK(H5Tget_cset(t.get()) == H5T_CSET_UTF8);
      char* s = nullptr;
      CHECK_H5(H5Aread(a.get(), t.get(), &s));
      CHECK(std::string(s) == "dft,dct,wht (ü)");
      H5free_memory(s);
    }
    {
      h5::Attribute a(CHECK_H5(H5Aopen(d.get(), "mesh", H5P_DEFAULT)));
      h5::Datatype t(CHECK_H5(H5Aget_type(a.get())));
      CHECK(H5Tequal(t.get(), H5T_STD_I64LE) > 0);
      h5::Dataspace s(CHECK_H5(H5Aget_space(a.get())));
      hsize_t n = 0;
      CHECK(H5Sget_simple_extent_dims(s.get(), &n, nullptr) == 1);
      CHECK(n == 3);
      std::vector<std::int64_t> v(3);
      CHECK_H5(H5Aread(a.get(), H5T_NATIVE_INT64, v.data()));
      CHECK(v == std::vector<std::int64_t>{2, 3, 2});
    }
    {
      h5::Attribute a(CHECK_H5(H5Aopen(d.get(), "scale", H5P_DEFAULT)));
      double v = 0;
      CHECK_H5(H5Aread(a.get(), H5T_NATIVE_DOUBLE, &v));
      CHECK(v == 0.25);
    }
    CHECK(H5Aexists(d.get(), "empty") > 0);
  }
}

TEST_CASE("a writer destroyed without commit leaves no file behind", "[tensor_io]") {
  TempDir dir("no-commit");
  const ext3 shape{3, 3, 3};
  const std::string file = dir.file("out.h5");
  {
    TensorWriter w(MPI_COMM_WORLD, DatasetRef{file, ""}, shape, false, false);
    const Brick b = grid_brick(shape);
    w.write_brick(b, fill(b, shape, as_index));
  }
  MPI_Barrier(MPI_COMM_WORLD);
  bool clean = true;
  if (rank_of_world() == 0) clean = dir.entries().empty();
  REQUIRE(all_ranks(clean));
}

TEST_CASE("an aborted writer under force leaves the existing target byte-identical",
          "[tensor_io]") {
  TempDir dir("abort-keeps-target");
  const ext3 shape{3, 4, 2};
  const std::string file = dir.file("out.h5");
  const std::string before = "precious results, not HDF5\n";
  if (rank_of_world() == 0) write_text(file, before);
  MPI_Barrier(MPI_COMM_WORLD);
  {
    TensorWriter w(MPI_COMM_WORLD, DatasetRef{file, "/y"}, shape, true, true);
    const Brick b = grid_brick(shape);
    w.write_brick(b, fill(b, shape, as_complex_index));
    w.abort();
  }  // the destructor after abort() does nothing more
  bool kept = true;
  if (rank_of_world() == 0)
    kept = file_bytes(file) == before && dir.entries() == std::vector<std::string>{"out.h5"};
  REQUIRE(all_ranks(kept));
}

TEST_CASE("an existing target is refused on every rank without force", "[tensor_io]") {
  TempDir dir("refuse");
  const std::string file = dir.file("out.h5");
  if (rank_of_world() == 0) write_text(file, "old");
  MPI_Barrier(MPI_COMM_WORLD);
  std::string msg;
  bool collective_error = false;
  try {
    TensorWriter w(MPI_COMM_WORLD, DatasetRef{file, ""}, ext3{2, 2, 2}, false, false);
  } catch (const input_error& e) {
    msg = e.what();
    collective_error = dynamic_cast<const collective_marker*>(&e) != nullptr;
  }
  CHECK(msg == file + ": exists (not overwritten)");  // the library names no option
  CHECK(collective_error);
  bool kept = true;
  if (rank_of_world() == 0)
    kept = file_bytes(file) == "old" && dir.entries() == std::vector<std::string>{"out.h5"};
  REQUIRE(all_ranks(kept));
}

TEST_CASE("commit under force replaces an existing target", "[tensor_io]") {
  TempDir dir("force");
  const ext3 shape{2, 5, 3};
  const std::string file = dir.file("out.h5");
  if (rank_of_world() == 0) write_text(file, "old");
  MPI_Barrier(MPI_COMM_WORLD);
  {
    TensorWriter w(MPI_COMM_WORLD, DatasetRef{file, ""}, shape, false, true);
    const Brick b = slab(shape, 1, size_of_world(), rank_of_world());
    w.write_brick(b, fill(b, shape, as_index));
    w.commit();
  }
  const TensorInfo info = inspect_tensor({file, ""});
  CHECK(info.dataset == "/y");
  CHECK(info.shape == shape);
  bool only_target = true;
  if (rank_of_world() == 0) only_target = dir.entries() == std::vector<std::string>{"out.h5"};
  REQUIRE(all_ranks(only_target));
}

TEST_CASE("inspect_tensor names the input and the problem in one line", "[tensor_io]") {
  TempDir dir("inspect-errors");
  if (rank_of_world() != 0) return;  // serial API: rank 0 alone
  const auto f = [&](const std::string& n) { return dir.file(n); };
  const auto err = [](const std::string& spec) {
    return input_error_of([&] { inspect_tensor(parse_dataset_ref(spec)); });
  };
  h5::QuietErrors quiet;
  const std::vector<double> nine(9, 1.0);

  write_text(f("text.h5"), "not hdf5 at all\n");
  make_h5(f("rank2.h5"), [&](hid_t h) {
    add_dataset(h, "/a", H5T_IEEE_F64LE, {3, 3}, nine.data());
  });
  make_h5(f("two.h5"), [&](hid_t h) {
    add_dataset(h, "/a", H5T_IEEE_F64LE, {1, 1, 1});
    add_dataset(h, "/b", H5T_STD_I16LE, {1, 2, 1});
  });
  make_h5(f("string.h5"), [&](hid_t h) {
    h5::Datatype s(CHECK_H5(H5Tcopy(H5T_C_S1)));
    CHECK_H5(H5Tset_size(s.get(), 8));
    add_dataset(h, "/x", s.get(), {2, 2, 2});
  });
  make_h5(f("empty.h5"), [&](hid_t h) { add_dataset(h, "/x", H5T_IEEE_F64LE, {4, 0, 3}); });
  make_h5(f("nodata.h5"), [&](hid_t h) {
    h5::Group g(CHECK_H5(H5Gcreate2(h, "/g", H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT)));
  });
  make_h5(f("other-compound.h5"), [&](hid_t h) {
    h5::Datatype t(CHECK_H5(H5Tcreate(H5T_COMPOUND, 16)));
    CHECK_H5(H5Tinsert(t.get(), "re", 0, H5T_IEEE_F64LE));
    CHECK_H5(H5Tinsert(t.get(), "im", 8, H5T_IEEE_F64LE));
    add_dataset(h, "/x", t.get(), {1, 1, 1});
  });
  fs::create_directory(f("dir.h5"));

  const std::string d = f("");
  CHECK(err(d + "missing.h5") == d + "missing.h5: no such file");
  CHECK(err(d + "dir.h5") == d + "dir.h5: is a directory");
  CHECK(err(d + "text.h5") == d + "text.h5: not an HDF5 file");
  CHECK(err(d + "rank2.h5:/y") == d + "rank2.h5:/y: no such dataset");
  CHECK(err(d + "rank2.h5:/a/b/c") == d + "rank2.h5:/a/b/c: no such dataset");
  CHECK(err(d + "rank2.h5") == d + "rank2.h5: no rank-3 dataset (found: /a (rank 2))");
  CHECK(err(d + "nodata.h5") == d + "nodata.h5: no rank-3 dataset (the file has no datasets)");
  CHECK(err(d + "nodata.h5:/g") == d + "nodata.h5:/g: not a dataset (a group)");
  CHECK(err(d + "two.h5") ==
        d + "two.h5: several rank-3 datasets (/a, /b); name one as " + d + "two.h5:/a");
  CHECK(err(d + "rank2.h5:/a") == d + "rank2.h5:/a: rank 2, expected a rank-3 tensor");
  CHECK(err(d + "string.h5") == d + "string.h5:/x: unsupported element type (string)");
  CHECK(err(d + "other-compound.h5") ==
        d + "other-compound.h5:/x: unsupported element type (compound other than {r, i} of "
            "float32/float64)");
  CHECK(err(d + "empty.h5:/x") == d + "empty.h5:/x: empty extent 4x0x3");
}

TEST_CASE("inspect_tensor resolves the only rank-3 dataset and names its element type",
          "[tensor_io]") {
  TempDir dir("inspect-types");
  if (rank_of_world() != 0) return;
  h5::QuietErrors quiet;
  const std::string file = dir.file("mixed.h5");
  make_h5(file, [&](hid_t h) {
    add_dataset(h, "/meta/scale", H5T_IEEE_F64LE, {2});
    add_dataset(h, "/grp/t", H5T_STD_U8LE, {2, 3, 4});
    add_dataset(h, "/c64", complex_type(H5T_IEEE_F32LE, 4).get(), {1, 2});
    add_dataset(h, "/i64be", H5T_STD_I64BE, {1, 2});
  });
  const TensorInfo t = inspect_tensor({file, ""});
  CHECK(t.dataset == "/grp/t");
  CHECK(t.shape == ext3{2, 3, 4});
  CHECK(t.type_name == "uint8");
  CHECK_FALSE(t.is_complex);

  const std::string cfile = dir.file("c64.h5");
  make_h5(cfile, [&](hid_t h) {
    add_dataset(h, "/z", complex_type(H5T_IEEE_F32BE, 4).get(), {1, 1, 2});
  });
  const TensorInfo c = inspect_tensor({cfile, "/z"});
  CHECK(c.is_complex);
  CHECK(c.type_name == "complex64");
}

TEST_CASE("read_matrix reads integer, float and complex matrices and errors name file:dataset",
          "[tensor_io]") {
  TempDir dir("matrix");
  if (rank_of_world() != 0) return;
  h5::QuietErrors quiet;
  const std::string file = dir.file("coeffs.h5");
  const std::vector<std::int16_t> c1{1, -2, 3, 4, 5, -6};  // 2 x 3
  const std::vector<float> c2{0.5f, 1.5f, -2.5f, 3.5f};  // complex64 2 x 1: (0.5+1.5i), (-2.5+3.5i)
  make_h5(file, [&](hid_t h) {
    add_dataset(h, "/C1", H5T_NATIVE_INT16, {2, 3}, c1.data());
    h5::Datatype ct = complex_type(H5T_NATIVE_FLOAT, 4);
    add_dataset(h, "/C2", ct.get(), {2, 1}, c2.data());
    add_dataset(h, "/C3", H5T_IEEE_F64LE, {1, 1, 1});
  });
  const CoeffMatrix m1 = read_matrix(file, "/C1");
  CHECK(m1.rows == 2);
  CHECK(m1.cols == 3);
  CHECK_FALSE(m1.is_complex);
  CHECK(m1(1, 2) == cplx{-6.0, 0.0});
  CHECK(m1(0, 1) == cplx{-2.0, 0.0});
  const CoeffMatrix m2 = read_matrix(file, "/C2");
  CHECK(m2.is_complex);
  CHECK(m2.rows == 2);
  CHECK(m2.cols == 1);
  CHECK(m2(0, 0) == cplx{0.5, 1.5});
  CHECK(m2(1, 0) == cplx{-2.5, 3.5});

  CHECK(input_error_of([&] { read_matrix(file, "/C4"); }) == file + ":/C4: no such dataset");
  CHECK(input_error_of([&] { read_matrix(file, "/C3"); }) ==
        file + ":/C3: rank 3, expected a rank-2 matrix");
  CHECK(input_error_of([&] { read_matrix(dir.file("nope.h5"), "/C1"); }) ==
        dir.file("nope.h5") + ": no such file");
}

// Real arrays (the TCU's and triada-conv's operands) go through the tensor reader: the same
// checks and words, the rank range and the label of the request in them.
TEST_CASE("read_real_array checks and words its input as inspect_tensor does", "[tensor_io]") {
  TempDir dir("real-array");
  if (rank_of_world() != 0) return;
  h5::QuietErrors quiet;
  const auto f = [&](const std::string& n) { return dir.file(n); };
  const std::vector<std::int32_t> six{1, -2, 3, 4, 5, -6};
  write_text(f("text.h5"), "not hdf5 at all\n");
  make_h5(f("a.h5"), [&](hid_t h) {
    add_dataset(h, "/m", H5T_NATIVE_INT32, {1, 2, 3, 1}, six.data());
    add_dataset(h, "/r3", H5T_IEEE_F64LE, {1, 1, 1});
    add_dataset(h, "/z", complex_type(H5T_IEEE_F64LE, 8).get(), {2, 2});
    add_dataset(h, "/e", H5T_IEEE_F64LE, {0, 3});
    h5::Group g(CHECK_H5(H5Gcreate2(h, "/g", H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT)));
  });
  const std::string a = f("a.h5");
  const RealArray r = read_real_array({a, "", a, 4, 4});  // the file's only rank-4 dataset
  CHECK(r.dims == std::vector<index_t>{1, 2, 3, 1});
  CHECK(r.data == std::vector<double>{1, -2, 3, 4, 5, -6});

  const auto err = [&](const std::string& file, const std::string& dset, int lo, int hi) {
    return input_error_of([&] { read_real_array({file, dset, "--in " + file, lo, hi}); });
  };
  // Where inspect_tensor has the same case, the words are its own.
  const auto tensor_err = [&](const std::string& spec) {
    return input_error_of([&] { inspect_tensor(parse_dataset_ref(spec)); });
  };
  CHECK(err(f("text.h5"), "", 4, 4) == "--in " + tensor_err(f("text.h5")));
  CHECK(err(f("nope.h5"), "", 4, 4) == "--in " + tensor_err(f("nope.h5")));
  CHECK(err(a, "/g", 1, 2) == "--in " + tensor_err(a + ":/g"));
  CHECK(err(a, "/x", 1, 2) == "--in " + tensor_err(a + ":/x"));
  CHECK(err(a, "/e", 1, 2) == "--in " + a + ":/e: empty extent 0x3");
  CHECK(err(a, "/r3", 1, 2) == "--in " + a + ":/r3: rank 3, expected a rank-1 or rank-2 dataset");
  CHECK(err(a, "/m", 2, 2) == "--in " + a + ":/m: rank 4, expected a rank-2 matrix");
  CHECK(err(a, "", 2, 2) ==
        "--in " + a + ": several rank-2 datasets (/e, /z); name one as " + a + ":/e");
  CHECK(err(a, "/z", 1, 2) ==
        "--in " + a + ":/z: unsupported element type (complex128; integer or float expected)");
}

TEST_CASE("check_output_writable explains why an output cannot be written", "[tensor_io]") {
  TempDir dir("writable");
  if (rank_of_world() != 0) return;
  const std::string file = dir.file("out.h5");
  const auto err = [](const std::string& path, bool force) {
    return input_error_of([&] { check_output_writable({path, ""}, force); });
  };
  CHECK(err(file, false) == "no error");
  write_text(file, "x");
  CHECK(err(file, false) == file + ": exists (not overwritten)");
  set_overwrite_option("--force");  // as the programs do: the refusal names their option
  CHECK(err(file, false) == file + ": exists (use --force to overwrite)");
  set_overwrite_option("");
  CHECK(err(file, true) == "no error");
  fs::create_directory(dir.file("sub"));
  CHECK(err(dir.file("sub"), true) == dir.file("sub") + ": is a directory");
  CHECK(err(dir.file("none/out.h5"), false) ==
        dir.file("none/out.h5") + ": directory " + dir.file("none") + " does not exist");
  // /proc refuses new files even to root, for whom access(W_OK) would say yes.
  CHECK(err("/proc/out.h5", false) ==
        "/proc/out.h5: cannot create a file in /proc (No such file or directory)");
  CHECK(dir.entries() == std::vector<std::string>{"out.h5", "sub"});  // no probe left behind
}
