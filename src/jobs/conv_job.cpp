#include "jobs/conv_job.hpp"

#include <array>
#include <boost/program_options.hpp>
#include <charconv>
#include <chrono>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <iomanip>
#include <limits>
#include <optional>
#include <ostream>
#include <sstream>
#include <utility>

#include "config/options.hpp"
#include "core/checked.hpp"
#include "core/error.hpp"
#include "core/finite.hpp"
#include "geometry/memory_model.hpp"
#include "io/hdf5.hpp"
#include "io/output_files.hpp"
#include "io/tensor_io.hpp"
#include "jobs/conv_csv.hpp"
#include "jobs/job_entry.hpp"
#include "jobs/memory_report.hpp"
#include "jobs/provenance.hpp"
#include "mesh/cancel.hpp"
#include "mesh/mpi.hpp"
#include "mxu/memory_side.hpp"
#include "mxu/tensor_unit.hpp"
#include "report/report.hpp"

namespace po = boost::program_options;
namespace fs = std::filesystem;

namespace triada {

namespace {

// A method is verified when max |y - y_direct| / max |y_direct| stays within this (fp64).
constexpr double kTolerance = 1e-12;

// ---------------------------------------------------------------------------------------
// Rank-4 HDF5 datasets (--input NCHW, --weights C_O x C_I/g x H_F x W_F)

struct Array4 {
  std::array<index_t, 4> dims{};
  std::vector<double> data;
};

// Reads FILE[:/DSET] (default: the file's only rank-4 dataset) as float64; integer and
// float types are converted by HDF5. Throws input_error naming the input.
Array4 read_rank4(const std::string& spec, const std::string& option) {
  const DatasetRef ref = parse_dataset_ref(spec);
  RealArray r = read_real_array({ref.file, ref.dataset, option + " " + ref.file, 4, 4});
  Array4 a;
  for (int i = 0; i < 4; ++i) a.dims[static_cast<size_t>(i)] = r.dims[static_cast<size_t>(i)];
  a.data = std::move(r.data);
  return a;
}

std::string dims_string(const std::array<index_t, 4>& d) {
  return std::to_string(d[0]) + "x" + std::to_string(d[1]) + "x" + std::to_string(d[2]) + "x" +
         std::to_string(d[3]);
}

// ---------------------------------------------------------------------------------------
// Formatting

std::string sci(double v) {
  std::ostringstream os;
  os << std::setprecision(2) << std::scientific << v;
  return os.str();
}

// 4224, 12.1k, 105M, 1.85G: exact below 10^4, else three significant digits.
std::string count(double v) {
  const char* units[] = {"", "k", "M", "G", "T", "P"};
  if (std::abs(v) < 1e4) return std::to_string(static_cast<long long>(std::llround(v)));
  int k = 0;
  while (std::abs(v) >= 1000 && k < 5) v /= 1000, ++k;
  return fixed(v, std::abs(v) >= 100 ? 0 : std::abs(v) >= 10 ? 1 : 2) + units[k];
}

// Memory figures of the table: MiB (2^20 bytes, doc/design.md §5.8).
std::string mebibytes(double bytes, int decimals = 2) {
  return fixed(bytes / 1048576.0, decimals);
}

// An output (--report or --csv), checked before any work (io/output_files.hpp): not an
// existing file without --force, not one of the run's inputs nor the other output.
TextOutput output_file(const ConvConfig& cfg, const std::string& path) {
  if (path.empty()) return {};
  const auto file_of = [](const std::string& spec) {
    return spec.empty() ? spec : parse_dataset_ref(spec).file;
  };
  check_distinct({{cfg.network, "--network", false},
                  {file_of(cfg.input), "--input", false},
                  {file_of(cfg.weights), "--weights", false},
                  {cfg.mesh, "--mesh", false},
                  {cfg.report, "--report", true},
                  {cfg.csv, "--csv", true}});
  return TextOutput(path, cfg.force);
}

nlohmann::json stats_json(const ConvStats& s, const ConvEnergy& e) {
  return {{"calls", s.calls},
          {"rows", s.rows},
          {"cell_steps", s.cell_steps},
          {"cycles", s.cycles},
          {"tensor_time", s.tensor_time},
          {"lowering_time", s.lowering_time},
          {"model_time", s.model_time()},
          {"macs", s.macs},
          {"macs_dense", s.macs_dense},
          {"useful_macs", s.useful_macs},
          {"utilisation", s.utilisation()},
          {"effective_utilisation", s.effective_utilisation()},
          {"energy_pj", conv_energy_pj(s, e.mac_pj, e.static_pj_per_cell_step)},
          {"lowered_bytes", s.lowered_bytes},
          {"padding_bytes", s.padding_bytes},
          {"peak_extra_bytes", s.peak_extra_bytes},
          {"packed_taps", s.packed_taps}};
}

// The stall fraction of a method's object (or of its totals).
double method_stall_fraction(const nlohmann::json& m) {
  return stall_fraction(m["stall_cycles"].get<double>(), m["cycles"].get<double>());
}

const char* const kDefinitions[][2] = {
    {"macs", "the layer's multiply-adds N H_O W_O C_O H_F W_F C_I / groups"},
    {"ifmap_bytes", "N C_I H_I W_I x 8 (float64)"},
    {"lowered_bytes", "explicit im2col's lowered matrix: N H_O W_O H_F W_F C_I x 8"},
    {"extra_memory_ratio", "lowered_bytes / ifmap_bytes (the paper's Table I)"},
    {"calls", "tensor unit calls (each multiplies r x S by S x S)"},
    {"rows", "sum of r over calls"},
    {"cell_steps", "time steps of the S x S slice (one per streamed row of B per S-row chunk)"},
    {"cycles", "cell_steps x the cell mode's sub-steps"},
    {"tensor_time", "TCU model time of the calls: sum of r S + latency"},
    {"lowering_time",
     "explicit only: IFMap elements read + lowered elements written, one unit each"},
    {"model_time", "tensor_time + lowering_time"},
    {"macs (method)", "cell updates done (ESOP skips zero operands: padding, tile fill)"},
    {"macs_dense", "sum over calls of r S S: what the unit could do in the rows it streamed"},
    {"utilisation", "useful_macs / macs_dense"},
    {"effective_utilisation",
     "useful_macs / (model_time S): a call of r rows takes r S time for r S^2 MACs"},
    {"energy_pj", "macs x mac_pj + cell_steps x S^2 x static_pj_per_cell_step"},
    {"padding_bytes", "explicit: zeros added to the lowered, filter and output matrices"},
    {"peak_extra_bytes",
     "most working memory alive at once besides IFMap, weights and output (measured; the "
     "implicit method's per-unit packed right tiles are its weights in tap order)"},
    {"packed_taps", "filter taps per call (implicit multi-tile: min(S / C_I, W_F))"},
    {"max_rel_error", "max |y - y_direct| / max |y_direct|"},
    {"sram_reads",
     "words read from the MXU buffer: per call the left rows (r S), the right tile (S^2), the "
     "results drained (r S) and, accumulating, the partial sums (r S)"},
    {"sram_writes",
     "words written into the MXU buffer: per call the left rows (r S), the results (r S), the "
     "right tile when loaded (S^2) and, accumulating, the partial sums (r S)"},
    {"dram_read_bytes",
     "bytes from host memory: per call the left rows, the right tile unless resident and, "
     "accumulating, the partial sums; explicit also the lowering pass's IFMap read"},
    {"dram_write_bytes",
     "bytes to host memory: per call the results; explicit also the lowered matrix written by "
     "the lowering pass"},
    {"tile_loads", "right tiles loaded into the buffer (no resident tile equal word for word)"},
    {"tile_hits",
     "calls whose right tile was resident (LRU over the buffer beyond 4 S^2 "
     "staging words)"},
    {"dram_cycles", "ceil(DRAM bytes / (dram_gbps / clock_ghz)) per call and per lowering pass"},
    {"stall_cycles",
     "cycles the unit waits for DRAM: per call max(0, DRAM cycles - the call's cycles) "
     "(transfers overlap compute, double-buffered); explicit also the whole lowering pass"},
    {"stall_fraction", "stall_cycles / (cycles + stall_cycles)"}};

// ---------------------------------------------------------------------------------------
// The table

void print_header(std::ostream& out) {
  out << std::left << std::setw(4) << "#" << std::setw(24) << "layer" << std::setw(32) << "shape"
      << std::right << std::setw(8) << "MACs" << std::setw(10) << "IFMap MiB" << std::setw(12)
      << "lowered MiB" << std::setw(7) << "ratio"
      << "  " << std::left << std::setw(9) << "method" << std::right << std::setw(9) << "calls"
      << std::setw(11) << "cell steps" << std::setw(7) << "util" << std::setw(9) << "eff.util"
      << std::setw(11) << "energy uJ" << std::setw(10) << "extra MiB" << std::setw(10) << "DRAM MiB"
      << std::setw(8) << "stall %"
      << "  " << std::left << "check" << std::right << "\n";
}

void print_method_row(std::ostream& out, const nlohmann::json& m, const std::string& method) {
  out << std::left << std::setw(9) << method << std::right << std::setw(9)
      << count(m["calls"].get<double>()) << std::setw(11) << count(m["cell_steps"].get<double>())
      << std::setw(7) << fixed(m["utilisation"].get<double>(), 3) << std::setw(9)
      << fixed(m["effective_utilisation"].get<double>(), 3) << std::setw(11)
      << fixed(m["energy_pj"].get<double>() / 1e6, 1) << std::setw(10)
      << mebibytes(m["peak_extra_bytes"].get<double>(), 3) << std::setw(10)
      << mebibytes(m["dram_read_bytes"].get<double>() + m["dram_write_bytes"].get<double>())
      << std::setw(8) << fixed(100.0 * method_stall_fraction(m), 1);
}

std::string check_text(const nlohmann::json& m) {
  if (m["max_rel_error"].is_null()) return "skipped (direct over budget; --verify)";
  const double err = m["max_rel_error"].get<double>();
  if (m["verified"].is_null()) return "error " + sci(err);
  return (m["verified"].get<bool>() ? "ok " : "FAILED ") + sci(err);
}

void print_layer(std::ostream& out, const nlohmann::json& L) {
  std::string shape = L["shape"].get<std::string>();
  bool first = true;
  for (const char* method : {"explicit", "implicit"}) {
    if (!L.contains(method)) continue;
    if (first) {
      out << std::left << std::setw(4) << L["index"].get<int>() << std::setw(24)
          << L["name"].get<std::string>().substr(0, 23) << std::setw(32) << shape.substr(0, 31)
          << std::right << std::setw(8) << count(L["macs"].get<double>()) << std::setw(10)
          << mebibytes(L["ifmap_bytes"].get<double>()) << std::setw(12)
          << mebibytes(L["lowered_bytes"].get<double>()) << std::setw(7)
          << fixed(L["extra_memory_ratio"].get<double>(), 2) << "  ";
    } else {
      out << std::setw(4 + 24 + 32 + 8 + 10 + 12 + 7 + 2) << "";
    }
    print_method_row(out, L[method], method);
    out << "  " << check_text(L[method]) << "\n";
    first = false;
  }
  out.flush();
}

// Sums of one method over the layers.
struct MethodTotal {
  std::uint64_t calls = 0, rows = 0, cell_steps = 0, cycles = 0, tensor_time = 0, lowering_time = 0,
                macs = 0, macs_dense = 0, useful_macs = 0, padding_bytes = 0, peak_extra_bytes = 0;
  double energy_pj = 0;
  nlohmann::json memory = nlohmann::json::object();  // kMemoryCounterKeys summed
  bool any = false;
  void add(const nlohmann::json& m) {
    any = true;
    calls += m["calls"].get<std::uint64_t>();
    rows += m["rows"].get<std::uint64_t>();
    cell_steps += m["cell_steps"].get<std::uint64_t>();
    cycles += m["cycles"].get<std::uint64_t>();
    tensor_time += m["tensor_time"].get<std::uint64_t>();
    lowering_time += m["lowering_time"].get<std::uint64_t>();
    macs += m["macs"].get<std::uint64_t>();
    macs_dense += m["macs_dense"].get<std::uint64_t>();
    useful_macs += m["useful_macs"].get<std::uint64_t>();
    padding_bytes += m["padding_bytes"].get<std::uint64_t>();
    peak_extra_bytes = std::max(peak_extra_bytes, m["peak_extra_bytes"].get<std::uint64_t>());
    energy_pj += m["energy_pj"].get<double>();
    for (const char* k : kMemoryCounterKeys)
      memory[k] = memory.value(k, std::uint64_t{0}) + m[k].get<std::uint64_t>();
  }
  nlohmann::json json(index_t side) const {
    const double model = static_cast<double>(tensor_time + lowering_time);
    nlohmann::json t = {
        {"calls", calls},
        {"rows", rows},
        {"cell_steps", cell_steps},
        {"cycles", cycles},
        {"tensor_time", tensor_time},
        {"lowering_time", lowering_time},
        {"model_time", tensor_time + lowering_time},
        {"macs", macs},
        {"macs_dense", macs_dense},
        {"useful_macs", useful_macs},
        {"utilisation", macs_dense ? double(useful_macs) / double(macs_dense) : 0.0},
        {"effective_utilisation", model > 0 ? double(useful_macs) / (model * double(side)) : 0.0},
        {"energy_pj", energy_pj},
        {"padding_bytes", padding_bytes},
        {"peak_extra_bytes", peak_extra_bytes}};
    t.update(memory);
    t["stall_fraction"] = method_stall_fraction(t);
    return t;
  }
};

}  // namespace

// ---------------------------------------------------------------------------------------
// Energy

ConvEnergy conv_energy_model(const std::string& mesh_path, CellMode mode) {
  const MeshConfig m = parse_mesh_file(mesh_path, mode);  // errors name the user's file
  return {m.energy.mac_pj(), m.energy.static_pj_per_cell_step};
}

// ---------------------------------------------------------------------------------------
// Running

// The report's object of one layer (without "index") from its outcome over the ranks.
nlohmann::json conv_layer_json(const ConvLayer& l, const LayerOutcome& o, const ConvConfig& cfg,
                               const ConvEnergy& energy) {
  nlohmann::json L;
  L["name"] = l.name;
  L["kind"] = l.kind();  // "gemm": a SCALE-Sim GEMM row, run as a 1x1 convolution
  if (l.gemm) L["gemm"] = {{"M", l.gemm->M}, {"N", l.gemm->N}, {"K", l.gemm->K}};
  L["shape"] = l.shape_string();
  for (const auto& [k, v] : {std::pair<const char*, index_t>{"N", l.N},
                             {"C_I", l.C_I},
                             {"H_I", l.H_I},
                             {"W_I", l.W_I},
                             {"C_O", l.C_O},
                             {"H_F", l.H_F},
                             {"W_F", l.W_F},
                             {"stride_h", l.stride_h},
                             {"stride_w", l.stride_w},
                             {"pad_top", l.pad_top},
                             {"pad_left", l.pad_left},
                             {"pad_bottom", l.pad_bottom},
                             {"pad_right", l.pad_right},
                             {"dilation_h", l.dilation_h},
                             {"dilation_w", l.dilation_w},
                             {"groups", l.groups},
                             {"H_O", l.H_O()},
                             {"W_O", l.W_O()}})
    L[k] = v;
  // The one value of a uniform layer (null when it differs per axis or side).
  for (const auto& [k, v] :
       {std::pair<const char*, std::optional<index_t>>{"stride", l.uniform_stride()},
        {"pad", l.uniform_pad()},
        {"dilation", l.uniform_dilation()}})
    L[k] = v ? nlohmann::json(*v) : nlohmann::json();
  L["macs"] = l.macs();
  L["ifmap_bytes"] = l.ifmap_bytes();
  L["lowered_bytes"] = l.lowered_bytes();
  L["extra_memory_ratio"] = double(l.lowered_bytes()) / double(l.ifmap_bytes());
  L["check"] = o.checked ? (cfg.verify ? "direct (--verify)" : "direct (within the budget)")
                         : "skipped: direct convolution costs " + count(double(l.macs())) +
                               " MACs, above --verify-budget " + count(cfg.verify_budget) +
                               " (--verify runs it)";
  L["direct_seconds"] = o.direct_seconds;
  const bool fp64 = cfg.cell_mode == CellMode::fp64;
  nlohmann::json verified = nullptr;
  for (const MethodOutcome* mo : {&o.ex, &o.im}) {
    if (!mo->ran) continue;
    nlohmann::json m = stats_json(mo->stats, energy);
    m.update(memory_counters_json(mo->memory, mo->stats.cycles));
    m["wall_seconds"] = mo->wall_seconds;
    m["max_rel_error"] = nullptr;
    m["verified"] = nullptr;
    if (mo->max_rel_error) {
      const double err = *mo->max_rel_error;
      m["max_rel_error"] = err;
      if (fp64) {
        m["verified"] = err <= kTolerance;
        verified = (verified.is_null() || verified.get<bool>()) && err <= kTolerance;
      }
    }
    L[mo->stats.method] = m;
  }
  L["verified"] = verified;  // null: not checked, or not fp64 (errors are reported)
  return L;
}

namespace {

// The layers to run: the network's (at most --max-layers) or the one --layer, with --batch
// applied, each checked and its memory need checked.
std::vector<ConvLayer> configured_layers(const ConvConfig& cfg, std::string& source,
                                         size_t& listed) {
  std::vector<ConvLayer> layers;
  if (!cfg.network.empty()) {
    layers = read_network_csv(cfg.network);
    source = "network " + cfg.network;
  } else {
    layers = {parse_layer_spec(cfg.layer_spec, "--layer")};
    source = "layer " + cfg.layer_spec;
  }
  listed = layers.size();
  if (cfg.max_layers && static_cast<size_t>(*cfg.max_layers) < layers.size())
    layers.resize(static_cast<size_t>(*cfg.max_layers));
  for (auto& l : layers) {
    if (cfg.batch) l.N = *cfg.batch;
    validate_layer(l, l.name);
    require_memory(l.memory_bytes(cfg.mxu), l.name + " (" + l.shape_string() + ")");
  }
  return layers;
}

// --layer's input (or weights): given in memory, else read from its file; finite
// (core/finite.hpp: the rule for non-finite operands).
Array4 operand(const ConvConfig& cfg, bool input) {
  const std::vector<double>& values = input ? cfg.input_values : cfg.weight_values;
  const std::string option = input ? "--input" : "--weights";
  const std::string& spec = input ? cfg.input : cfg.weights;
  Array4 a = !values.empty()
                 ? Array4{input ? cfg.input_dims : cfg.weight_dims, values}
                 : h5::reading_input(option + " " + spec, [&] { return read_rank4(spec, option); });
  require_finite(a.data, {a.dims.begin(), a.dims.end()},
                 values.empty() ? option + " " + spec : option);
  return a;
}

// Operands of --layer from files, checked against the layer before anything runs.
void file_operands(const ConvConfig& cfg, const ConvLayer& l, std::vector<double>& file_input,
                   std::vector<double>& file_weights) {
  if (!cfg.input.empty()) {
    const Array4 a = operand(cfg, true);
    const std::array<index_t, 4> want{l.N, l.C_I, l.H_I, l.W_I};
    if (a.dims != want)
      throw input_error("--input " + cfg.input + ": shape " + dims_string(a.dims) +
                        ", the layer needs " + dims_string(want) + " (N x C_I x H_I x W_I)");
    file_input = nchw_to_nhwc(a.data, l.N, l.C_I, l.H_I, l.W_I);
  }
  if (!cfg.weights.empty()) {
    Array4 a = operand(cfg, false);
    const std::array<index_t, 4> want{l.C_O, l.C_I_group(), l.H_F, l.W_F};
    if (a.dims != want)
      throw input_error("--weights " + cfg.weights + ": shape " + dims_string(a.dims) +
                        ", the layer needs " + dims_string(want) +
                        " (C_O x C_I/groups x H_F x W_F)");
    file_weights = std::move(a.data);
  }
}

void print_intro(const ConvConfig& cfg, const ConvEnergy& energy, const std::string& source,
                 size_t layers, size_t listed, std::ostream& out) {
  const index_t S = cfg.mxu;
  out << "triada-conv: " << source << " (" << layers << " of " << listed << " layers), MXU " << S
      << "x" << S << " cells, latency " << cfg.latency << ", cells " << to_string(cfg.cell_mode)
      << ", methods "
      << (cfg.run_explicit && cfg.run_implicit ? "explicit + implicit"
          : cfg.run_explicit                   ? "explicit"
                                               : "implicit")
      << "\n  energy: " << energy.mac_pj << " pJ per MAC + " << energy.static_pj_per_cell_step
      << " pJ per cell per step (" << (cfg.mesh.empty() ? "built-in defaults" : cfg.mesh)
      << "); verify: "
      << (cfg.verify ? "every layer" : "layers up to " + count(cfg.verify_budget) + " MACs")
      << "\n\n";
}

// The report without its layers and totals.
nlohmann::json report_head(const ConvConfig& cfg, const ConvEnergy& energy,
                           const std::string& source, size_t listed) {
  const index_t S = cfg.mxu;
  nlohmann::json report;
  report["schema"] = "triada-conv-report/1";
  report["source"] = source;
  report["config"] = {{"network", cfg.network},
                      {"layer", cfg.layer_spec},
                      {"methods", nlohmann::json::array()},
                      {"mxu", S},
                      {"m", S * S},
                      {"batch", cfg.batch ? nlohmann::json(*cfg.batch) : nlohmann::json(nullptr)},
                      {"latency", cfg.latency},
                      {"cell_mode", to_string(cfg.cell_mode)},
                      {"substeps", substeps(cfg.cell_mode)},
                      {"executor", to_string(cfg.executor)},
                      {"seed", cfg.seed},
                      {"input", cfg.input},
                      {"weights", cfg.weights},
                      {"verify", cfg.verify},
                      {"verify_budget_macs", cfg.verify_budget},
                      {"tolerance", kTolerance},
                      {"energy",
                       {{"mac_pj", energy.mac_pj},
                        {"static_pj_per_cell_step", energy.static_pj_per_cell_step},
                        {"mesh", cfg.mesh}}},
                      {"memory", memory_config_json(cfg.memory, S)},
                      {"layers_listed", listed}};
  if (cfg.run_explicit) report["config"]["methods"].push_back("explicit");
  if (cfg.run_implicit) report["config"]["methods"].push_back("implicit");
  for (const auto& d : kDefinitions) report["definitions"][d[0]] = d[1];

  return report;
}

// Sums over the layers run.
struct ConvTotals {
  MethodTotal tex, tim;
  std::uint64_t macs = 0, ifmap = 0, lowered = 0, lowered_max = 0;
  int ok = 0, failed = 0, skipped = 0, errors_only = 0;
  double worst = 0;

  void add(const ConvLayer& l, const nlohmann::json& L) {
    macs += l.macs();
    ifmap += l.ifmap_bytes();
    lowered += l.lowered_bytes();
    lowered_max = std::max(lowered_max, l.lowered_bytes());
    if (L.contains("explicit")) tex.add(L["explicit"]);
    if (L.contains("implicit")) tim.add(L["implicit"]);
    for (const char* method : {"explicit", "implicit"})
      if (L.contains(method) && !L[method]["max_rel_error"].is_null())
        worst = std::max(worst, L[method]["max_rel_error"].get<double>());
    if (L["verified"].is_boolean())
      (L["verified"].get<bool>() ? ok : failed) += 1;
    else if (L["check"].get<std::string>().rfind("skipped", 0) == 0)
      ++skipped;
    else
      ++errors_only;
  }

  nlohmann::json json(size_t layers, double wall, index_t S) const {
    nlohmann::json total = {{"layers", layers},
                            {"macs", macs},
                            {"ifmap_bytes", ifmap},
                            {"lowered_bytes", lowered},
                            {"lowered_bytes_max_layer", lowered_max},
                            {"extra_memory_ratio", ifmap ? double(lowered) / double(ifmap) : 0.0},
                            {"verified_layers", ok},
                            {"failed_layers", failed},
                            {"skipped_layers", skipped},
                            {"error_only_layers", errors_only},
                            {"max_rel_error", worst},
                            {"wall_seconds", wall}};
    if (tex.any) total["explicit"] = tex.json(S);
    if (tim.any) total["implicit"] = tim.json(S);
    // The implicit method's working memory per layer is bounded by three S x S tiles.
    total["implicit_extra_bound_bytes"] = implicit_extra_bound_bytes(S);
    return total;
  }
};

// The totals row of the table and the check line.
void print_totals(const ConvConfig& cfg, const ConvTotals& c, const nlohmann::json& total,
                  size_t layers, double wall, std::ostream& out) {
  const index_t S = cfg.mxu;
  out << std::string(4 + 24 + 32 + 8 + 10 + 12 + 7 + 2 + 9 + 9 + 11 + 7 + 9 + 11 + 10 + 10 + 8 + 8,
                     '-')
      << "\n";
  bool first = true;
  for (const auto& [name, t] :
       {std::pair<const char*, const MethodTotal*>{"explicit", &c.tex}, {"implicit", &c.tim}}) {
    if (!t->any) continue;
    if (first) {
      out << std::left << std::setw(4) << "" << std::setw(24) << "total" << std::setw(32)
          << (std::to_string(layers) + " layers") << std::right << std::setw(8)
          << count(double(c.macs)) << std::setw(10) << mebibytes(double(c.ifmap)) << std::setw(12)
          << mebibytes(double(c.lowered)) << std::setw(7)
          << fixed(total["extra_memory_ratio"].get<double>(), 2) << "  ";
    } else {
      out << std::setw(4 + 24 + 32 + 8 + 10 + 12 + 7 + 2) << "";
    }
    print_method_row(out, t->json(S), name);
    out << "\n";
    first = false;
  }
  out << "\nchecked: " << c.ok << " verified, " << c.failed << " failed, " << c.errors_only
      << " error only (cell mode " << to_string(cfg.cell_mode) << "), " << c.skipped
      << " skipped (direct convolution over the budget)";
  if (c.ok + c.failed + c.errors_only > 0) out << "; max relative error " << sci(c.worst);
  out << "\nwall " << fixed(wall, 2) << " s\n";
}

}  // namespace

ConvJob::ConvJob(ConvConfig cfg) : cfg_(std::move(cfg)) {
  validate(cfg_);
}

ConvRun ConvJob::run(MPI_Comm comm, std::ostream& out) const {
  const JobEntry entry(comm, config_fields(cfg_), "ConvConfig");
  const ConvConfig& cfg = cfg_;
  const bool root = mpi::rank(comm) == 0;
  TextOutput report_out, csv_out;
  std::string source;
  size_t listed = 0;
  std::vector<ConvLayer> layers;
  ConvEnergy energy;
  std::vector<double> file_input, file_weights;
  mpi::collectively(comm, [&] {  // every check before any work, agreed by the ranks
    if (root) {                  // rank 0 alone writes the outputs
      report_out = output_file(cfg, cfg.report);
      csv_out = output_file(cfg, cfg.csv);
    }
    layers = configured_layers(cfg, source, listed);
    energy = conv_energy_model(cfg.mesh, cfg.cell_mode);
    if (!layers.empty()) file_operands(cfg, layers[0], file_input, file_weights);
  });
  print_intro(cfg, energy, source, layers.size(), listed, out);
  print_header(out);
  nlohmann::json report = report_head(cfg, energy, source, listed);
  report["config"]["ranks"] = mpi::size(comm);
  report["provenance"] = to_json(run_provenance(comm, "triada-conv", cfg.command_line));

  const auto t0 = std::chrono::steady_clock::now();
  std::vector<LayerOutcome> outcomes =
      run_conv_distributed(layers, cfg, file_input, file_weights, comm);
  nlohmann::json all = nlohmann::json::array();
  ConvTotals c;
  for (size_t i = 0; i < layers.size(); ++i) {
    nlohmann::json L = conv_layer_json(layers[i], outcomes[i], cfg, energy);
    L["index"] = static_cast<int>(i + 1);
    print_layer(out, L);
    c.add(layers[i], L);
    all.push_back(std::move(L));
  }
  const double wall = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  nlohmann::json total = c.json(layers.size(), wall, cfg.mxu);
  print_totals(cfg, c, total, layers.size(), wall, out);

  cancel::last_stop(comm);  // a run being stopped publishes nothing
  // Both outputs are staged before either is published (io/output_files.hpp).
  if (csv_out.active()) csv_out.stage(conv_csv(all));
  report["layers"] = std::move(all);
  report["total"] = std::move(total);
  if (report_out.active())
    report_out.stage(report.dump(2, ' ', false, nlohmann::json::error_handler_t::replace) + "\n");
  report_out.deliver();  // devices before any file is renamed into place
  csv_out.deliver();
  report_out.publish();
  csv_out.publish();
  // Every rank's report is rank 0's (its wall times), as written (a NaN read back as null).
  const std::string text =
      root ? report.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace) : "";
  report = nlohmann::json::parse(mpi::bcast_string(comm, text, 0));
  return {std::move(report), c.failed > 0 ? 4 : 0, std::move(outcomes)};
}

}  // namespace triada
