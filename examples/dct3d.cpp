// A 3D DCT through the library's job API, as a C++ program would run one: a TransformJob
// run once on a tensor in memory and once on HDF5 files, each result checked against a
// direct DCT-II sum. Run it on any number of ranks:
//   mpirun -n 2 dct3d [DIR]   (DIR: where its two HDF5 files go, removed at the end;
//                              default the temporary directory, $TMPDIR or /tmp)
// Exit code 0 when both results match the direct sum, 1 otherwise.
#include <hdf5.h>
#include <mpi.h>

#include <cmath>
#include <cstdio>
#include <filesystem>
#include <iostream>
#include <numbers>
#include <string>
#include <triada/config.hpp>
#include <triada/counters.hpp>
#include <triada/errors.hpp>
#include <triada/jobs.hpp>
#include <utility>
#include <vector>

namespace {

constexpr triada::index_t kN1 = 6, kN2 = 5, kN3 = 4;

// The input: any values will do; these are easy to recognise.
std::vector<double> make_input() {
  std::vector<double> x(kN1 * kN2 * kN3);
  for (std::size_t i = 0; i < x.size(); ++i) x[i] = std::sin(0.7 * static_cast<double>(i)) + 0.1;
  return x;
}

// Orthonormal DCT-II along every axis, summed directly (the oracle).
double dct_factor(triada::index_t k, triada::index_t n, triada::index_t size) {
  const double scale = std::sqrt((k == 0 ? 1.0 : 2.0) / static_cast<double>(size));
  return scale * std::cos(std::numbers::pi * static_cast<double>((2 * n + 1) * k) /
                          static_cast<double>(2 * size));
}
std::vector<double> direct_dct(const std::vector<double>& x) {
  std::vector<double> y(x.size(), 0.0);
  for (triada::index_t k1 = 0; k1 < kN1; ++k1)
    for (triada::index_t k2 = 0; k2 < kN2; ++k2)
      for (triada::index_t k3 = 0; k3 < kN3; ++k3) {
        double sum = 0;
        for (triada::index_t n1 = 0; n1 < kN1; ++n1)
          for (triada::index_t n2 = 0; n2 < kN2; ++n2)
            for (triada::index_t n3 = 0; n3 < kN3; ++n3)
              sum += x[(n1 * kN2 + n2) * kN3 + n3] * dct_factor(k1, n1, kN1) *
                     dct_factor(k2, n2, kN2) * dct_factor(k3, n3, kN3);
        y[(k1 * kN2 + k2) * kN3 + k3] = sum;
      }
  return y;
}

double max_difference(const std::vector<double>& a, const std::vector<double>& b) {
  if (a.size() != b.size()) return INFINITY;
  double d = 0;
  for (std::size_t i = 0; i < a.size(); ++i) d = std::max(d, std::abs(a[i] - b[i]));
  return d;
}

// The config a command line "--input IN --output OUT --transform dct --quiet" would give
// (built-in mesh keys).
triada::TransformConfig dct_config(const std::string& in, const std::string& out) {
  triada::TransformConfig cfg;
  cfg.input = triada::parse_dataset_ref(in);
  cfg.output = triada::parse_dataset_ref(out);
  cfg.kinds = {triada::TransformKind::dct, triada::TransformKind::dct, triada::TransformKind::dct};
  cfg.transform_spec = "dct";
  cfg.mesh = triada::parse_mesh_file("");
  cfg.quiet = true;
  cfg.progress = triada::ProgressMode::never;
  return cfg;
}

// Rank 0: the tensor as one float64 dataset, or read back from one (plain HDF5 calls).
void write_h5(const std::string& file, const std::vector<double>& x) {
  const hsize_t dims[3] = {kN1, kN2, kN3};
  const hid_t f = H5Fcreate(file.c_str(), H5F_ACC_TRUNC, H5P_DEFAULT, H5P_DEFAULT);
  const hid_t space = H5Screate_simple(3, dims, nullptr);
  const hid_t d = H5Dcreate2(f, "x", H5T_IEEE_F64LE, space, H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT);
  H5Dwrite(d, H5T_NATIVE_DOUBLE, H5S_ALL, H5S_ALL, H5P_DEFAULT, x.data());
  H5Dclose(d), H5Sclose(space), H5Fclose(f);
}
std::vector<double> read_h5(const std::string& file, const char* dataset) {
  std::vector<double> y(kN1 * kN2 * kN3);
  const hid_t f = H5Fopen(file.c_str(), H5F_ACC_RDONLY, H5P_DEFAULT);
  const hid_t d = H5Dopen2(f, dataset, H5P_DEFAULT);
  H5Dread(d, H5T_NATIVE_DOUBLE, H5S_ALL, H5S_ALL, H5P_DEFAULT, y.data());
  H5Dclose(d), H5Fclose(f);
  return y;
}

// The DCT of x held in memory (named x and y in messages): whole on rank 0, the result
// gathered back to rank 0.
std::vector<double> dct_in_memory(const std::vector<double>& x) {
  const triada::TransformJob job(dct_config("x", "y"));
  triada::ArrayInputs in;
  in.x = triada::array_view(x.data(), {kN1, kN2, kN3});
  triada::TransformResult r = job.run(in, MPI_COMM_WORLD, std::cout);
  if (!r.report.is_null())
    std::cout << "in memory: " << r.counters.total(triada::Counter::macs) << " MACs\n";
  return std::move(r.y.real);  // empty on ranks other than 0
}

// The DCT of dir/x.h5:/x into dir/y.h5:/y, as triada-transform -i ... -o ... runs it.
void dct_of_file(const std::string& in, const std::string& out) {
  triada::TransformConfig cfg = dct_config(in + ":/x", out + ":/y");
  cfg.force = true;  // this program's own files
  triada::TransformJob(std::move(cfg)).run(MPI_COMM_WORLD, std::cout);
}

bool check(const char* what, const std::vector<double>& y, const std::vector<double>& want) {
  const double d = max_difference(y, want);
  std::cout << what << ": max |y - direct DCT| = " << d << "\n";
  return d < 1e-12;
}

}  // namespace

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int rank = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  const std::filesystem::path dir =
      argc > 1 ? std::filesystem::path(argv[1]) : std::filesystem::temp_directory_path();
  const std::string in = (dir / "dct3d_x.h5").string(), out = (dir / "dct3d_y.h5").string();
  bool ok = true;
  try {
    const std::vector<double> x = make_input(), want = direct_dct(x);
    const std::vector<double> y = dct_in_memory(x);
    if (rank == 0) ok = check("in memory", y, want) && ok;
    if (rank == 0) write_h5(in, x);
    MPI_Barrier(MPI_COMM_WORLD);
    dct_of_file(in, out);
    if (rank == 0) ok = check("HDF5 file", read_h5(out, "/y"), want) && ok;
  } catch (const std::exception& e) {  // a job's input errors are thrown by every rank
    std::cerr << "dct3d: error: " << triada::escape_controls(e.what()) << "\n";
    ok = false;
  }
  if (rank == 0) std::filesystem::remove(in), std::filesystem::remove(out);
  MPI_Bcast(&ok, 1, MPI_CXX_BOOL, 0, MPI_COMM_WORLD);
  H5close();  // before MPI_Finalize: the library's parallel HDF5 files use MPI
  MPI_Finalize();
  return ok ? 0 : 1;
}
