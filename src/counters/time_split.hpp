#pragma once
// Where a brick rank's time in a stage goes (doc/design.md §8.11), the split that scaling
// studies read (heFFTe and 2DECOMP&FFT publish the same one):
//  - pack:    preparing pivot planes or coefficient messages for other ranks (filling a
//             broadcast buffer, copying V into a shared window, packing panel rows of
//             pivot planes, building the actuator's messages);
//  - wait:    blocked in communication or window synchronisation (receives, waits on
//             broadcasts, fences, the line's agreements);
//  - compute: the rest of the rank's own stage interval (the kernels, counting,
//             bookkeeping);
//  - idle:    the stage's time (the longest interval of any rank) less this rank's own:
//             what it spends waiting for the slowest rank before the stage is over.
// Per rank compute + pack + wait + idle = the stage's time, exactly as a sum of the
// measured intervals. Wall time, not exact: never compared across runs by tests.
#include <array>
#include <chrono>
#include <cstdint>
#include <vector>

#include "core/types.hpp"

namespace triada {

enum class TimePart : int { compute = 0, pack, wait, idle };
inline constexpr int kTimeParts = 4;
const char* to_string(TimePart p);

// Seconds per part.
struct TimeSplit {
  std::array<double, kTimeParts> s{};
  double& operator[](TimePart p) { return s[static_cast<int>(p)]; }
  double operator[](TimePart p) const { return s[static_cast<int>(p)]; }
  double sum() const { return s[0] + s[1] + s[2] + s[3]; }
};

// One stage over the brick ranks: each part's minimum, mean and maximum.
struct StageTimeStats {
  int axis = 0;
  double seconds = 0;  // the stage's time (RunCounters::stage_seconds)
  int ranks = 0;       // brick ranks the statistics are over
  std::array<std::array<double, 3>, kTimeParts> part{};  // [part][min, mean, max]
  double min(TimePart p) const { return part[static_cast<int>(p)][0]; }
  double mean(TimePart p) const { return part[static_cast<int>(p)][1]; }
  double max(TimePart p) const { return part[static_cast<int>(p)][2]; }
};

// One piece of a rank's stage (--trace): its setup (from the stage's start to its first
// batch: the actuator's stream, counting, the transport's set-up), a batch of steps, its
// finish (after the last batch), or its idle time. A rank's pieces of a stage sum to the
// stage's time.
enum class TracePiece : int { setup = 0, batch, finish, idle };
const char* to_string(TracePiece p);
struct BatchTime {
  int stage = 0;
  int rank = 0;  // world rank
  TracePiece piece = TracePiece::batch;
  index_t batch = -1;  // batch number within the stage (pieces other than batch: -1)
  index_t first_step = 0, steps = 0;
  TimeSplit split;
};

// A brick rank's clock during one stage. pack() and wait() return scopes that charge their
// lifetime to that part; a scope opened inside another charges nothing (so nested calls
// never count twice). Compute is what the stage interval leaves.
class StageClock {
 public:
  using clock = std::chrono::steady_clock;
  class Scope {
   public:
    Scope(StageClock* c, TimePart p);
    ~Scope();
    Scope(const Scope&) = delete;
    Scope& operator=(const Scope&) = delete;

   private:
    StageClock* c_;
    TimePart p_;
    clock::time_point t0_;
  };
  // record_batches: keep a BatchTime per piece (for --trace).
  void start_stage(int stage, int rank, bool record_batches);
  [[nodiscard]] Scope pack() { return Scope(this, TimePart::pack); }
  [[nodiscard]] Scope wait() { return Scope(this, TimePart::wait); }
  // Charges the time since t0 to `p` (pack or wait) unless a scope is charging.
  void charge(TimePart p, clock::time_point t0);
  void start_batch(index_t batch, index_t first_step, index_t steps);
  void end_batch();
  // Ends the stage: this rank's split (idle 0; the engine adds it once every rank's
  // interval is known) and, with record_batches, its pieces up to here.
  TimeSplit end_stage();
  std::vector<BatchTime>& pieces() { return pieces_; }

 private:
  double now() const { return std::chrono::duration<double>(clock::now() - t_start_).count(); }
  void close_piece(TracePiece piece, index_t batch, index_t first_step, index_t steps);
  clock::time_point t_start_{};
  int stage_ = 0, rank_ = 0;
  bool open_ = false;  // a scope is charging
  bool record_ = false;
  double pack_ = 0, wait_ = 0;
  // The open piece: where it started (time, pack, wait).
  double piece_t_ = 0, piece_pack_ = 0, piece_wait_ = 0;
  index_t batch_ = -1, first_step_ = 0, steps_ = 0;
  bool had_batch_ = false;
  std::vector<BatchTime> pieces_;
};

// Statistics of one stage from per-rank sums: `sums` holds, over the brick ranks, the
// minimum, sum and maximum of [compute, pack, wait, interval]; idle = seconds - interval.
StageTimeStats stage_time_stats(int axis, double seconds, int ranks,
                                const std::array<double, 4>& mins,
                                const std::array<double, 4>& sums,
                                const std::array<double, 4>& maxs);

}  // namespace triada
