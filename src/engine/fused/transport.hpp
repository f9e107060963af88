#pragma once
// Where a fused stage's pivot planes come from, one implementation per transport, chosen
// once per stage by make_plane_source():
//  - LocalPlanes:      one brick per line, every plane is the brick's own;
//  - BroadcastBatches: planes broadcast on the line communicator (Y bus) in batches that
//                      overlap the computation (dense, or compressed under ESOP);
//  - SharedInPlace:    on one node, each member copies V into its segment of the line's
//                      shared window and reads the others' planes in place;
//  - SharedPacking:    on one node, binary64 kernels with the data on the right: each
//                      member packs only its own planes into its window scratch and reads
//                      the others' packed rows (nobody copies V or reads all of it).
// The shared ones count the bus messages their reads stand for, as the broadcasts send
// them. Every source ends with an explicit finish() (collective where a window is).
#include <cstdint>
#include <memory>
#include <vector>

#include "engine/fused/stage_view.hpp"
#include "kernels/right_batch.hpp"

namespace triada::detail::fused {

template <class T>
class PlaneSource {
 public:
  PlaneSource(StageView<T>& s, std::vector<T>& v);
  virtual ~PlaneSource() = default;
  PlaneSource(const PlaneSource&) = delete;
  PlaneSource& operator=(const PlaneSource&) = delete;

  index_t batch_steps() const { return B_; }
  // Where the brick's own V is read (the window's segment when V moved there).
  const T* v_base() const { return vbase_; }
  // The kernels count the pivots while packing them (no separate pass over V).
  virtual bool counts_in_kernels() const { return false; }
  // Starts moving the batch of steps from b0.
  virtual void post(index_t b0) { (void)b0; }
  // Waits for the batch [b0, b0 + nb): each step's plane and, where known before the
  // kernels, its non-zeros; clears `finite` at an Inf or NaN seen.
  virtual void take(index_t b0, index_t nb, std::vector<PlaneRef<T>>& planes,
                    std::vector<std::uint64_t>& nnz, bool& finite) = 0;
  // Where a right batch's kernels pack their panels (nullptr: privately).
  virtual std::unique_ptr<kernels::PanelStore> panels(index_t b0, index_t nb, index_t N) {
    (void)b0, (void)nb, (void)N;
    return nullptr;
  }
  // After the kernels: counts[i] (ESOP) of the pivots they packed, `bad` if one was Inf or
  // NaN. Sets nnz, and planes if the batch must be redone exactly; returns that.
  virtual bool after_kernels(index_t b0, index_t nb, const std::vector<std::uint64_t>& counts,
                             std::uint64_t bad, std::vector<PlaneRef<T>>& planes,
                             std::vector<std::uint64_t>& nnz);
  // Whether a batch computes nothing, the run being stopped (`stop`: this rank's poll,
  // mesh/cancel.hpp). Members that publish packed panels together agree on it.
  virtual bool skip(bool stop) { return stop; }
  // End of stage (a fence where the line shares a window).
  virtual void finish() {}

 protected:
  // Non-zeros (and finiteness) of the brick's own planes, in one pass over V in memory
  // order (ESOP).
  void count_local();
  // Non-zeros of every plane of the axis, known to every member of the line (ESOP).
  void exchange_nnz();
  // A plane that travels as (line, value) entries (ESOP, sparse enough).
  bool compressed(index_t t) const;
  // The broadcasts of the batch from b0 that this member's planes stand for.
  void account_shared(index_t b0);

  StageView<T>& s_;
  std::vector<T>& v_;
  index_t B_ = 1;
  const T* vbase_;
  std::vector<std::int64_t> nnz_local_, nnz_all_;
  bool finite_local_ = true;
  MpiTraffic& y_traffic_;
};

// Chooses the transport (collective over the line where a shared window may be used).
template <class T>
std::unique_ptr<PlaneSource<T>> make_plane_source(StageView<T>& s, std::vector<T>& v);

}  // namespace triada::detail::fused
