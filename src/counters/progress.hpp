#pragma once
// Progress of a long run on rank 0's stderr (doc/design.md §5.7). --progress picks the form:
//   auto (default): on a terminal the live line, rewritten in place at most twice a second;
//     elsewhere (a batch log) plain lines, one when 10 seconds have passed or the run has
//     advanced by 10% since the last one, whichever comes first. Both start once the run
//     has taken 2 seconds, so short runs print nothing.
//   always: the plain lines, on a terminal too, from the run's first step.
//   never: nothing (as --quiet).
// A plain line: "<program>: progress <where>, <p>% done, elapsed <s> s, ETA <s> s".
// TRIADA_PROGRESS_SECONDS (environment, for tests) replaces the 10 seconds; the 2 seconds'
// wait is never longer than it.
#include <chrono>
#include <cstdint>
#include <string>

namespace triada {

enum class ProgressMode { automatic, always, never };
// "auto" | "always" | "never"; throws config_error naming --progress.
ProgressMode parse_progress_mode(const std::string& word);
std::string to_string(ProgressMode m);

// The plain lines' interval in seconds: TRIADA_PROGRESS_SECONDS if set to a number >= 0,
// else 10.
double plain_progress_seconds();

class Progress {
 public:
  // `enabled`: this rank reports (rank 0 without --quiet).
  Progress(std::string program, ProgressMode mode, bool enabled);
  // The run has done `fraction` (0..1) of its work; `where()` (a std::string, called only
  // when a line is due) says where, e.g. "stage 2/3 (axis 1): step 40/64".
  template <class Where>
  void update(double fraction, Where&& where) {
    if (due(fraction)) print(fraction, where());
  }
  // Ends the live line (a newline after it); plain lines need no end.
  void finish();

 private:
  enum class Form { none, live, plain };
  bool due(double fraction);
  void print(double fraction, const std::string& where);

  std::string program_;
  Form form_ = Form::none;
  double grace_ = 0;       // seconds before the first line
  double interval_ = 0;    // plain: seconds between lines at most
  double last_frac_ = -1;  // plain: the fraction at the last line (-1: none yet)
  bool printed_ = false;
  std::chrono::steady_clock::time_point start_, last_;
};

// The progress of run stage `stage` of `stages`, `done` of its `total` steps, as a fraction
// of the whole run (every stage weighing the same).
double stage_fraction(int stage, int stages, std::uint64_t done, std::uint64_t total);

}  // namespace triada
