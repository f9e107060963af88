#include "config/options.hpp"

#include <algorithm>
#include <boost/program_options.hpp>
#include <map>
#include <string>
#include <vector>

#include "apps/bench/bench.hpp"
#include "core/error.hpp"
#include "precision/cell_mode.hpp"

namespace po = boost::program_options;

namespace triada {
namespace bench {

std::vector<std::string> split(const std::string& s, char sep) {
  std::vector<std::string> parts;
  size_t start = 0;
  while (true) {
    const size_t pos = s.find(sep, start);
    parts.push_back(s.substr(start, pos == std::string::npos ? pos : pos - start));
    if (pos == std::string::npos) break;
    start = pos + 1;
  }
  return parts;
}

ext3 parse_size(const std::string& token, const std::string& option) {
  const auto bad = [&] {
    return config_error(option + ": expected N or N1xN2xN3 with positive integers, got '" +
                        printable(token) + "'");
  };
  const std::vector<std::string> parts = split(token, 'x');
  ext3 s{};
  if (parts.size() == 1) {
    if (!parse_int(parts[0], s[0]) || s[0] < 1) throw bad();
    s = {s[0], s[0], s[0]};
  } else if (parts.size() == 3) {
    for (int d = 0; d < 3; ++d)
      if (!parse_int(parts[d], s[d]) || s[d] < 1) throw bad();
  } else {
    throw bad();
  }
  if (s[0] > 4096 || s[1] > 4096 || s[2] > 4096) throw bad();
  return s;
}

namespace {
const std::vector<std::string> kSparsities = {"dense", "r50", "r90", "r99", "lines90"};
const std::vector<std::string> kVariants = {"fused",    "reference", "openblas",
                                            "fftw-dft", "fftw-dct",  "fftw-dht"};

std::vector<std::string> parse_list(const std::string& s, const std::string& option,
                                    const std::vector<std::string>& allowed,
                                    const std::map<std::string, std::vector<std::string>>& alias) {
  std::vector<std::string> out;
  for (const std::string& word : list_items(option, s)) {
    std::vector<std::string> expanded{word};
    if (const auto it = alias.find(word); it != alias.end()) expanded = it->second;
    for (const std::string& w : expanded) {
      if (std::find(allowed.begin(), allowed.end(), w) == allowed.end()) {
        std::string list;
        for (const auto& a : allowed) list += (list.empty() ? "" : ", ") + a;
        for (const auto& [name, _] : alias) list += ", " + name;
        throw config_error(option + ": expected a comma-separated list of " + list + ", got '" +
                           printable(word) + "'");
      }
      if (std::find(out.begin(), out.end(), w) == out.end()) out.push_back(w);
    }
  }
  return out;
}

// The mode (--accuracy, --mxu, --m3xu, --calibrate: one at most) and the defaults of
// --sizes and --reps that follow from it and --quick.
void choose_mode(const po::variables_map& vm, BenchConfig& c, std::string& sizes,
                 std::string& reps) {
  c.quick = vm.count("quick") > 0;
  c.accuracy = vm.count("accuracy") > 0;
  c.mxu = vm.count("mxu") > 0;
  c.m3xu = vm.count("m3xu") > 0;
  c.calibrate = vm.count("calibrate") > 0;
  if (int(c.mxu) + int(c.accuracy) + int(c.m3xu) + int(c.calibrate) > 1)
    throw config_error("--mxu, --accuracy, --m3xu and --calibrate: choose one");
  if (c.calibrate)
    for (const char* unused :
         {"sparsity", "variants", "transform", "reference-max", "actuators", "mesh"})
      if (vm.count(unused) && !vm[unused].defaulted())
        throw config_error(std::string("--calibrate: --") + unused +
                           " does not apply (the calibration times the fused executor on a "
                           "dense DCT on each rank alone)");
  c.m3xu_size_default = vm["sizes"].defaulted();
  if (vm["sizes"].defaulted()) {
    if (c.calibrate)
      sizes = c.quick ? "64,128" : "128,192";
    else if (c.accuracy)
      sizes = c.quick ? "16x12x10" : "32";
    else if (c.quick)
      sizes = "16,12x10x8";
  }
  if (vm["reps"].defaulted()) {
    if (c.calibrate)
      reps = c.quick ? "3" : "7";
    else if (c.quick)
      reps = "1";
  }
}

}  // namespace

std::string default_json_path(const BenchConfig& c, int world_size) {
  const std::string day = host_name() + "-" + today();
  if (c.accuracy)
    return "bench/results/accuracy-" + day + "-np" + std::to_string(world_size) + ".json";
  if (c.mxu) return "bench/results/mxu-" + day + ".json";
  if (c.m3xu) return "bench/results/m3xu-" + day + ".json";
  if (c.calibrate)
    return "bench/results/calibration-" + day + "-np" + std::to_string(world_size) + ".json";
  return "bench/results/bench-" + day + "-np" + std::to_string(world_size) + ".json";
}

}  // namespace bench

using namespace bench;

std::optional<BenchConfig> parse_bench_options(int argc, char** argv, std::ostream& help,
                                               int world_size) {
  std::string sizes = "32,64,128,256,100x60x90", sparsity = "dense,r50,r90,r99,lines90",
              variants = "fused,reference,openblas,fftw", reps = "3", ref_max = "32768",
              transform = "dct", actuators = "colocated", seed = "1", json_path, mesh,
              progress = "auto";
  po::options_description desc("Options");
  // clang-format off
  desc.add_options()
    ("help,h", "print this help and exit")
    ("version", "print the version, git commit and MPI and HDF5 libraries, and exit")
    ("progress", po::value(&progress)->value_name("WHEN")->default_value(progress),
     "auto | always: a line on stderr per finished row (plain lines, terminal or not) | never")
    ("sizes", po::value(&sizes)->value_name("LIST")->default_value(sizes),
     "tensor shapes, comma-separated: N for an N^3 cube or N1xN2xN3")
    ("sparsity", po::value(&sparsity)->value_name("LIST")->default_value(sparsity),
     "input patterns (uniform values in [-1,1)): dense; r50, r90, r99 = 50/90/99% of the "
     "elements zero at random; lines90 = 90% of the (i1,i2) lines along axis 3 zero")
    ("variants", po::value(&variants)->value_name("LIST")->default_value(variants),
     "what to time: fused and reference (the TriADA executors, on every rank, ESOP on), "
     "openblas (3-mode product by cblas_dgemm, rank 0, one thread, in a child process "
     "without OPENBLAS_CORETYPE / OPENBLAS_L2_SIZE), fftw-dft, fftw-dct, fftw-dht (FFTW 3D "
     "transforms, rank 0, one thread); fftw = all three")
    ("reps", po::value(&reps)->value_name("N")->default_value(reps),
     "repetitions of each measurement; the best (smallest) time is reported")
    ("reference-max", po::value(&ref_max)->value_name("N")->default_value(ref_max),
     "run the reference executor only on shapes of at most N elements (it is much slower: "
     "doc/benchmarks.md gives the measured factor)")
    ("transform", po::value(&transform)->value_name("T")->default_value(transform),
     "transform the fused / reference rows run (dct or dht, norm ortho, on every axis); "
     "their FFTW ratio is to fftw-dct or fftw-dht")
    ("actuators", po::value(&actuators)->value_name("auto|colocated")->default_value(actuators),
     "colocated: actuators live in brick ranks, so every rank computes; auto: 3 dedicated "
     "actuator ranks when there are at least 4 ranks")
    ("seed", po::value(&seed)->value_name("S")->default_value(seed),
     "seed of the counter-based input generator (the input does not depend on the ranks)")
    ("json", po::value(&json_path)->value_name("FILE"),
     "JSON output (default bench/results/bench-<host>-<date>-np<ranks>.json, relative to "
     "the working directory; the folder is created; - : standard output)")
    ("force", "overwrite an existing --json file")
    ("quick", "smoke-test mode for the test suite: sizes 16 and 12x10x8, reps 1, every "
     "variant (explicit --sizes / --reps still win); with --accuracy: size 16x12x10")
    ("accuracy", ("instead of timing: run a complex 3D DFT, a real 3D DCT and a GEMM (gemt "
     "with C1 random, C2 = C3 = I) in every cell mode (" + cell_mode_names(", ") + ") and "
     "print max / mean relative error against the fp64 "
     "run of the same inputs, cycles and MAC energy per mode (size 32 unless --sizes; "
     "--sparsity, --variants, --reps, --transform are not used; JSON default "
     "bench/results/accuracy-<host>-<date>-np<ranks>.json)").c_str())
    ("mxu", "instead of the 3-mode product: time the planar MXU's fused executor (fp64, "
     "ESOP on, rank 0, one thread) against OpenBLAS dgemm on the same matrices: the GEMM of "
     "the 1x256x56x56 -> 256 3x3 pad 1 layer as the explicit method issues it (3136x2304 by "
     "2304x256) at S = 16 and 128, and the TCU matmul of side 2048 on m = 256; with --quick "
     "a 1x32x10x10 -> 32 layer at S = 4 and 16 and side 128 (JSON default "
     "bench/results/mxu-<host>-<date>.json)")
    ("m3xu", "instead: the M3XU paper's comparison (Table III, Sec. VI-B) of FP32 designs "
     "on the planar MXU at equal memory bandwidth, per unit and per area: the FP32-MXU, "
     "M3XU, 3xTF32, 4xTF32 and 3xBF16 on the FP16 MXU; an FP32 GEMM of side 128 on a 16 x 16 "
     "unit (--sizes N for another side; --quick: 32 on 4 x 4); constants from --mesh (JSON "
     "default bench/results/m3xu-<host>-<date>.json; doc/precision.md)")
    ("mesh", po::value(&mesh)->value_name("FILE"),
     "--accuracy, --m3xu: mesh config whose [energy] mac_pj / mac_pj_<mode> keys give the MAC "
     "energies (and, --m3xu, mac_ps_ and mac_um2_ the units' cycle and area; default: the "
     "built-in defaults, which meshcfg/default.ini writes out)")
    ("calibrate", "instead: measure the constants of a time model of a distributed run on "
     "this machine, every rank at once: the fused executor's MAC rate per rank (dense DCT on "
     "each rank's own one-rank mesh, left kernel along axis 3, right kernel along axes 1 and "
     "2; sizes 128,192, --quick 64,128, or --sizes), memcpy bandwidth, ping-pong and "
     "broadcast (MPI_Bcast, MPI_Ibcast) alpha-beta fits, barrier and shared-window fence "
     "latency, shared-memory read bandwidth, and whether MPI_Ibcast progresses during "
     "computation; median of --reps (default 7, --quick 3) after a warm-up (JSON default "
     "bench/results/calibration-<host>-<date>-np<ranks>.json, schema triada-calibration/1)");
  // clang-format on
  const po::variables_map vm = parse_command_line_strict(argc, argv, desc);
  if (vm.count("help")) {
    help << "Usage: [mpirun -np K] triada-bench [options]\n"
         << "Times the TriADA fused and reference executors against a 3-mode product through\n"
         << "OpenBLAS dgemm and FFTW's 3D transforms on this machine, prints a table on rank 0\n"
         << "and writes one JSON row per (shape, sparsity, variant). Times are the simulation\n"
         << "only: after input generation, before any output. Baselines run on rank 0.\n"
         << "With --accuracy it instead compares every cell mode with fp64 on a 3D DFT, a 3D\n"
         << "DCT and a GEMM (error, cycles, MAC energy; doc/precision.md); with --m3xu it\n"
         << "compares FP32 designs (FP32-MXU, M3XU, 3xTF32, 4xTF32, 3xBF16) as the M3XU paper "
            "does;\n"
         << "with --calibrate it measures this machine's compute rate, memory bandwidth and MPI\n"
         << "costs (alpha-beta fits) as constants of a time model of a distributed run.\n\n"
         << desc << "\n";
    return std::nullopt;
  }
  BenchConfig c;
  refuse_empty_paths(vm, {"json", "mesh"});
  choose_mode(vm, c, sizes, reps);
  c.mesh = mesh;
  if (!mesh.empty()) parse_mesh_file(mesh);  // a bad file fails up front, naming itself
  for (const std::string& tok : list_items("--sizes", sizes))
    c.sizes.push_back(parse_size(tok, "--sizes"));
  c.sparsities = parse_list(sparsity, "--sparsity", kSparsities, {});
  c.variants = parse_list(variants, "--variants", kVariants,
                          {{"fftw", {"fftw-dft", "fftw-dct", "fftw-dht"}}});
  if (!parse_int(reps, c.reps) || c.reps < 1 || c.reps > 1000)
    throw config_error("--reps: expected an integer in [1, 1000], got '" + printable(reps) + "'");
  if (!parse_int(ref_max, c.reference_max) || c.reference_max < 0)
    throw config_error("--reference-max: expected a non-negative integer, got '" +
                       printable(ref_max) + "'");
  c.transform = named("--transform", [&] { return parse_transform(transform); });
  if (c.transform != TransformKind::dct && c.transform != TransformKind::dht)
    throw config_error("--transform: expected dct or dht, got '" + printable(transform) + "'");
  if (actuators == "auto")
    c.actuators = ActuatorPlacement::automatic;
  else if (actuators == "colocated")
    c.actuators = ActuatorPlacement::colocated;
  else
    throw config_error("--actuators: expected auto or colocated, got '" + printable(actuators) +
                       "'");
  if (!parse_int(seed, c.seed))
    throw config_error("--seed: expected a non-negative integer, got '" + printable(seed) + "'");
  c.json = vm.count("json") ? json_path : default_json_path(c, world_size);
  if (c.json.empty()) throw config_error("--json: empty file name");
  c.force = vm.count("force") > 0;
  c.progress = parse_progress_mode(progress);
  c.command_line = shell_words(argc, argv);
  return c;
}

}  // namespace triada
