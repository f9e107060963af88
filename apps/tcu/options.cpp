#include "apps/tcu/options.hpp"

#include <boost/program_options.hpp>
#include <string>

#include "config/options.hpp"
#include "core/error.hpp"
#include "jobs/mxu_option_values.hpp"
#include "mxu/tcu_algorithms.hpp"
#include "mxu/tensor_unit.hpp"
#include "report/provenance.hpp"

namespace po = boost::program_options;

namespace triada {

namespace {

// --product, --k, --kernel, --points (validate() checks them against the algorithm).
void parse_parameters(const po::variables_map& vm, TcuConfig& c) {
  if (vm.count("product")) set_tcu_product(c, vm["product"].as<std::string>());
  if (vm.count("k")) c.sweeps = parse_positive("--k", vm["k"].as<std::string>());
  if (vm.count("kernel")) c.kernel = parse_tcu_kernel(vm["kernel"].as<std::string>());
  if (vm.count("points")) c.points = parse_positive("--points", vm["points"].as<std::string>());
}

void print_help(const po::options_description& desc, std::ostream& help) {
  help << "Usage: triada-tcu --algo NAME --size N --m M --latency L [--seed S] [--input "
          "FILE.h5]\n"
          "                  [--weak] [--cell-mode MODE] [--mesh FILE.ini] [--report "
          "FILE.json]\n"
          "                  [--product fast|classical|both] [--k K] [--kernel w,...,w] "
          "[--points P]\n"
          "       triada-tcu --algo NAME --sweep --latency L [--sizes a,b,c] [--ms 4,16,64] "
          "[--cell-mode MODE] [--report FILE.json]\n"
          "                  [--product fast|classical] [--k K] [--kernel w,...,w] "
          "[--points P]\n\n"
          "Runs a Tensor-Core-Unit algorithm (Chowdhury, Silvestri, Vella) on the planar MXU of "
          "the\nTriADA mesh, counts its (m, l)-TCU model time (calls: r sqrt(m) + l each; "
          "CPU: one unit\nper scalar operation) and compares it with the theorem's bound.\n\n"
       << desc
       << "\nExit codes: 0 verified, 1 bad input file, 2 bad option, 3 internal error, "
          "4 a result failed its check (fp64 cells only; see --cell-mode).\n";
}

}  // namespace

std::optional<TcuConfig> parse_tcu_options(int argc, char** argv, std::ostream& help) {
  std::string algo, size, m, latency, seed = "1", input, report, sizes, ms, cell_mode = "fp64",
                                      mesh, executor = "fused", progress = "auto";
  bool weak = false, sweep = false;
  std::string names;
  for (const auto& a : tcu_algorithms()) names += (names.empty() ? "" : ", ") + std::string(a.name);
  po::options_description desc("Options");
  desc.add_options()                                                                     //
      ("help,h", "print this help and exit")                                             //
      ("version", "print the version, git commit and MPI and HDF5 libraries, and exit")  //
      ("progress", po::value(&progress)->default_value(progress),
       "auto: a live line on a terminal, else a plain line every 10 s or 10% | always: plain "
       "lines, also on a terminal | never; a sweep reports its points, a single run nothing")  //
      ("algo", po::value(&algo), ("algorithm (required): " + names).c_str())                   //
      ("size", po::value(&size),
       "natural problem size (required for a single run unless --input): matrix side "
       "(matmul, strassen, spmm, stencil), equations (ge), vertices (tclosure, apsd), vector "
       "length (dft), bits (intmul, karatsuba), coefficients (polyeval)")  //
      ("m", po::value(&m),
       "tensor unit size m, a perfect square (the unit is sqrt(m) x sqrt(m) cells); required "
       "for a single run")                                                                    //
      ("latency", po::value(&latency), "latency l of one tensor unit call, >= 0 (required)")  //
      ("seed", po::value(&seed)->default_value("1"), "seed of the generated inputs")          //
      ("input", po::value(&input),
       "HDF5 input instead of generated data (any integer or float type; the size comes from "
       "the file): matmul, strassen, spmm read /A and /B (square), ge /A and /b, tclosure and "
       "apsd FILE[:/DATASET] (default /adjacency), dft FILE[:/DATASET] (default /x, a real or "
       "complex vector), stencil FILE[:/DATASET] (default /A, square), intmul and karatsuba "
       "/a and /b (32-bit digits in [0, 2^32), least significant first), polyeval "
       "/coefficients (a_0 first) and /points")  //
      ("product", po::value<std::string>(),
       "spmm and apsd: the matrix product, fast (default: Strassen, Theorem 1, the product "
       "Theorems 3 and 6 assume), classical (Theorem 2's blocking) or both (runs both, "
       "reports each one's model time and bound)")  //
      ("k", po::value<std::string>(),
       "stencil: number of sweeps k >= 1 (default: the largest even k whose 3k x 3k "
       "neighbourhood fits a DFT of length <= max(m, 8); the DFT length, the smallest power "
       "of sqrt(m) >= 3k, must be <= 2048)")  //
      ("kernel", po::value<std::string>(),
       "stencil: the 9 weights of A_t[i][j] = sum w(a,b) A_{t-1}[i+a][j+b], a, b in -1, 0, "
       "1, in the order w(-1,-1),w(-1,0),w(-1,1),w(0,-1),...,w(1,1) (default: an asymmetric "
       "advection-diffusion kernel summing to 1)")  //
      ("points", po::value<std::string>(),
       "polyeval: number of points p >= 1 (default p = n, the number of coefficients)")  //
      ("weak", po::bool_switch(&weak),
       "weak TCU model (Theorem 12): every call multiplies sqrt(m) x sqrt(m) by sqrt(m) x "
       "sqrt(m) (r = sqrt(m)), so tall products take more calls")                               //
      ("report", po::value(&report), "write a JSON report to this file (- : standard output)")  //
      ("force", "overwrite an existing --report file")                                          //
      ("mesh", po::value(&mesh),
       "mesh config INI whose [mxu] keys give the memory side (sram_kib, word_bits, dram_gbps, "
       "clock_ghz); default: the built-in values of meshcfg/default.ini")  //
      ("sweep", po::bool_switch(&sweep),
       "run a size series for each m of an m series, fit the growth exponent of the model "
       "time in the theorem's n and print it next to the theorem's exponent")  //
      ("sizes", po::value(&sizes),
       "sweep sizes a,b,c (default: a geometric series per algorithm)")  //
      ("ms", po::value(&ms),
       "sweep unit sizes a,b,c (default: --m if given, else 4,16,64,256 where the algorithm "
       "allows them)")  //
      ("cell-mode", po::value(&cell_mode)->default_value("fp64"),
       ("arithmetic of the unit's cells: " + cell_mode_names(", ") +
        " (doc/precision.md); each time step takes the mode's sub-steps (tcu.cycles). "
        "Outside fp64 a result may legitimately fail the algorithm's fp64 check: it is then "
        "reported as not verified, with its error, and does not change the exit code")
           .c_str())  //
      ("executor", po::value(&executor)->default_value("fused"),
       "how the unit runs its calls: fused (register-blocked kernels) or reference (the "
       "cell-by-cell loop of the cell rule, slow); bitwise the same results and counters");
  const po::variables_map vm = parse_command_line_strict(argc, argv, desc);
  if (vm.count("help")) {
    print_help(desc, help);
    return std::nullopt;
  }
  TcuConfig c;
  refuse_empty_paths(vm, {"input", "report", "mesh"});
  if (algo.empty()) throw config_error("missing --algo (see --help)");
  c.algo = algo;
  if (!vm.count("latency")) throw config_error("missing --latency (see --help)");
  c.latency = parse_latency(latency);
  c.seed = parse_seed(seed);
  if (vm.count("size")) c.size = parse_positive("--size", size);
  c.mesh = mesh;
  c.memory = parse_mesh_file(c.mesh).mxu;
  if (vm.count("m")) c.m = parse_positive("--m", m);
  c.input = input;
  c.weak = weak;
  c.report = report;
  c.force = vm.count("force") > 0;
  c.progress = parse_progress_mode(progress);
  c.command_line = shell_words(argc, argv);
  c.sweep = sweep;
  c.cell_mode = named("--cell-mode", [&] { return parse_cell_mode(cell_mode); });
  c.executor = named("--executor", [&] { return parse_mxu_executor(executor); });
  if (vm.count("sizes")) c.sizes = parse_positive_list("--sizes", sizes);
  if (vm.count("ms")) c.ms = parse_positive_list("--ms", ms);
  parse_parameters(vm, c);
  validate(c);
  return c;
}

}  // namespace triada
