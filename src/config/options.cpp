#include "config/options.hpp"

#include <boost/program_options.hpp>
#include <charconv>
#include <fstream>
#include <sstream>

#include "core/error.hpp"

namespace po = boost::program_options;

namespace triada {

bool parse_int(const std::string& s, std::int64_t& out) {
  const char* end = s.data() + s.size();
  const auto [p, ec] = std::from_chars(s.data(), end, out);
  return ec == std::errc() && p == end && !s.empty();
}

std::int64_t parse_positive(const std::string& option, const std::string& s) {
  std::int64_t v = 0;
  if (!parse_int(s, v) || v < 1)
    throw config_error(option + ": expected a positive integer, got '" + s + "'");
  return v;
}

ext3 parse_ext3(const std::string& s, const std::string& what) {
  ext3 e{};
  std::stringstream ss(s);
  std::string part;
  int i = 0;
  bool ok = true;
  while (ok && std::getline(ss, part, ',')) {
    if (i >= 3 || part.empty() || part.find_first_not_of("0123456789 ") != std::string::npos) {
      ok = false;
      break;
    }
    try {
      e[i++] = std::stoll(part);
    } catch (const std::exception&) {
      ok = false;
    }
  }
  if (!ok || i != 3 || e[0] < 1 || e[1] < 1 || e[2] < 1)
    throw config_error(what + ": expected three positive integers A,B,C, got '" + s + "'");
  return e;
}

namespace {

// [mesh] ... [energy] keys, declared once; defaults equal meshcfg/default.ini.
po::options_description mesh_options() {
  po::options_description d("Mesh configuration (INI sections of --mesh FILE; also --section.key)");
  // clang-format off
  d.add_options()
    ("mesh.cells", po::value<std::string>()->default_value("auto"),
     "cells P1,P2,P3 of the 3D mesh; auto = max(N, K) per axis")
    ("ranks.grid", po::value<std::string>()->default_value("auto"),
     "brick ranks p1,p2,p3 along the axes; auto = MPI_Dims_create")
    ("ranks.actuators", po::value<std::string>()->default_value("auto"),
     "auto: 3 dedicated actuator ranks when there are >= 4 ranks; colocated: always inside "
     "brick ranks")
    ("cell.mode", po::value<std::string>()->default_value("fp64"),
     "cell arithmetic: fp64, fp32, tf32, bf16, fp16, m3xu-fp32, m3xu-fp32c, 3xtf32")
    ("esop.enabled", po::value<std::string>()->default_value("on"),
     "on: elastic sparse outer-product (skip zero operands); off: dense")
    ("energy.mac_pj", po::value<double>()->default_value(18.4), "energy of one fp64 MAC (pJ)")
    ("energy.mac_pj_fp32", po::value<double>()->default_value(4.6), "energy of one fp32 MAC (pJ)")
    ("energy.mac_pj_tf32", po::value<double>()->default_value(2.2), "energy of one tf32 MAC (pJ)")
    ("energy.mac_pj_bf16", po::value<double>()->default_value(1.9), "energy of one bf16 MAC (pJ)")
    ("energy.mac_pj_fp16", po::value<double>()->default_value(2.0), "energy of one fp16 MAC (pJ)")
    ("energy.mac_pj_m3xu_fp32", po::value<double>()->default_value(6.2),
     "energy of one m3xu-fp32 MAC, both sub-steps (pJ)")
    ("energy.mac_pj_m3xu_fp32c", po::value<double>()->default_value(12.4),
     "energy of one m3xu-fp32c complex MAC, four sub-steps (pJ)")
    ("energy.mac_pj_3xtf32", po::value<double>()->default_value(6.6),
     "energy of one 3xtf32 MAC, three tf32 products (pJ)")
    ("energy.x_bus_send_pj", po::value<double>()->default_value(6.4),
     "energy of one coefficient element multicast on an X-bus (pJ)")
    ("energy.y_bus_send_pj", po::value<double>()->default_value(6.4),
     "energy of one pivot driving its Y line (pJ)")
    ("energy.y_bus_receive_pj", po::value<double>()->default_value(0.5),
     "energy of one cell latching a value off its Y line (pJ)")
    ("energy.wait_pj", po::value<double>()->default_value(0.1),
     "energy of one cell waiting on an empty Y line (pJ)")
    ("energy.static_pj_per_cell_step", po::value<double>()->default_value(0.05),
     "static (leakage) energy of one cell for one time step (pJ)");
  // clang-format on
  return d;
}

std::string on_off(const std::string& v, const std::string& what) {
  if (v == "on" || v == "true" || v == "1" || v == "yes") return "on";
  if (v == "off" || v == "false" || v == "0" || v == "no") return "off";
  throw config_error(what + ": expected on or off, got '" + v + "'");
}

double energy_value(const po::variables_map& vm, const std::string& key) {
  const double v = vm[key].as<double>();
  if (!(v >= 0.0) || v > 1e9) throw config_error(key + ": expected an energy >= 0 pJ");
  return v;
}

// The MAC energy of a cell mode: [energy] mac_pj (fp64) or mac_pj_<mode>.
double mac_energy(const po::variables_map& vm, CellMode mode) {
  static const char* const keys[] = {"energy.mac_pj",           "energy.mac_pj_fp32",
                                     "energy.mac_pj_tf32",      "energy.mac_pj_bf16",
                                     "energy.mac_pj_fp16",      "energy.mac_pj_m3xu_fp32",
                                     "energy.mac_pj_m3xu_fp32c", "energy.mac_pj_3xtf32"};
  return energy_value(vm, keys[static_cast<int>(mode)]);
}

MeshConfig mesh_from(const po::variables_map& vm) {
  MeshConfig m;
  const std::string cells = vm["mesh.cells"].as<std::string>();
  if (cells != "auto") m.cells = parse_ext3(cells, "mesh.cells");
  const std::string grid = vm["ranks.grid"].as<std::string>();
  if (grid != "auto") {
    const ext3 g = parse_ext3(grid, "ranks.grid");
    if (g[0] > 1 << 20 || g[1] > 1 << 20 || g[2] > 1 << 20)
      throw config_error("ranks.grid: too many ranks along an axis");
    m.grid = std::array<int, 3>{int(g[0]), int(g[1]), int(g[2])};
  }
  const std::string act = vm["ranks.actuators"].as<std::string>();
  if (act == "auto")
    m.actuators = ActuatorPlacement::automatic;
  else if (act == "colocated")
    m.actuators = ActuatorPlacement::colocated;
  else
    throw config_error("ranks.actuators: expected auto or colocated, got '" + act + "'");
  m.cell_mode = parse_cell_mode(vm["cell.mode"].as<std::string>());
  m.mode = on_off(vm["esop.enabled"].as<std::string>(), "esop.enabled") == "on" ? Mode::esop
                                                                                 : Mode::dense;
  for (int i = 0; i < 8; ++i) mac_energy(vm, static_cast<CellMode>(i));  // validate all
  m.energy.mac_pj = mac_energy(vm, m.cell_mode);
  m.energy.x_bus_send_pj = energy_value(vm, "energy.x_bus_send_pj");
  m.energy.y_bus_send_pj = energy_value(vm, "energy.y_bus_send_pj");
  m.energy.y_bus_receive_pj = energy_value(vm, "energy.y_bus_receive_pj");
  m.energy.wait_pj = energy_value(vm, "energy.wait_pj");
  m.energy.static_pj_per_cell_step = energy_value(vm, "energy.static_pj_per_cell_step");
  return m;
}

void store_mesh_file(const std::string& path, const po::options_description& desc,
                     po::variables_map& vm) {
  std::ifstream in(path);
  if (!in) throw config_error(path + ": cannot open mesh config");
  try {
    po::store(po::parse_config_file(in, desc, false), vm);
  } catch (const po::error& e) {
    throw config_error(path + ": " + e.what());
  }
}

// Boost's messages name the option; ours add the value where it helps.
template <class F>
void translate(F&& f) {
  try {
    f();
  } catch (const po::error& e) {
    throw config_error(e.what());
  }
}

}  // namespace

po::variables_map parse_command_line_strict(int argc, char** argv,
                                            const po::options_description& desc) {
  po::variables_map vm;
  translate([&] {
    const po::positional_options_description none;
    po::store(po::command_line_parser(argc, argv).options(desc).positional(none).run(), vm);
    po::notify(vm);
  });
  return vm;
}

MeshConfig parse_mesh_file(const std::string& path) {
  po::options_description desc = mesh_options();
  po::variables_map vm;
  if (!path.empty()) store_mesh_file(path, desc, vm);
  // An empty parse still stores the declared defaults.
  translate([&] {
    po::store(po::command_line_parser(std::vector<std::string>{}).options(desc).run(), vm);
    po::notify(vm);
  });
  MeshConfig m = mesh_from(vm);
  m.file = path;
  return m;
}

std::optional<TransformConfig> parse_transform_options(int argc, char** argv, std::ostream& out) {
  po::options_description main("triada-transform: a 3D transform or 3-mode product (GEMT) of an "
                               "HDF5 tensor on a simulated TriADA mesh\n\n"
                               "Usage: [mpirun -np K] triada-transform --input FILE[:/DSET] "
                               "--output FILE[:/DSET] --transform T[,T,T] [options]\n\nOptions");
  // clang-format off
  main.add_options()
    ("help,h", "print this help and exit")
    ("input,i", po::value<std::string>(),
     "input tensor FILE[:/DSET]; default dataset: the file's only rank-3 dataset")
    ("output,o", po::value<std::string>(), "output FILE[:/DSET]; default dataset /y")
    ("transform,t", po::value<std::string>(),
     "dft | dct | dht | wht | gemt, or one per axis such as dft,dct,wht")
    ("inverse", po::bool_switch(), "stream the exact inverse matrices (same norm)")
    ("norm", po::value<std::string>()->default_value("ortho"),
     "ortho (unitary, numpy norm=\"ortho\") | backward (numpy/scipy default)")
    ("coeffs", po::value<std::string>(), "gemt: HDF5 file with matrices /C1 /C2 /C3 (N_s x K_s)")
    ("stage-order", po::value<std::string>()->default_value("312"),
     "order of the summation axes, any permutation of 123")
    ("esop", po::value<std::string>(), "on | off; overrides [esop] enabled (default on)")
    ("mesh", po::value<std::string>(), "mesh config INI file (see meshcfg/)")
    ("report", po::value<std::string>(), "write the JSON report (triada-report/1) here")
    ("trace", po::value<std::string>(), "write the per-step CSV trace here")
    ("force", po::bool_switch(), "overwrite an existing output file")
    ("quiet,q", po::bool_switch(), "print no summary and no progress line")
    ("cell-mode", po::value<std::string>(),
     "cell arithmetic (overrides [cell] mode): fp64, fp32, tf32, bf16, fp16, m3xu-fp32, "
     "m3xu-fp32c, 3xtf32")
    ("check", po::bool_switch(),
     "rerun in fp64 and report the max and mean relative error of the output")
    ("executor", po::value<std::string>()->default_value("fused"),
     "fused: brick-wide kernels (fast, the default); reference: the cell rule cell by cell. "
     "Both give the same bits and counters")
    ("shuffle-seed", po::value<std::uint64_t>()->default_value(0),
     "stream coefficient rows in a seeded random order (0: natural order); the result is the "
     "same sum, used to check the coordinate-free cell rule");
  // clang-format on
  po::options_description mesh = mesh_options();
  po::options_description all;
  all.add(main).add(mesh);

  po::variables_map vm;
  translate([&] { po::store(po::parse_command_line(argc, argv, all), vm); });
  if (vm.count("help")) {
    out << all << "\n";
    return std::nullopt;
  }
  // The command line was stored first, so its values win over the INI file's.
  if (vm.count("mesh")) store_mesh_file(vm["mesh"].as<std::string>(), mesh, vm);
  translate([&] { po::notify(vm); });

  TransformConfig c;
  for (const char* req : {"input", "output", "transform"})
    if (!vm.count(req)) throw config_error(std::string("missing --") + req + " (see --help)");
  c.input = parse_dataset_ref(vm["input"].as<std::string>());
  c.output = parse_dataset_ref(vm["output"].as<std::string>());
  if (c.output.dataset.empty()) c.output.dataset = "/y";
  c.transform_spec = vm["transform"].as<std::string>();
  {
    std::vector<std::string> words;
    std::stringstream ss(c.transform_spec);
    std::string w;
    while (std::getline(ss, w, ',')) words.push_back(w);
    if (words.size() == 1) words = {words[0], words[0], words[0]};
    if (words.size() != 3)
      throw config_error("--transform: expected one transform or three (one per axis), got '" +
                         c.transform_spec + "'");
    for (int a = 0; a < 3; ++a) c.kinds[a] = parse_transform(words[a]);
  }
  c.inverse = vm["inverse"].as<bool>();
  c.norm = parse_norm(vm["norm"].as<std::string>());
  if (vm.count("coeffs")) c.coeffs = vm["coeffs"].as<std::string>();
  const bool any_gemt = std::find(c.kinds.begin(), c.kinds.end(), TransformKind::gemt) !=
                        c.kinds.end();
  if (any_gemt && c.coeffs.empty())
    throw config_error("--transform gemt needs --coeffs FILE.h5 with datasets /C1 /C2 /C3");
  if (!any_gemt && !c.coeffs.empty())
    throw config_error("--coeffs is only used with --transform gemt");
  c.stage_order = parse_stage_order(vm["stage-order"].as<std::string>());
  c.mesh = mesh_from(vm);
  if (vm.count("mesh")) c.mesh.file = vm["mesh"].as<std::string>();
  if (vm.count("cell-mode")) {  // the short spelling of --cell.mode, which it overrides
    c.mesh.cell_mode = parse_cell_mode(vm["cell-mode"].as<std::string>());
    c.mesh.energy.mac_pj = mac_energy(vm, c.mesh.cell_mode);
  }
  c.check = vm["check"].as<bool>();
  if (vm.count("esop"))
    c.mesh.mode = on_off(vm["esop"].as<std::string>(), "--esop") == "on" ? Mode::esop : Mode::dense;
  if (vm.count("report")) c.report = vm["report"].as<std::string>();
  if (vm.count("trace")) c.trace = vm["trace"].as<std::string>();
  c.force = vm["force"].as<bool>();
  c.quiet = vm["quiet"].as<bool>();
  c.executor = vm["executor"].as<std::string>();
  if (c.executor != "fused" && c.executor != "reference")
    throw config_error("--executor: expected fused or reference, got '" + c.executor + "'");
  c.shuffle_seed = vm["shuffle-seed"].as<std::uint64_t>();
  return c;
}

}  // namespace triada
