#include "counters/progress.hpp"

#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <utility>

#include "core/error.hpp"

namespace triada {

ProgressMode parse_progress_mode(const std::string& word) {
  if (word == "auto") return ProgressMode::automatic;
  if (word == "always") return ProgressMode::always;
  if (word == "never") return ProgressMode::never;
  throw config_error("--progress: expected auto, always or never, got '" + word + "'");
}

std::string to_string(ProgressMode m) {
  return m == ProgressMode::automatic ? "auto" : m == ProgressMode::always ? "always" : "never";
}

double plain_progress_seconds() {
  const char* v = std::getenv("TRIADA_PROGRESS_SECONDS");
  if (!v || !*v) return 10.0;
  char* end = nullptr;
  const double s = std::strtod(v, &end);
  return end && *end == '\0' && s >= 0 ? s : 10.0;
}

Progress::Progress(std::string program, ProgressMode mode, bool enabled)
    : program_(std::move(program)),
      interval_(plain_progress_seconds()),
      start_(std::chrono::steady_clock::now()),
      last_(start_) {
  if (!enabled || mode == ProgressMode::never) return;
  const bool terminal = ::isatty(STDERR_FILENO) == 1;
  form_ = mode == ProgressMode::automatic && terminal ? Form::live : Form::plain;
  grace_ = mode == ProgressMode::always ? 0.0 : std::min(2.0, interval_);
}

bool Progress::due(double fraction) {
  if (form_ == Form::none) return false;
  const auto now = std::chrono::steady_clock::now();
  if (std::chrono::duration<double>(now - start_).count() < grace_) return false;
  const double since = std::chrono::duration<double>(now - last_).count();
  const bool first = last_frac_ < 0;
  const bool go =
      first ||
      (form_ == Form::live ? since >= 0.5 : since >= interval_ || fraction >= last_frac_ + 0.1);
  if (!go) return false;
  last_ = now;
  last_frac_ = fraction;
  return true;
}

void Progress::print(double fraction, const std::string& where) {
  const double elapsed =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start_).count();
  char eta[32] = "?";  // none before any work is done
  if (fraction > 0) std::snprintf(eta, sizeof eta, "%.0f", elapsed * (1.0 - fraction) / fraction);
  if (form_ == Form::live)
    std::fprintf(stderr, "\r  %s, %.0f%% done, %.1f s, ETA %s s   ", where.c_str(),
                 100.0 * fraction, elapsed, eta);
  else
    std::fprintf(stderr, "%s: progress %s, %.0f%% done, elapsed %.1f s, ETA %s s\n",
                 program_.c_str(), where.c_str(), 100.0 * fraction, elapsed, eta);
  std::fflush(stderr);
  printed_ = true;
}

void Progress::finish() {
  if (printed_ && form_ == Form::live) std::fprintf(stderr, "\n");
  printed_ = false;
}

double stage_fraction(int stage, int stages, std::uint64_t done, std::uint64_t total) {
  const double part = total ? static_cast<double>(done) / static_cast<double>(total) : 1.0;
  return stages > 0 ? (stage + part) / stages : 1.0;
}

}  // namespace triada
