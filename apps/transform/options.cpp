#include "apps/transform/options.hpp"

#include <algorithm>
#include <boost/program_options.hpp>
#include <climits>
#include <cstdint>

#include "config/options.hpp"
#include "core/error.hpp"
#include "precision/cell_mode.hpp"
#include "report/provenance.hpp"

namespace po = boost::program_options;

namespace triada {

namespace {

const std::string& text(const po::variables_map& vm, const std::string& key) {
  return vm[key].as<std::string>();
}

po::options_description transform_options() {
  po::options_description main(
      "triada-transform: a 3D transform or 3-mode product (GEMT) of an "
      "HDF5 tensor on a simulated TriADA mesh\n\n"
      "Usage: [mpirun -np K] triada-transform --input FILE[:/DSET] "
      "--output FILE[:/DSET] --transform T[,T,T] [options]\n\nOptions");
  // clang-format off
  main.add_options()
    ("help,h", "print this help and exit")
    ("version", "print the version, git commit and MPI and HDF5 libraries, and exit")
    ("input,i", po::value<std::string>(),
     "input tensor FILE[:/DSET]; default dataset: the file's only rank-3 dataset")
    ("output,o", po::value<std::string>(), "output FILE[:/DSET]; default dataset /y")
    ("xdmf", po::bool_switch(),
     "also write the output's XDMF sidecar FILE.xmf beside it: ParaView and VisIt open the "
     "result as a 3D grid (complex: its real and imaginary parts)")
    ("activity", po::value<std::string>(),
     "write every cell's MACs, Y-bus sends and receives and waits, per stage and in total, "
     "to this HDF5 file (3D datasets over the mesh), with its XDMF sidecar FILE.xmf")
    ("initial", po::value<std::string>(),
     "initial output Y0 FILE[:/DSET] of the output's shape (default dataset: the file's only "
     "rank-3 one): computes Y = Y0 + X x1 C1 x2 C2 x3 C3, the last stage accumulating onto Y0")
    ("transform,t", po::value<std::string>(),
     "dft | dct | dht | wht | gemt, or one per axis such as dft,dct,wht")
    ("inverse", po::bool_switch(), "stream the exact inverse matrices (same norm)")
    ("norm", po::value<std::string>()->default_value("ortho"),
     "numpy/scipy's norm: ortho (unitary) | backward (numpy/scipy default: inverse scaled) | "
     "forward (forward scaled by 1/N, dct 1/2N; inverse unscaled)")
    ("coeffs", po::value<std::string>(), "gemt: HDF5 file with matrices /C1 /C2 /C3 (N_s x K_s)")
    ("stage-order", po::value<std::string>()->default_value("312"),
     "order of the summation axes, any permutation of 123")
    ("esop", po::value<std::string>(), "on | off; overrides [esop] enabled (default on)")
    ("mesh", po::value<std::string>(), "mesh config INI file (see meshcfg/)")
    ("report", po::value<std::string>(), "write the JSON report (triada-report/1) here")
    ("trace", po::value<std::string>(), "write the per-step CSV trace here")
    ("force", po::bool_switch(), "overwrite an existing output file")
    ("dry-run", po::bool_switch(),
     "print the plan (rank layout, memory per rank, MPI traffic per stage, modelled time) and "
     "exit: reads only the inputs' metadata, writes no output (the plan as JSON to --report)")
    ("world-size", po::value<std::string>(),
     "with --dry-run: plan for this many ranks instead of this run's (a cluster run planned "
     "on a laptop; the node memory check is then left out)")
    ("quiet,q", po::bool_switch(), "print no summary and no progress line")
    ("progress", po::value<std::string>()->default_value("auto"),
     "auto: a live line on a terminal, else a plain line every 10 s or 10% | always: plain "
     "lines, also on a terminal | never")
    ("cell-mode", po::value<std::string>(),
     ("cell arithmetic (overrides [cell] mode): " + cell_mode_names(", ")).c_str())
    ("check", po::bool_switch(),
     "rerun in fp64 and report the max and mean relative error of the output")
    ("executor", po::value<std::string>()->default_value("fused"),
     "fused: brick-wide kernels (fast, the default); reference: the cell rule cell by cell. "
     "Both give the same bits and counters")
    ("transport", po::value<std::string>()->default_value("auto"),
     "how the fused executor moves pivot planes along a line of bricks: broadcast (messages on "
     "the line communicator) | shared (read through an MPI shared-memory window where the "
     "line's ranks share a node; broadcast elsewhere) | auto (chosen per stage, doc/scaling.md "
     "\"Parallel layout\"). Same bits, counters and MPI figures either way")
    ("model-only", po::value<std::string>(),
     "N1,N2,N3: read and compute nothing; report what dense mode costs on an input of this "
     "shape (closed-form counters, the physical model of doc/physical.md) with --transform, "
     "--report and the mesh keys; no --input, --output, --trace or --check; gemt: dense real "
     "N x N matrices, no --coeffs")
    ("shuffle-seed", po::value<std::string>()->default_value("0"),
     "stream coefficient rows in a seeded random order (0: natural order); the result is the "
     "same sum, used to check the coordinate-free cell rule");
  // clang-format on
  return main;
}

// The mesh keys, then the short spellings that override them (--cell-mode, --esop).
void mesh_part(const MeshCommandLine& cl, TransformConfig& c) {
  const po::variables_map& vm = cl.values();
  c.mesh = cl.mesh();
  if (vm.count("mesh")) c.mesh.file = text(vm, "mesh");
  if (vm.count("cell-mode")) {  // the short spelling of --cell.mode, which it overrides
    c.mesh.use_cell_mode(
        named("--cell-mode", [&] { return parse_cell_mode(text(vm, "cell-mode")); }));
  }
  c.check = vm["check"].as<bool>();
  if (vm.count("esop"))
    c.mesh.mode = parse_on_off(text(vm, "esop"), "--esop") ? Mode::esop : Mode::dense;
}

// A path option's dataset reference, if given.
DatasetRef dataset_part(const po::variables_map& vm, const std::string& key,
                        const std::string& spelled) {
  if (!vm.count(key)) return {};
  return named(spelled, [&] { return parse_dataset_ref(text(vm, key)); });
}

// The words parsed into the config; validate() checks what they say together.
TransformConfig transform_config(const MeshCommandLine& cl) {
  const po::variables_map& vm = cl.values();
  TransformConfig c;
  c.spelled = cl.spelled();
  refuse_empty_paths(vm, {"input", "output", "initial", "coeffs", "report", "trace", "activity"},
                     c.spelled);
  if (vm.count("model-only")) c.model_shape = parse_ext3(text(vm, "model-only"), "--model-only");
  c.input = dataset_part(vm, "input", c.spelled("input"));
  c.output = dataset_part(vm, "output", c.spelled("output"));
  if (!c.output.file.empty() && c.output.dataset.empty()) c.output.dataset = "/y";
  c.initial = dataset_part(vm, "initial", "--initial");
  if (vm.count("transform")) {
    c.transform_spec = text(vm, "transform");
    c.kinds = parse_transform_list(c.transform_spec, c.spelled("transform"));
  }
  c.inverse = vm["inverse"].as<bool>();
  c.norm = named("--norm", [&] { return parse_norm(text(vm, "norm")); });
  if (vm.count("coeffs")) c.coeffs = text(vm, "coeffs");
  c.stage_order =
      named("--stage-order", [&] { return parse_stage_order(text(vm, "stage-order")); });
  mesh_part(cl, c);
  if (vm.count("report")) c.report = text(vm, "report");
  if (vm.count("trace")) c.trace = text(vm, "trace");
  c.xdmf = vm["xdmf"].as<bool>();
  if (vm.count("activity")) c.activity = text(vm, "activity");
  c.force = vm["force"].as<bool>();
  c.dry_run = vm["dry-run"].as<bool>();
  if (vm.count("world-size")) {  // its range is validate's; a larger count stays larger
    const std::int64_t n = parse_positive("--world-size", text(vm, "world-size"));
    c.plan_world_size = static_cast<int>(std::min<std::int64_t>(n, INT_MAX));
  }
  c.quiet = vm["quiet"].as<bool>();
  c.progress = parse_progress_mode(text(vm, "progress"));
  c.executor = text(vm, "executor");
  c.transport = named("--transport", [&] { return parse_transport(text(vm, "transport")); });
  c.shuffle_seed = parse_unsigned("--shuffle-seed", text(vm, "shuffle-seed"));
  validate(c);
  return c;
}

}  // namespace

std::optional<TransformConfig> parse_transform_options(int argc, char** argv, std::ostream& out) {
  const std::optional<MeshCommandLine> cl =
      MeshCommandLine::parse(argc, argv, transform_options(), "mesh", out);
  if (!cl) return std::nullopt;
  TransformConfig c = transform_config(*cl);
  c.command_line = shell_words(argc, argv);
  return c;
}

}  // namespace triada
