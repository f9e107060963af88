#pragma once
// The stages along axes 1 and 2 (data on the right) as a batch of the kernels:
//  axis 1: rows = k, columns = lines: W (k x lines) = coefficients (k x steps) times
//          pivot planes (steps x lines);
//  axis 2: the same per slab i1, columns = i3.
// Pivot planes are packed in column panels chunk by chunk (each plane row read once,
// sequentially) into a PanelStore: a private buffer, or a line's shared scratch where
// each member packs only its own planes and reads the others' packed rows.
// The kernels' interface, the same for every path (kernels/isa.hpp): right_batch() runs
// the path in use, and a panel row has that path's kNR columns (kernels/panels.hpp: nr()).
#include <cstdint>
#include <vector>

#include "kernels/plane.hpp"

namespace triada::kernels {

// Chunks are numbered from 0 in the batch; each goes through begin_chunk, publish, acquire,
// locate and end_chunk in that order. A store that packs ahead lets chunk q + 1 be packed
// and published before chunk q is acquired (the others' rows of q arrive meanwhile).
class PanelStore {
 public:
  virtual ~PanelStore() = default;
  virtual bool packs_ahead() const { return false; }
  // Where this member packs its rows of chunk q (nbk panels of nb rows of kNR, then
  // nbk * nb flags; a ring of buffers where others read them: may wait until nobody reads
  // the buffer any more).
  virtual void begin_chunk(index_t q, index_t nbk, double*& panels, char*& flags) = 0;
  // This member's rows of chunk q are packed.
  virtual void publish(index_t q) { (void)q; }
  // Every member's rows of chunk q are packed (waits for them).
  virtual void acquire(index_t q) { (void)q; }
  // Where chunk q's packed rows lie, once per chunk (no call per row): row s of panel j at
  // rows[s] + j * nb * kNR, non-zero if flags[s][j * nb] != 0.
  virtual void locate(index_t q, const double** rows, const char** flags) const = 0;
  // This member has read chunk q (its buffers may be packed again).
  virtual void end_chunk(index_t q) { (void)q; }
};

// Everything packed by this rank into private buffers.
class PrivatePanels final : public PanelStore {
 public:
  PrivatePanels(index_t nb, bool esop);
  void begin_chunk(index_t, index_t nbk, double*& panels, char*& flags) override;
  void locate(index_t, const double** rows, const char** flags) const override {
    for (index_t s = 0; s < nb_; ++s) {
      rows[s] = pack_.data() + s * nr_;
      flags[s] = flag_.data() + s;
    }
  }

 private:
  index_t nb_, nr_;  // nr_: the path's panel width (kNR)
  bool esop_;
  std::vector<double> pack_;
  std::vector<char> flag_;
};

// Lines the previous stage (along axis 3) left at +0 (ESOP): their panel rows are never
// read. zero[i1 * ev2 + i2] over the brick's lines (axes 1, 2); plane[s]: the brick-local
// index of step s's plane if this brick holds it, else -1.
struct KnownZero {
  const std::uint8_t* zero = nullptr;  // nullptr: nothing known
  index_t ev2 = 0;
  index_t ev1 = 0;
  std::vector<index_t> plane;
};

struct RightBatchArgs {
  int axis = 1;                 // 1 or 2
  index_t nb = 0;               // steps of the batch
  index_t N = 0;                // columns: lines (axis 1) or i3 (axis 2)
  index_t slabs = 1;            // axis 2: i1 slabs
  index_t wext = 0;             // rows: the brick's W planes
  const double* cbb = nullptr;  // nb x wext coefficients, streaming order
  double* w = nullptr;          // row k of slab at w + k * w_row + slab * w_slab
  index_t w_row = 0, w_slab = 0;
  const std::vector<PlaneRef<double>>* planes = nullptr;  // this member's planes
  const std::vector<char>* mine = nullptr;                // planes this member packs
  bool esop = true, fresh = false;
  // Polled between chunks. Only where no other member waits for this one's chunks (private
  // panels): a shared store's members must publish every chunk together.
  StopPoll stop = nullptr;
};

// Scratch reused from batch to batch.
struct RightScratch {
  std::vector<double> apack;
  std::vector<index_t> row0, i2_lo, i2_hi;
  std::vector<const double*> brow, bptr, rows;
  std::vector<const char*> flags;
  std::vector<char> known_zero;
  std::vector<std::int32_t> panel_list;
  std::vector<index_t> panel_nl;
};

// counts[s] (ESOP; sized nb, zeroed): non-zeros of this member's packed rows of step s;
// bad: an Inf or NaN among them.
void right_batch(const RightBatchArgs& a, const KnownZero& known, PanelStore& store,
                 RightScratch& x, std::vector<std::uint64_t>& counts, std::uint64_t& bad);

}  // namespace triada::kernels
