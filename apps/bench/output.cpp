// What triada-bench prints and writes: the rows, the table, the JSON file and the facts of
// the machine.
#include <unistd.h>

#include <cmath>
#include <cstdio>
#include <ctime>
#include <filesystem>
#include <fstream>

#include "apps/bench/bench.hpp"
#include "core/error.hpp"
#include "io/output_files.hpp"

namespace triada::bench {

std::string today() {
  const std::time_t t = std::time(nullptr);
  std::tm tm{};
  localtime_r(&t, &tm);
  char buf[32];
  std::strftime(buf, sizeof buf, "%Y-%m-%d", &tm);
  return buf;
}

std::string fftw_variant_for(TransformKind k) {
  return k == TransformKind::dht ? "fftw-dht" : k == TransformKind::dft ? "fftw-dft" : "fftw-dct";
}

void fill_ratios(std::vector<Row>& rows, TransformKind kind) {
  const std::string fftw = fftw_variant_for(kind);
  for (Row& r : rows) {
    for (const Row& b : rows) {
      if (b.shape != r.shape || b.seconds <= 0) continue;
      if (b.variant == "openblas") r.ratio_openblas = b.seconds / r.seconds;
      if (b.variant == fftw) r.ratio_fftw = b.seconds / r.seconds;
    }
  }
}

json nullable(double v) {
  return std::isfinite(v) ? json(v) : json(nullptr);
}

json row_json(const Row& r) {
  json j;
  j["shape"] = {r.shape[0], r.shape[1], r.shape[2]};
  j["sparsity"] = r.sparsity;
  j["variant"] = r.variant;
  j["threads"] = 1;
  j["ranks"] = r.ranks;
  j["brick_ranks"] = r.brick_ranks;
  j["brick_grid"] = {r.grid[0], r.grid[1], r.grid[2]};
  j["seconds"] = r.seconds;
  j["gmacs_per_s"] = r.gmacs_per_s();
  j["macs"] = r.macs;
  j["macs_dense"] = r.macs_dense;
  j["macs_fraction"] =
      r.macs_dense ? static_cast<double>(r.macs) / static_cast<double>(r.macs_dense) : 0.0;
  j["steps"] = r.steps ? json(*r.steps) : json(nullptr);
  j["input_nonzeros"] = r.input_nonzeros ? json(*r.input_nonzeros) : json(nullptr);
  if (!r.stage_seconds.empty()) {
    j["stage_seconds"] = r.stage_seconds;
    j["stage_axes"] = r.stage_axes;
  }
  j["ratio_openblas"] = nullable(r.ratio_openblas);
  j["ratio_fftw"] = nullable(r.ratio_fftw);
  return j;
}

std::string fmt(const char* f, double v) {
  if (!std::isfinite(v)) return "-";
  char buf[64];
  std::snprintf(buf, sizeof buf, f, v);
  return buf;
}

void print_table(std::ostream& os, const std::vector<Row>& rows, TransformKind kind) {
  char line[256];
  std::snprintf(line, sizeof line, "%-12s %-8s %-9s %5s %10s %9s %7s %9s %9s  %s\n", "shape",
                "sparsity", "variant", "ranks", "seconds", "GMAC/s", "MACs%", "xOpenBLAS",
                ("x" + fftw_variant_for(kind)).c_str(), "stage seconds (order 3,1,2)");
  os << line;
  for (const Row& r : rows) {
    std::string stages;
    for (double s : r.stage_seconds) stages += (stages.empty() ? "" : " ") + fmt("%.4g", s);
    const double pct = r.macs_dense
                           ? 100.0 * static_cast<double>(r.macs) / static_cast<double>(r.macs_dense)
                           : 0.0;
    std::snprintf(line, sizeof line, "%-12s %-8s %-9s %5d %10.6f %9.3f %7.1f %9s %9s  %s\n",
                  shape_str(r.shape).c_str(), r.sparsity.c_str(), r.variant.c_str(), r.ranks,
                  r.seconds, r.gmacs_per_s(), pct, fmt("%.3f", r.ratio_openblas).c_str(),
                  fmt("%.3f", r.ratio_fftw).c_str(), stages.c_str());
    os << line;
  }
}

std::string cpu_model() {
  std::ifstream f("/proc/cpuinfo");
  std::string line;
  while (std::getline(f, line)) {
    if (line.starts_with("model name")) {
      const size_t colon = line.find(':');
      if (colon != std::string::npos) {
        const size_t start = line.find_first_not_of(" \t", colon + 1);
        return start == std::string::npos ? "" : line.substr(start);
      }
    }
  }
  return "unknown";
}

std::string env_or(const char* name, const char* fallback) {
  const char* v = std::getenv(name);
  return v ? v : fallback;
}

std::string load_average() {
  std::ifstream f("/proc/loadavg");
  std::string a, b, c;
  f >> a >> b >> c;
  return f ? a + " " + b + " " + c : "unknown";
}

void prepare_json_path(const std::string& path, bool force) {
  const std::filesystem::path p(path);
  if (path != "-" && p.has_parent_path()) {
    std::error_code ec;
    std::filesystem::create_directories(p.parent_path(), ec);
    if (ec)
      throw input_error(path + ": cannot create " + p.parent_path().string() + " (" + ec.message() +
                        ")");
  }
  probe_output(path, force, true);
}

void write_json(const BenchConfig& cfg, json j) {
  j["provenance"] = to_json(cfg.provenance);
  // A command line's words need not be UTF-8: such bytes are shown as U+FFFD.
  write_text_output(cfg.json, j.dump(1, ' ', false, json::error_handler_t::replace) + "\n",
                    cfg.force);
  if (cfg.json != "-") std::cout << "\nwrote " << cfg.json << "\n";
}

bool prints_progress(const BenchConfig& cfg, int rank) {
  return rank == 0 && cfg.progress != ProgressMode::never;
}

}  // namespace triada::bench
