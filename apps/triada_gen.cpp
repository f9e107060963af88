// triada-gen: writes a synthetic rank-3 test tensor to HDF5. Every value is a pure
// function of (seed, stream, global index) through a counter-based hash (io/generate.hpp),
// so the file is the same for any number of MPI ranks; each rank writes its own slab
// along axis 1.
#include <mpi.h>

#include <boost/program_options.hpp>
#include <charconv>
#include <cstdint>
#include <cstdlib>
#include <iostream>
#include <limits>
#include <optional>
#include <sstream>
#include <string>
#include <vector>

#include "config/options.hpp"
#include "core/app.hpp"
#include "core/checked.hpp"
#include "core/error.hpp"
#include "core/types.hpp"
#include "geometry/brick.hpp"
#include "io/generate.hpp"
#include "io/tensor_io.hpp"
#include "mesh/mpi.hpp"
#include "mesh/node_memory.hpp"

namespace po = boost::program_options;

namespace triada {
namespace {

struct GenConfig {
  DatasetRef output;
  ElementType type = ElementType::float64;
  std::string dist_name = "uniform";
  GenSpec spec;  // shape, distribution, sparsity, zero lines / planes, seed
  bool force = false;
};

// ---------------------------------------------------------------------------------------
// Parsing: every option is a string here so that each bad value gets our own one line.

template <class Int>
bool parse_int(const std::string& s, Int& out) {
  const char* end = s.data() + s.size();
  const auto [p, ec] = std::from_chars(s.data(), end, out);
  return ec == std::errc() && p == end && !s.empty();
}

ext3 parse_shape(const std::string& s) {
  const auto bad = [&] {
    return config_error("--shape: expected three positive integers N1,N2,N3, got '" + printable(s) +
                        "'");
  };
  ext3 shape{};
  size_t start = 0;
  for (int d = 0; d < 3; ++d) {
    const size_t comma = s.find(',', start);
    if ((d < 2) != (comma != std::string::npos)) throw bad();
    const std::string part = s.substr(start, comma == std::string::npos ? comma : comma - start);
    if (!parse_int(part, shape[d]) || shape[d] < 1) throw bad();
    start = comma + 1;
  }
  const index_t max = std::numeric_limits<index_t>::max();
  if (shape[0] > max / shape[1] || shape[0] * shape[1] > max / shape[2])
    throw config_error("--shape: " + printable(s) + " has too many elements");
  return shape;
}

// Whole token (no spaces, hex or nan, unlike strtod).
double parse_fraction(const std::string& option, const std::string& s) {
  double v = 0;
  if (!parse_double(s, v) || !(v >= 0.0 && v <= 1.0))
    throw config_error(option + ": expected a fraction in [0, 1], got '" + printable(s) + "'");
  return v;
}

// Returns nothing for --help (the text goes to `help`).
std::optional<GenConfig> parse_options(int argc, char** argv, std::ostream& help) {
  std::string output, shape, type = "float64", dist = "uniform", sparsity = "0", lines = "0",
                             planes = "0", axis = "1", seed = "1";
  po::options_description desc("Options");
  // clang-format off
  desc.add_options()
    ("help,h", "print this help and exit")
    ("output,o", po::value(&output)->value_name("FILE[:/DSET]"),
     "output HDF5 file, optionally with the dataset path (default dataset /x); required")
    ("shape", po::value(&shape)->value_name("N1,N2,N3"),
     "tensor extents along axes 1, 2, 3 (axis 3 fastest, C order); required, all positive")
    ("type", po::value(&type)->value_name("TYPE")->default_value(type),
     "element type in the file: int32, float32, float64, complex64 or complex128")
    ("dist", po::value(&dist)->value_name("DIST")->default_value(dist),
     "values: uniform in [-1,1), normal (mean 0, sd 1), int (integers in [-9,9]), "
     "index (the global C-order index n1*N2*N3 + n2*N3 + n3, for exact tests) or ones; "
     "complex types draw real and imaginary parts independently (index and ones: "
     "imaginary part 0); int32 allows only int, index and ones")
    ("sparsity", po::value(&sparsity)->value_name("F")->default_value(sparsity),
     "fraction of elements set to zero, each independently at random (0 <= F <= 1)")
    ("zero-lines", po::value(&lines)->value_name("F")->default_value(lines),
     "fraction of the N1*N2 lines (i1,i2) along axis 3 set entirely to zero: exactly "
     "round(F*N1*N2) lines chosen at random")
    ("zero-planes", po::value(&planes)->value_name("F")->default_value(planes),
     "fraction of the planes orthogonal to --plane-axis set entirely to zero: exactly "
     "round(F*N) planes chosen at random")
    ("plane-axis", po::value(&axis)->value_name("A")->default_value(axis),
     "axis (1, 2 or 3) the zero planes are orthogonal to")
    ("seed", po::value(&seed)->value_name("S")->default_value(seed),
     "random seed, an integer in [0, 2^63); the same seed gives the same file for any "
     "number of MPI ranks")
    ("force", "overwrite an existing output file");
  // clang-format on

  const po::variables_map vm = parse_command_line_strict(argc, argv, desc);
  if (vm.count("help")) {
    help << "Usage: triada-gen --output FILE[:/DSET] --shape N1,N2,N3 [options]\n"
         << "Writes a synthetic rank-3 tensor (C order) for TriADA tests and benchmarks.\n"
         << "Run it under mpirun to write in parallel; the file does not depend on the number\n"
         << "of ranks. The output is written under a temporary name and renamed when complete.\n\n"
         << desc << "\n";
    return std::nullopt;
  }

  GenConfig cfg;
  if (output.empty()) throw config_error("--output: required (FILE[:/DSET])");
  cfg.output = parse_dataset_ref(output);
  if (cfg.output.dataset.empty()) cfg.output.dataset = "/x";
  if (shape.empty()) throw config_error("--shape: required (N1,N2,N3)");
  cfg.spec.shape = parse_shape(shape);
  try {
    cfg.type = parse_element_type(type);
  } catch (const config_error&) {
    throw config_error("--type: expected int32, float32, float64, complex64 or complex128, got '" +
                       printable(type) + "'");
  }
  cfg.spec.dist = named("--dist", [&] { return parse_dist(dist); });
  cfg.dist_name = dist;
  cfg.spec.sparsity = parse_fraction("--sparsity", sparsity);
  cfg.spec.zero_lines = parse_fraction("--zero-lines", lines);
  cfg.spec.zero_planes = parse_fraction("--zero-planes", planes);
  if (!parse_int(axis, cfg.spec.plane_axis) || cfg.spec.plane_axis < 1 || cfg.spec.plane_axis > 3)
    throw config_error("--plane-axis: expected 1, 2 or 3, got '" + printable(axis) + "'");
  if (!parse_int(seed, cfg.spec.seed) ||
      cfg.spec.seed > static_cast<std::uint64_t>(std::numeric_limits<index_t>::max()))
    throw config_error("--seed: expected an integer in [0, 2^63), got '" + printable(seed) + "'");
  cfg.force = vm.count("force") > 0;

  if (cfg.type == ElementType::int32) {
    if (cfg.spec.dist == Dist::uniform || cfg.spec.dist == Dist::normal)
      throw config_error("--dist " + dist +
                         ": values would truncate to 0 in --type int32 (use int, index or ones)");
    const index_t total = cfg.spec.shape[0] * cfg.spec.shape[1] * cfg.spec.shape[2];
    if (cfg.spec.dist == Dist::index && total - 1 > std::numeric_limits<std::int32_t>::max())
      throw config_error("--dist index: indices up to " + std::to_string(total - 1) +
                         " do not fit --type int32");
  }
  return cfg;
}

template <class T>
index_t generate_and_write(const GenConfig& c, MPI_Comm comm, TensorWriter& w) {
  int rank = 0, size = 1;
  CHECK_MPI(MPI_Comm_rank(comm, &rank));
  CHECK_MPI(MPI_Comm_size(comm, &size));
  const Brick slab = generator_slab(c.spec.shape, size, rank);
  std::vector<T> values;
  index_t local = 0;
  mpi::collectively(comm, [&] {
    local = out_of_memory_is_input_error(c.output.str(),
                                         [&] { return generate_brick(c.spec, slab, values); });
  });
  w.write_brick(slab, values);
  index_t total = 0;
  CHECK_MPI(MPI_Allreduce(&local, &total, 1, MPI_INT64_T, MPI_SUM, comm));
  return total;
}

int run(int argc, char** argv) {
  const MPI_Comm comm = MPI_COMM_WORLD;
  int rank = 0;
  CHECK_MPI(MPI_Comm_rank(comm, &rank));
  std::optional<GenConfig> parsed;
  std::ostringstream help;
  mpi::collectively(comm, [&] { parsed = parse_options(argc, argv, help); });
  if (!parsed) {
    if (rank == 0) std::cout << help.str();
    return 0;
  }
  const GenConfig& c = *parsed;

  // Up-front memory check of every rank's slab, before the output is created.
  const std::string what = c.output.str() + ": shape " + to_string(c.spec.shape);
  const std::size_t element = is_complex(c.type) ? sizeof(cplx) : sizeof(double);
  int size = 1;
  CHECK_MPI(MPI_Comm_size(comm, &size));
  std::uint64_t need = 0;
  mpi::collectively(comm, [&] {
    need = generate_bytes(c.spec, generator_slab(c.spec.shape, size, rank), element, what);
  });
  require_node_memory(comm, need, what);

  TensorWriter w(comm, c.output, c.spec.shape, c.type, c.force);
  const index_t nonzeros = is_complex(c.type) ? generate_and_write<cplx>(c, comm, w)
                                              : generate_and_write<double>(c, comm, w);
  w.set_attribute("generator", std::string("triada-gen"));
  w.set_attribute("shape", std::vector<index_t>(c.spec.shape.begin(), c.spec.shape.end()));
  w.set_attribute("type", to_string(c.type));
  w.set_attribute("dist", c.dist_name);
  w.set_attribute("seed", std::vector<index_t>{static_cast<index_t>(c.spec.seed)});
  w.set_attribute("sparsity", c.spec.sparsity);
  w.set_attribute("zero_lines", c.spec.zero_lines);
  w.set_attribute("zero_planes", c.spec.zero_planes);
  w.set_attribute("plane_axis", std::vector<index_t>{c.spec.plane_axis});
  w.commit();

  if (rank == 0) {
    const index_t total = c.spec.shape[0] * c.spec.shape[1] * c.spec.shape[2];
    std::cout << "triada-gen: wrote " << c.output.str() << " (" << to_string(c.spec.shape) << " "
              << to_string(c.type) << ", " << c.dist_name << ", " << total << " elements, "
              << nonzeros << " nonzeros)\n";
  }
  return 0;
}

}  // namespace
}  // namespace triada

int main(int argc, char** argv) {
  return triada::run_app("triada-gen", argc, argv, triada::run);
}
