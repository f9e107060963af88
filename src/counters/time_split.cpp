#include "counters/time_split.hpp"

#include <algorithm>

namespace triada {

const char* to_string(TimePart p) {
  switch (p) {
    case TimePart::compute:
      return "compute";
    case TimePart::pack:
      return "pack";
    case TimePart::wait:
      return "wait";
    case TimePart::idle:
      return "idle";
  }
  return "?";
}

const char* to_string(TracePiece p) {
  switch (p) {
    case TracePiece::setup:
      return "setup";
    case TracePiece::batch:
      return "batch";
    case TracePiece::finish:
      return "finish";
    case TracePiece::idle:
      return "idle";
  }
  return "?";
}

StageClock::Scope::Scope(StageClock* c, TimePart p) : c_(c), p_(p), t0_(clock::now()) {
  if (!c_) return;
  if (c_->open_) {  // nested: the outer scope charges the time
    c_ = nullptr;
    return;
  }
  c_->open_ = true;
}

StageClock::Scope::~Scope() {
  if (!c_) return;
  const double dt = std::chrono::duration<double>(clock::now() - t0_).count();
  (p_ == TimePart::pack ? c_->pack_ : c_->wait_) += dt;
  c_->open_ = false;
}

void StageClock::charge(TimePart p, clock::time_point t0) {
  if (open_) return;
  const double dt = std::chrono::duration<double>(clock::now() - t0).count();
  (p == TimePart::pack ? pack_ : wait_) += dt;
}

void StageClock::start_stage(int stage, int rank, bool record_batches) {
  t_start_ = clock::now();
  stage_ = stage;
  rank_ = rank;
  open_ = false;
  record_ = record_batches;
  pack_ = wait_ = 0;
  piece_t_ = piece_pack_ = piece_wait_ = 0;
  had_batch_ = false;
  pieces_.clear();
}

void StageClock::close_piece(TracePiece piece, index_t batch, index_t first_step, index_t steps) {
  const double t = now();
  if (record_) {
    BatchTime b;
    b.stage = stage_;
    b.rank = rank_;
    b.piece = piece;
    b.batch = batch;
    b.first_step = first_step;
    b.steps = steps;
    b.split[TimePart::pack] = pack_ - piece_pack_;
    b.split[TimePart::wait] = wait_ - piece_wait_;
    b.split[TimePart::compute] = (t - piece_t_) - b.split[TimePart::pack] - b.split[TimePart::wait];
    pieces_.push_back(b);
  }
  piece_t_ = t;
  piece_pack_ = pack_;
  piece_wait_ = wait_;
}

void StageClock::start_batch(index_t batch, index_t first_step, index_t steps) {
  if (!had_batch_) close_piece(TracePiece::setup, -1, 0, 0);
  had_batch_ = true;
  batch_ = batch;
  first_step_ = first_step;
  steps_ = steps;
}

void StageClock::end_batch() {
  close_piece(TracePiece::batch, batch_, first_step_, steps_);
}

TimeSplit StageClock::end_stage() {
  close_piece(had_batch_ ? TracePiece::finish : TracePiece::setup, -1, 0, 0);
  TimeSplit s;
  s[TimePart::pack] = pack_;
  s[TimePart::wait] = wait_;
  s[TimePart::compute] = piece_t_ - pack_ - wait_;
  return s;
}

StageTimeStats stage_time_stats(int axis, double seconds, int ranks,
                                const std::array<double, 4>& mins,
                                const std::array<double, 4>& sums,
                                const std::array<double, 4>& maxs) {
  StageTimeStats st;
  st.axis = axis;
  st.seconds = seconds;
  st.ranks = ranks;
  if (ranks <= 0) return st;
  const double n = ranks;
  for (int p = 0; p < 3; ++p) st.part[p] = {mins[p], sums[p] / n, maxs[p]};
  // The shortest interval idles longest (a rounding below zero is no time).
  const auto idle = [&](double interval) { return std::max(0.0, seconds - interval); };
  st.part[static_cast<int>(TimePart::idle)] = {idle(maxs[3]), idle(sums[3] / n), idle(mins[3])};
  return st;
}

}  // namespace triada
