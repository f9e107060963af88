#include "apps/gen/options.hpp"

#include <boost/program_options.hpp>
#include <charconv>
#include <cstdint>
#include <limits>
#include <string>

#include "config/options.hpp"
#include "core/error.hpp"
#include "core/types.hpp"
#include "report/provenance.hpp"

namespace po = boost::program_options;

namespace triada {
namespace {

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
  const std::vector<std::string> items = list_items("--shape", s);
  if (items.size() != 3) throw bad();
  ext3 shape{};
  for (int d = 0; d < 3; ++d)
    if (!parse_int(items[d], shape[d]) || shape[d] < 1) throw bad();
  const index_t max = std::numeric_limits<index_t>::max();
  if (shape[0] > max / shape[1] || shape[0] * shape[1] > max / shape[2])
    throw config_error("--shape: " + printable(s) + " has too many elements");
  return shape;
}

// "N:M" with integers 0 <= N <= M, M >= 1 (2:4: 2 of every 4 kept), or "none".
void parse_sparsity_pattern(const std::string& s, GenSpec& spec) {
  if (s == "none") return;
  const auto bad = [&](const std::string& why) {
    return config_error("--sparsity-pattern: " + why + ", got '" + printable(s) + "'");
  };
  const size_t colon = s.find(':');
  index_t n = 0, m = 0;
  if (colon == std::string::npos || !parse_int(s.substr(0, colon), n) ||
      !parse_int(s.substr(colon + 1), m) || n < 0)
    throw bad("expected N:M, two integers such as 2:4 (N of every M kept), or none");
  if (m < 1) throw bad("M must be at least 1");
  if (n > m) throw bad("N must not exceed M (N of every M consecutive elements are kept)");
  spec.pattern_n = n;
  spec.pattern_m = m;
}

// Whole token (no spaces, hex or nan, unlike strtod).
double parse_fraction(const std::string& option, const std::string& s) {
  double v = 0;
  if (!parse_double(s, v) || !(v >= 0.0 && v <= 1.0))
    throw config_error(option + ": expected a fraction in [0, 1], got '" + printable(s) + "'");
  return v;
}

}  // namespace

std::optional<GenConfig> parse_gen_options(int argc, char** argv, std::ostream& help) {
  std::string output, shape, type = "float64", dist = "uniform", sparsity = "0", lines = "0",
                             planes = "0", axis = "1", seed = "1", progress = "auto",
                             pattern = "none", pattern_axis, report;
  po::options_description desc("Options");
  // clang-format off
  desc.add_options()
    ("help,h", "print this help and exit")
    ("version", "print the version, git commit and MPI and HDF5 libraries, and exit")
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
    ("sparsity-pattern", po::value(&pattern)->value_name("N:M")->default_value(pattern),
     "structured sparsity (NVIDIA's 2:4): in every group of M consecutive elements along "
     "--pattern-axis, N chosen at random keep their value and the other M-N are zero (a "
     "last, shorter group of r keeps min(N, r)); with --sparsity, --zero-lines or "
     "--zero-planes, those zero more: at most N of every M")
    ("pattern-axis", po::value(&pattern_axis)->value_name("A"),
     "axis (1, 2 or 3) of the --sparsity-pattern groups; default 3, the contiguous one")
    ("seed", po::value(&seed)->value_name("S")->default_value(seed),
     "random seed, an integer in [0, 2^63); the same seed gives the same file for any "
     "number of MPI ranks")
    ("report", po::value(&report)->value_name("FILE"),
     "write a JSON record of the tensor written (schema triada-gen-report/1: its settings, "
     "elements and nonzeros, provenance)")
    ("force", "overwrite an existing output or report file")
    ("progress", po::value(&progress)->value_name("WHEN")->default_value(progress),
     "auto: a live line on a terminal, else a plain line every 10 s or 10% | always: plain "
     "lines, also on a terminal | never");
  // clang-format on

  OptionSpellings spelled;
  const po::variables_map vm = parse_command_line_strict(argc, argv, desc, &spelled);
  if (vm.count("help")) {
    help << "Usage: triada-gen --output FILE[:/DSET] --shape N1,N2,N3 [options]\n"
         << "Writes a synthetic rank-3 tensor (C order) for TriADA tests and benchmarks.\n"
         << "Run it under mpirun to write in parallel; the file does not depend on the number\n"
         << "of ranks. The output is written under a temporary name and renamed when complete.\n\n"
         << desc << "\n";
    return std::nullopt;
  }

  GenConfig cfg;
  refuse_empty_paths(vm, {"output", "report"}, spelled);
  if (output.empty()) throw config_error("--output: required (FILE[:/DSET])");
  cfg.output = named(spelled("output"), [&] { return parse_dataset_ref(output); });
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
  parse_sparsity_pattern(pattern, cfg.spec);
  if (vm.count("pattern-axis")) {
    if (cfg.spec.pattern_m == 0)
      throw config_error("--pattern-axis: only used with --sparsity-pattern N:M");
    if (!parse_int(pattern_axis, cfg.spec.pattern_axis) || cfg.spec.pattern_axis < 1 ||
        cfg.spec.pattern_axis > 3)
      throw config_error("--pattern-axis: expected 1, 2 or 3, got '" + printable(pattern_axis) +
                         "'");
  }
  if (!parse_int(seed, cfg.spec.seed) ||
      cfg.spec.seed > static_cast<std::uint64_t>(std::numeric_limits<index_t>::max()))
    throw config_error("--seed: expected an integer in [0, 2^63), got '" + printable(seed) + "'");
  cfg.report = report;
  cfg.force = vm.count("force") > 0;
  cfg.progress = parse_progress_mode(progress);
  cfg.command_line = shell_words(argc, argv);

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

}  // namespace triada
