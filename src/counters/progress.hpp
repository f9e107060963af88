#pragma once
// A progress line on rank 0's stderr for long runs: stage, step, rate, ETA. Silent when
// stderr is not a terminal, with --quiet, and for runs shorter than two seconds.
#include <chrono>
#include <cstdint>
#include <string>

namespace triada {

class Progress {
 public:
  // total_work: dense MACs of the run (the rate and ETA are in dense-equivalent steps).
  Progress(bool enabled, int stages);
  // Stage `stage` has done `done` of its `total` steps.
  void update(int stage, int axis, std::uint64_t done, std::uint64_t total);
  void finish();

 private:
  bool enabled_;
  int stages_;
  bool printed_ = false;
  std::chrono::steady_clock::time_point start_, last_;
};

}  // namespace triada
