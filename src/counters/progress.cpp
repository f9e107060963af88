#include "counters/progress.hpp"

#include <unistd.h>

#include <cstdio>

namespace triada {

Progress::Progress(bool enabled, int stages)
    : enabled_(enabled && ::isatty(STDERR_FILENO) == 1),
      stages_(stages),
      start_(std::chrono::steady_clock::now()),
      last_(start_) {}

void Progress::update(int stage, int axis, std::uint64_t done, std::uint64_t total) {
  if (!enabled_) return;
  const auto now = std::chrono::steady_clock::now();
  const double elapsed = std::chrono::duration<double>(now - start_).count();
  if (elapsed < 2.0 || std::chrono::duration<double>(now - last_).count() < 0.5) return;
  last_ = now;
  // Fraction of the run: whole stages done plus this stage's part.
  const double frac = (stage + (total ? double(done) / double(total) : 1.0)) / stages_;
  const double eta = frac > 0 ? elapsed * (1.0 - frac) / frac : 0.0;
  std::fprintf(stderr,
               "\r  stage %d/%d (axis %d): step %llu/%llu, %.0f%% done, %.1f s, ETA %.0f s   ",
               stage + 1, stages_, axis, static_cast<unsigned long long>(done),
               static_cast<unsigned long long>(total), 100.0 * frac, elapsed, eta);
  std::fflush(stderr);
  printed_ = true;
}

void Progress::finish() {
  if (printed_) std::fprintf(stderr, "\n");
  printed_ = false;
}

}  // namespace triada
