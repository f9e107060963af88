#include "apps/conv/options.hpp"

#include <boost/program_options.hpp>
#include <string>

#include "config/options.hpp"
#include "core/error.hpp"
#include "jobs/mxu_option_values.hpp"
#include "mxu/tensor_unit.hpp"
#include "report/provenance.hpp"

namespace po = boost::program_options;

namespace triada {

// ---------------------------------------------------------------------------------------
// Options

namespace {

void print_help(std::ostream& help, const po::options_description& desc) {
  help << "Usage: triada-conv (--network FILE.csv | --layer N,CI,HI,WI,CO,HF,WF,stride,pad"
          "[,dil[,groups]])\n"
          "                   [--method explicit|implicit|both] [--mxu S] [--batch N] "
          "[--latency L]\n"
          "                   [--cell-mode MODE] [--report FILE.json] [--csv FILE.csv] "
          "[--force]\n"
          "                   [--input FILE.h5] [--weights FILE.h5]\n"
          "                   [--seed S] [--verify] [--verify-budget MACS] [--max-layers K] "
          "[--mesh FILE.ini]\n\n"
          "Runs convolution layers on the planar MXU of the TriADA mesh (an S x S slice of "
          "cells) by\nexplicit im2col and by implicit channel-first im2col (Zhou et al., "
          "\"Characterizing and\nDemystifying the Implicit Convolution Algorithm on Commercial "
          "Matrix-Multiplication\nAccelerators\"), checks both against the direct convolution "
          "and reports, per layer and\nin total: IFMap and lowered bytes, extra memory ratio, "
          "MXU calls, cell steps,\nutilisation, MACs, energy and the implicit method's peak "
          "working memory.\n\n"
       << desc
       << "\nTable columns: MACs of the layer; IFMap and lowered matrix in MiB (float64 "
          "elements, 2^20 bytes);\nratio = lowered / IFMap; util = useful MACs / (sum over calls "
          "of r S S); eff.util also\ncounts the explicit lowering pass as time; extra MiB = peak "
          "working memory of the method (float64);\ncheck = max |y - y_direct| / max |y_direct| "
          "(ok when <= 1e-12 in fp64);\nDRAM MiB = bytes between host memory and the unit's "
          "buffer, read + written ([mxu] word_bits-bit words);\nstall % = stall cycles / "
          "(cycles + stall cycles).\n"
          "Exit codes: 0 fine, 1 bad input file, 2 bad option or network file, 3 internal "
          "error,\n4 a layer failed its check.\n";
}

}  // namespace

std::optional<ConvConfig> parse_conv_options(int argc, char** argv, std::ostream& help) {
  std::string network, layer, method, mxu, batch, latency, cell_mode, mesh, report, csv, input,
      weights, seed, budget, max_layers, executor, progress;
  bool verify = false;
  po::options_description desc("Options");
  // clang-format off
  desc.add_options()
      ("help,h", "print this help and exit")
      ("version", "print the version, git commit and MPI and HDF5 libraries, and exit")
      ("network", po::value(&network),
       "network file FILE.csv: one convolution layer a row, header 'Layer name,IFMAP Height,"
       "IFMAP Width,Filter Height,Filter Width,Channels,Num Filter,Strides,Padding[,Dilation"
       "[,Groups]]', '#' comment lines allowed (data/networks/ has alexnet, vgg16, resnet50, "
       "googlenet, yolov2, densenet121); SCALE-Sim's topology files as they are, told apart by "
       "the header: its convolution format (the first eight columns, IFMAP already padded: "
       "pad 0) and its GEMM format 'Layer,M,N,K' (each row M x K by K x N, run as a 1x1 "
       "convolution of an M x 1 IFMap with K channels by N filters)")
      ("layer", po::value(&layer),
       "one layer instead: N,CI,HI,WI,CO,HF,WF,stride,pad[,dil[,groups]] (batch, input "
       "channels, input height and width, filters, filter height and width, stride, zero "
       "padding per side, dilation, groups); stride S or SHxSW, dilation D or DHxDW, pad P, "
       "PHxPW (symmetric per axis) or T:L:B:R (top, left, bottom, right, ONNX's order); the "
       "network file's Strides, Padding and Dilation take the same forms")
      ("method", po::value(&method)->default_value("both"),
       "explicit (im2col: materialize the lowered matrix, then GEMM), implicit (channel-first: "
       "H_F x W_F partial 1x1 GEMMs fed by address generation, no lowered copy) or both")
      ("mxu", po::value(&mxu)->default_value("16"),
       "side S of the planar MXU: S x S cells (tensor unit size m = S^2)")
      ("batch", po::value(&batch),
       "batch N for every layer (network rows have N = 1; overrides N of --layer)")
      ("latency", po::value(&latency)->default_value("0"),
       "latency l of one tensor unit call, >= 0 (model time r S + l per call)")
      ("cell-mode", po::value(&cell_mode)->default_value("fp64"),
       ("cell arithmetic: " + cell_mode_names(", ") +
        " (not fp64: the error against the direct convolution is reported, not checked)")
           .c_str())
      ("executor", po::value(&executor)->default_value("fused"),
       "how the MXU runs its calls: fused (register-blocked kernels) or reference (the "
       "cell-by-cell loop of the cell rule, slow); bitwise the same outputs and counters")
      ("mesh", po::value(&mesh),
       "mesh config INI whose [energy] keys give the energies (mac_pj for fp64, mac_pj_<mode> "
       "otherwise, static_pj_per_cell_step) and whose [mxu] keys the memory side (sram_kib, "
       "word_bits, dram_gbps, clock_ghz); default: the built-in values of meshcfg/default.ini")
      ("report", po::value(&report), "write the JSON report (layers array and total) to this file "
       "(- : standard output)")
      ("csv", po::value(&csv), "write a per-layer CSV report to this file (- : standard "
       "output): one row per layer and method with the MACs, calls, cycles, utilisation, "
       "SRAM and DRAM traffic, stall cycles and energy (the JSON report's keys; doc/conv.md)")
      ("force", "overwrite an existing --report or --csv file")
      ("input", po::value(&input),
       "HDF5 input FILE[:/DSET] for --layer: N x C_I x H_I x W_I (NCHW); default dataset: the "
       "file's only rank-4 one; default: random values in [-1, 1) from --seed")
      ("weights", po::value(&weights),
       "HDF5 weights FILE[:/DSET] for --layer: C_O x C_I/groups x H_F x W_F; default: random "
       "from --seed")
      ("seed", po::value(&seed)->default_value("1"), "seed of the random inputs and weights")
      ("verify", po::bool_switch(&verify),
       "run the direct convolution (the seven nested loops, blocked) on every layer; without "
       "it only on layers whose direct cost is at most --verify-budget MACs (the table says "
       "which)")
      ("verify-budget", po::value(&budget)->default_value("2e9"),
       "direct-convolution MACs up to which a layer is checked without --verify (the direct "
       "loops run at a few 1e9 MACs a second on one core)")
      ("max-layers", po::value(&max_layers), "run only the first K layers of the network")
      ("progress", po::value(&progress)->default_value("auto"),
       "auto: a live line on a terminal, else a plain line every 10 s or 10% | always: plain "
       "lines, also on a terminal | never; rank 0 reports its layers and methods");
  // clang-format on
  const po::variables_map vm = parse_command_line_strict(argc, argv, desc);
  if (vm.count("help")) {
    print_help(help, desc);
    return std::nullopt;
  }
  ConvConfig c;
  refuse_empty_paths(vm, {"network", "input", "weights", "mesh", "report", "csv"});
  if (network.empty() && layer.empty())
    throw config_error(
        "give --network FILE.csv or --layer "
        "N,CI,HI,WI,CO,HF,WF,stride,pad (see --help)");
  c.network = network;
  c.layer_spec = layer;
  set_conv_method(c, method);
  c.mxu = parse_conv_mxu(mxu);
  if (vm.count("batch")) c.batch = parse_positive("--batch", batch);
  c.latency = parse_latency(latency);
  c.cell_mode = named("--cell-mode", [&] { return parse_cell_mode(cell_mode); });
  c.executor = named("--executor", [&] { return parse_mxu_executor(executor); });
  c.mesh = mesh;
  // The --mesh file's [energy] keys checked for the mode (a bad file fails up front).
  c.memory = parse_mesh_file(c.mesh, c.cell_mode).mxu;
  c.report = report;
  c.csv = csv;
  c.force = vm.count("force") > 0;
  c.input = input;
  c.weights = weights;
  c.seed = parse_seed(seed);
  c.verify = verify;
  c.verify_budget = parse_verify_budget(budget);
  if (vm.count("max-layers")) c.max_layers = parse_positive("--max-layers", max_layers);
  c.progress = parse_progress_mode(progress);
  c.command_line = shell_words(argc, argv);
  validate(c);
  return c;
}

}  // namespace triada
