#include "engine/fused/transport.hpp"

#include <sched.h>

#include <algorithm>
#include <cstring>
#include <span>

#include "core/error.hpp"
#include "kernels/panels.hpp"
#include "mesh/cancel.hpp"
#include "mesh/mpi.hpp"
#include "mesh/shared_window.hpp"

namespace triada::detail::fused {

namespace {

template <class T>
struct PlaneEntry {  // one non-zero of a pivot plane sent under ESOP
  std::int64_t line;
  T v;
};

}  // namespace

template <class T>
PlaneSource<T>::PlaneSource(StageView<T>& s, std::vector<T>& v)
    : s_(s),
      v_(v),
      vbase_(v.data()),
      nnz_local_(static_cast<size_t>(s.vext), 0),
      nnz_all_(static_cast<size_t>(s.sp.n()), s.L),
      y_traffic_(*s.y_traffic) {}

template <class T>
bool PlaneSource<T>::after_kernels(index_t, index_t, const std::vector<std::uint64_t>& counts,
                                   std::uint64_t bad, std::vector<PlaneRef<T>>&,
                                   std::vector<std::uint64_t>& nnz) {
  if (counts_in_kernels()) nnz.assign(counts.begin(), counts.end());
  return s_.esop && bad != 0;
}

template <class T>
void PlaneSource<T>::count_local() {
  if (!s_.esop || v_.empty()) return;
  // One integer pass (it vectorizes): non-zero = any bit but the sign (NaN counts, as it
  // does for the cell rule's v != 0); Inf or NaN = an all-ones exponent.
  constexpr std::uint64_t kExp = 0x7FF0000000000000ull;
  std::uint64_t bad = 0;
  const index_t vext = s_.vext;
  const ext3& ev = s_.ev;
  auto count = [&](const T* p, index_t n) {
    std::int64_t nz = 0;
    if constexpr (is_complex_v<T>) {
      for (index_t i = 0; i < n; ++i) nz += is_zero(p[i]) ? 0 : 1;
    } else {
      const auto* bits = reinterpret_cast<const std::uint64_t*>(p);
      for (index_t i = 0; i < n; ++i) {
        nz += (bits[i] << 1) != 0 ? 1 : 0;
        bad |= (bits[i] & kExp) == kExp ? 1 : 0;
      }
    }
    return nz;
  };
  if (s_.a == 2) {  // axis 3: each line is a row of the brick, one element per plane
    for (index_t l = 0; l < ev[0] * ev[1]; ++l) {
      const T* row = v_.data() + l * vext;
      if constexpr (is_complex_v<T>) {
        for (index_t p = 0; p < vext; ++p) nnz_local_[p] += is_zero(row[p]) ? 0 : 1;
      } else {
        const auto* bits = reinterpret_cast<const std::uint64_t*>(row);
        for (index_t p = 0; p < vext; ++p) {
          nnz_local_[p] += (bits[p] << 1) != 0 ? 1 : 0;
          bad |= (bits[p] & kExp) == kExp ? 1 : 0;
        }
      }
    }
  } else {  // axes 1, 2: a plane is one block (axis 1) or ev[0] blocks of ev[2] (axis 2)
    const index_t blocks = s_.a == 0 ? 1 : ev[0], len = s_.a == 0 ? ev[1] * ev[2] : ev[2];
    for (index_t b = 0; b < blocks; ++b)
      for (index_t p = 0; p < vext; ++p)
        nnz_local_[p] += count(v_.data() + (b * vext + p) * len, len);
  }
  if constexpr (is_complex_v<T>) {
    const auto* bits = reinterpret_cast<const std::uint64_t*>(v_.data());
    for (size_t i = 0; i < 2 * v_.size(); ++i) bad |= (bits[i] & kExp) == kExp ? 1 : 0;
  }
  finite_local_ = bad == 0;
}

template <class T>
void PlaneSource<T>::exchange_nnz() {
  const int n = s_.line_size;
  const auto waiting = s_.clock->wait();
  std::vector<int> counts(static_cast<size_t>(n));
  for (int r = 0; r < n; ++r)
    counts[r] = static_cast<int>(s_.bs.member_in_planes[static_cast<size_t>(r)]);
  mpi::allgatherv<std::int64_t>(
      s_.line, std::span<const std::int64_t>(nnz_local_.data(), static_cast<size_t>(s_.vext)),
      std::span<std::int64_t>(nnz_all_), counts);
  y_traffic_.add(static_cast<std::uint64_t>(n - 1),
                 static_cast<std::uint64_t>(n - 1) * sizeof(std::int64_t) * s_.vext);
}

template <class T>
bool PlaneSource<T>::compressed(index_t t) const {
  return s_.esop && static_cast<size_t>(nnz_all_[t]) * sizeof(PlaneEntry<T>) <
                        static_cast<size_t>(s_.L) * sizeof(T);
}

template <class T>
void PlaneSource<T>::account_shared(index_t b0) {
  for (index_t i = b0; i < std::min(s_.S(), b0 + B_); ++i) {
    const index_t t = s_.steps[i].t;
    if (s_.owner(t) != s_.line_rank || (s_.esop && nnz_all_[t] == 0)) continue;
    const std::uint64_t bytes =
        compressed(t) ? static_cast<std::uint64_t>(nnz_all_[t]) * sizeof(PlaneEntry<T>)
                      : static_cast<std::uint64_t>(s_.L) * sizeof(T);
    y_traffic_.add(static_cast<std::uint64_t>(s_.line_size - 1),
                   static_cast<std::uint64_t>(s_.line_size - 1) * bytes);
  }
}

namespace {

// One brick on the line: every plane is the brick's own, in one batch.
template <class T>
class LocalPlanes final : public PlaneSource<T> {
 public:
  LocalPlanes(StageView<T>& s, std::vector<T>& v) : PlaneSource<T>(s, v) {
    this->B_ = s.bs.batch_planes(s.S(), true);
    if (!counts_in_kernels()) this->count_local();
  }
  bool counts_in_kernels() const override { return this->s_.kernel_path; }
  void take(index_t b0, index_t nb, std::vector<PlaneRef<T>>& planes,
            std::vector<std::uint64_t>& nnz, bool& finite) override {
    for (index_t i = 0; i < nb; ++i) {
      const index_t t = this->s_.steps[b0 + i].t;
      planes[i] = this->s_.local_plane(this->vbase_, t);
      nnz[i] = static_cast<std::uint64_t>(this->nnz_local_[t - this->s_.vlo]);
      finite = finite && this->finite_local_;
    }
  }
};

// Broadcasts on the line, in batches of a bounded size, double buffered.
template <class T>
class BroadcastBatches final : public PlaneSource<T> {
 public:
  BroadcastBatches(StageView<T>& s, std::vector<T>& v);
  void post(index_t b0) override;
  void take(index_t b0, index_t nb, std::vector<PlaneRef<T>>& planes,
            std::vector<std::uint64_t>& nnz, bool& finite) override;

 private:
  struct Slot {
    std::vector<T> dense;                            // B x L received planes
    std::vector<std::vector<PlaneEntry<T>>> sparse;  // per step of the batch
    mpi::Requests reqs;
  };
  Slot& slot(index_t b0) { return slots_[(b0 / this->B_) % 2]; }
  void fill(index_t t, bool dense, void* buf);
  Slot slots_[2];
};

// Received planes per batch (BrickStage::batch_planes): fewer batches mean fewer passes
// over W; half a brick per batch buffer keeps a rank within 3x its brick (V, W and two
// buffers) plus 2 MiB each.
template <class T>
BroadcastBatches<T>::BroadcastBatches(StageView<T>& s, std::vector<T>& v) : PlaneSource<T>(s, v) {
  this->B_ = s.bs.batch_planes(s.S(), false);
  this->count_local();
  if (s.esop && s.L > 0) this->exchange_nnz();
}

// The owner's plane t into a message buffer: dense (L values) or entries.
template <class T>
void BroadcastBatches<T>::fill(index_t t, bool dense, void* buf) {
  const StageView<T>& s = this->s_;
  const PlaneRef<T> p = s.local_plane(this->vbase_, t);
  size_t n = 0;
  for (index_t l1 = 0; l1 < s.le1; ++l1)
    for (index_t l2 = 0; l2 < s.le2; ++l2) {
      const T y = p.at(l1, l2);
      if (dense)
        static_cast<T*>(buf)[l1 * s.le2 + l2] = y;
      else if (!is_zero(y))
        static_cast<PlaneEntry<T>*>(buf)[n++] = {l1 * s.le2 + l2, y};
    }
}

template <class T>
void BroadcastBatches<T>::post(index_t b0) {
  const StageView<T>& s = this->s_;
  Slot& sl = slot(b0);
  if (s.L == 0) return;
  const index_t nb = std::min(this->B_, s.S() - b0);
  sl.dense.assign(static_cast<size_t>(nb * s.L), T{});
  sl.sparse.assign(static_cast<size_t>(nb), {});
  for (index_t i = 0; i < nb; ++i) {
    const index_t t = s.steps[b0 + i].t;
    const int root = s.owner(t);
    const bool mine = root == s.line_rank;
    if (s.esop && this->nnz_all_[t] == 0) continue;  // an all-zero plane sends nothing
    void* buf = nullptr;
    int bytes = 0;
    if (this->compressed(t)) {
      auto& e = sl.sparse[i];
      e.resize(static_cast<size_t>(this->nnz_all_[t]));
      buf = e.data();
      bytes = static_cast<int>(e.size() * sizeof(PlaneEntry<T>));
      if (mine) {
        const auto packing = s.clock->pack();
        fill(t, false, buf);
      }
    } else {
      buf = sl.dense.data() + i * s.L;
      bytes = static_cast<int>(s.L * sizeof(T));
      if (mine) {
        const auto packing = s.clock->pack();
        fill(t, true, buf);
      }
    }
    const auto waiting = s.clock->wait();
    sl.reqs.add(mpi::ibcast_bytes(
        s.line, std::span<std::byte>(static_cast<std::byte*>(buf), static_cast<size_t>(bytes)),
        root));
    if (mine)
      this->y_traffic_.add(
          static_cast<std::uint64_t>(s.line_size - 1),
          static_cast<std::uint64_t>(s.line_size - 1) * static_cast<std::uint64_t>(bytes));
  }
}

template <class T>
void BroadcastBatches<T>::take(index_t b0, index_t nb, std::vector<PlaneRef<T>>& planes,
                               std::vector<std::uint64_t>& nnz, bool& finite) {
  const StageView<T>& s = this->s_;
  Slot& cur = slot(b0);
  {
    const auto waiting = s.clock->wait();
    cur.reqs.wait_all();
  }
  for (index_t i = 0; i < nb; ++i) {
    const index_t t = s.steps[b0 + i].t;
    if (s.owner(t) == s.line_rank) {
      planes[i] = s.local_plane(this->vbase_, t);
      nnz[i] = static_cast<std::uint64_t>(this->nnz_local_[t - s.vlo]);
      finite = finite && this->finite_local_;
      continue;
    }
    T* row = cur.dense.data() + i * s.L;
    if (this->compressed(t))
      for (const auto& e : cur.sparse[i]) row[e.line] = e.v;
    planes[i] = PlaneRef<T>{row, s.le2, 1};
    nnz[i] = plane_nnz(s, planes[i], finite);
  }
}

// The pivot planes of a line's members on one node, read in place: each member copies its
// V brick into its segment of the topology's shared window of the line (set up once,
// pages mapped; collective over the line), then reads the others' planes directly.
template <class T>
class WindowPlanes {
 public:
  bool is_open() const { return win_.valid(); }
  void open(const StageView<T>& s, const std::vector<T>& v);
  // Collective over the line: every member is done reading before the window is reused.
  void finish() const {
    if (win_.valid()) win_.fence();
  }
  const T* base(int member) const { return members_[static_cast<size_t>(member)].base; }
  PlaneRef<T> plane(int member, index_t t) const {
    const Member& m = members_[static_cast<size_t>(member)];
    return {m.base + (t - m.lo) * m.stride[a_], m.stride[d1_], m.stride[d2_]};
  }

 private:
  struct Member {
    const T* base;
    index_t lo;   // first plane along the axis
    ext3 stride;  // C-order strides of its V brick
  };
  mpi::WindowRef win_;
  int a_ = 0, d1_ = 0, d2_ = 0;
  std::vector<Member> members_;
};

template <class T>
void WindowPlanes<T>::open(const StageView<T>& s, const std::vector<T>& v) {
  const Topology& topo = s.topo;
  a_ = s.a;
  d1_ = s.d1;
  d2_ = s.d2;
  win_ = mpi::WindowRef(topo.line_window_handle(s.sp.axis));
  std::size_t bytes = 0;
  T* mine = reinterpret_cast<T*>(topo.line_window(s.sp.axis, s.line_rank, bytes));
  if (bytes < v.size() * sizeof(T)) throw internal_error("line window smaller than V");
  if (!v.empty()) {
    const auto packing = s.clock->pack();
    std::memcpy(mine, v.data(), v.size() * sizeof(T));
  }
  {
    const auto waiting = s.clock->wait();
    win_.fence();  // every member's copy is in place
  }
  for (int r = 0; r < s.line_size; ++r) {
    const T* base = reinterpret_cast<const T*>(topo.line_window(s.sp.axis, r, bytes));
    ext3 er = s.ev;
    er[a_] = s.bs.member_in_planes[static_cast<size_t>(r)];
    members_.push_back(
        {base, s.bs.member_planes[static_cast<size_t>(r)].lo, {er[1] * er[2], er[2], 1}});
  }
}

// Planes read in place through the line's shared window, in one batch. V now lives in the
// window; the vector keeps its pages (and its stale values) as the next stage's W
// register, so no page is faulted in again.
template <class T>
class SharedInPlace final : public PlaneSource<T> {
 public:
  SharedInPlace(StageView<T>& s, std::vector<T>& v) : PlaneSource<T>(s, v) {
    this->B_ = s.bs.batch_planes(s.S(), true);
    this->count_local();
    if (s.esop) this->exchange_nnz();
    window_.open(s, v);
    this->vbase_ = window_.base(s.line_rank);
  }
  void post(index_t b0) override { this->account_shared(b0); }
  void take(index_t b0, index_t nb, std::vector<PlaneRef<T>>& planes,
            std::vector<std::uint64_t>& nnz, bool& finite) override {
    const StageView<T>& s = this->s_;
    for (index_t i = 0; i < nb; ++i) {
      const index_t t = s.steps[b0 + i].t;
      if (s.owner(t) == s.line_rank) {
        planes[i] = s.local_plane(this->vbase_, t);
        nnz[i] = static_cast<std::uint64_t>(this->nnz_local_[t - s.vlo]);
        finite = finite && this->finite_local_;
      } else {  // the owner counted it; an Inf or NaN is caught by the kernels (bad)
        planes[i] = window_.plane(s.owner(t), t);
        if (s.esop) nnz[i] = static_cast<std::uint64_t>(this->nnz_all_[t]);
      }
    }
  }
  void finish() override { window_.finish(); }

 private:
  WindowPlanes<T> window_;
};

// Shared packing: member r packs its planes' rows of a chunk into one buffer of a ring in
// its window scratch; the others read them. Synchronisation is point to point, through two
// counters at the head of each member's scratch (each on its own cache line, written only
// by that member): `packed`, the chunks it has published, and `read`, the chunks it has
// finished reading. Chunks are numbered over the window's life (every member of a line runs
// the same chunks in the same order, from 0 at the window's creation), so no batch needs a
// fence: chunk g goes to buffer g % ring, once every member has read chunk g - ring.
class SharedPanels final : public kernels::PanelStore {
 public:
  SharedPanels(const Topology& topo, int axis, int line_rank, int line_size, index_t nb, index_t N,
               std::vector<int> owner);
  bool packs_ahead() const override { return true; }
  void begin_chunk(index_t q, index_t, double*& panels, char*& flags) override;
  void publish(index_t q) override { store_release(counter(me_, kPacked), global(q) + 1); }
  void acquire(index_t q) override { wait_all(kPacked, global(q) + 1); }
  void locate(index_t q, const double** rows, const char** flags) const override {
    for (index_t s = 0; s < nb_; ++s) {
      const std::byte* b = buffer(owner_[s], global(q));
      rows[s] = reinterpret_cast<const double*>(b) + s * kernels::nr();
      flags[s] = reinterpret_cast<const char*>(b + panel_bytes_) + s;
    }
  }
  void end_chunk(index_t q) override { store_release(counter(me_, kRead), global(q) + 1); }

  // Bytes at the head of a member's scratch for its two counters.
  static constexpr std::size_t kCounterBytes = 128;
  // Buffers of the ring: as many as fit, up to 4 (the packing member runs up to three
  // chunks ahead of the slowest reader).
  static std::size_t ring_size(std::size_t half) {
    return std::min<std::size_t>(4, (Topology::kLineScratchBytes - kCounterBytes) / half);
  }

 private:
  static constexpr std::size_t kPacked = 0, kRead = 64;
  std::uint64_t* counter(int member, std::size_t which) const {
    return reinterpret_cast<std::uint64_t*>(scratch_[static_cast<size_t>(member)] + which);
  }
  std::uint64_t global(index_t q) const { return base_ + static_cast<std::uint64_t>(q); }
  // Member's buffer of chunk g (numbered over the window's life).
  std::byte* buffer(int member, std::uint64_t g) const {
    return scratch_[static_cast<size_t>(member)] + kCounterBytes + (g % ring_) * half_;
  }
  static void store_release(std::uint64_t* c, std::uint64_t v) {
    __atomic_store_n(c, v, __ATOMIC_RELEASE);
  }
  // Until every member's counter reaches v (spinning, then yielding the core: a line's
  // members may share cores).
  void wait_all(std::size_t which, std::uint64_t v) const;

  index_t nb_;
  int me_;
  std::vector<int> owner_;
  std::vector<std::byte*> scratch_;
  std::size_t half_ = 0, ring_ = 2, panel_bytes_ = 0;
  std::uint64_t base_ = 0;  // the batch's first chunk
};

SharedPanels::SharedPanels(const Topology& topo, int axis, int line_rank, int line_size, index_t nb,
                           index_t N, std::vector<int> owner)
    : nb_(nb), me_(line_rank), owner_(std::move(owner)) {
  const index_t kNR = kernels::nr();
  for (int r = 0; r < line_size; ++r) {
    std::size_t bytes = 0;
    scratch_.push_back(topo.line_scratch(axis, r, bytes));
  }
  half_ = kernels::shared_pack_half(nb, N);
  ring_ = ring_size(half_);
  panel_bytes_ =
      static_cast<std::size_t>((std::min(kernels::panel_chunk(nb), N) + kNR - 1) / kNR * nb * kNR) *
      sizeof(double);
  // This member has published and read every chunk before this batch (its own counters).
  base_ = __atomic_load_n(counter(me_, kPacked), __ATOMIC_RELAXED);
}

void SharedPanels::wait_all(std::size_t which, std::uint64_t v) const {
  for (int r = 0; r < static_cast<int>(scratch_.size()); ++r) {
    const std::uint64_t* c = counter(r, which);
    for (int spins = 0; __atomic_load_n(c, __ATOMIC_ACQUIRE) < v; ++spins) {
      if (spins >= 4096) {
        sched_yield();
        continue;
      }
#if defined(__x86_64__) || defined(__i386__)
      __builtin_ia32_pause();
#endif
    }
  }
}

void SharedPanels::begin_chunk(index_t q, index_t, double*& panels, char*& flags) {
  const std::uint64_t g = global(q);
  if (g >= ring_) wait_all(kRead, g - ring_ + 1);  // nobody reads the buffer any more
  panels = reinterpret_cast<double*>(buffer(me_, g));
  flags = reinterpret_cast<char*>(panels) + panel_bytes_;
}

// Each member counts its planes' non-zeros while packing; the line learns them after the
// kernels, and if any member met an Inf or NaN pivot (ESOP) they all redo the batch
// exactly, reading the planes in place.
template <class T>
class SharedPacking final : public PlaneSource<T> {
 public:
  SharedPacking(StageView<T>& s, std::vector<T>& v) : PlaneSource<T>(s, v) {
    this->B_ = s.bs.batch_planes(s.S(), true);
  }
  bool counts_in_kernels() const override { return true; }
  void take(index_t b0, index_t nb, std::vector<PlaneRef<T>>& planes,
            std::vector<std::uint64_t>& nnz, bool& finite) override {
    const StageView<T>& s = this->s_;
    for (index_t i = 0; i < nb; ++i) {
      const index_t t = s.steps[b0 + i].t;
      if (s.owner(t) == s.line_rank) {
        planes[i] = s.local_plane(this->vbase_, t);
        finite = finite && this->finite_local_;
      } else {  // packed by its owner: nobody here reads it
        planes[i] = PlaneRef<T>{};
        if (s.esop) nnz[i] = static_cast<std::uint64_t>(this->nnz_all_[t]);
      }
    }
  }
  std::unique_ptr<kernels::PanelStore> panels(index_t b0, index_t nb, index_t N) override {
    std::vector<int> owner(static_cast<size_t>(nb));
    for (index_t i = 0; i < nb; ++i) owner[i] = this->s_.owner(this->s_.steps[b0 + i].t);
    return std::make_unique<SharedPanels>(this->s_.topo, this->s_.sp.axis, this->s_.line_rank,
                                          this->s_.line_size, nb, N, std::move(owner));
  }
  bool after_kernels(index_t b0, index_t nb, const std::vector<std::uint64_t>& counts,
                     std::uint64_t bad, std::vector<PlaneRef<T>>& planes,
                     std::vector<std::uint64_t>& nnz) override;
  bool skip(bool stop) override {
    if (!cancel::active()) return false;  // (on every rank alike)
    const auto waiting = this->s_.clock->wait();
    return mpi::max_of(this->s_.line, stop ? 1 : 0) != 0;
  }
  void finish() override { window_.finish(); }

 private:
  WindowPlanes<T> window_;
};

template <class T>
bool SharedPacking<T>::after_kernels(index_t b0, index_t nb,
                                     const std::vector<std::uint64_t>& counts, std::uint64_t bad,
                                     std::vector<PlaneRef<T>>& planes,
                                     std::vector<std::uint64_t>& nnz) {
  const StageView<T>& s = this->s_;
  nnz.assign(counts.begin(), counts.end());
  // The line agrees on an Inf or NaN anywhere (ESOP); every plane's non-zeros come from
  // its owner's count while packing.
  bool any_bad = false;
  {
    const auto waiting = s.clock->wait();
    any_bad = mpi::max_of(s.line, s.esop && bad != 0 ? 1 : 0) != 0;
  }
  if (s.esop) {
    for (index_t i = 0; i < nb; ++i)
      if (s.owner(s.steps[b0 + i].t) == s.line_rank)
        this->nnz_local_[s.steps[b0 + i].t - s.vlo] = static_cast<std::int64_t>(counts[i]);
    this->exchange_nnz();
    for (index_t i = 0; i < nb; ++i)
      nnz[i] = static_cast<std::uint64_t>(this->nnz_all_[s.steps[b0 + i].t]);
  }
  this->account_shared(b0);
  if (any_bad) {  // the exact path reads every plane: in place, through the window
    window_.open(s, this->v_);
    for (index_t i = 0; i < nb; ++i) {
      const int root = s.owner(s.steps[b0 + i].t);
      if (root != s.line_rank) planes[i] = window_.plane(root, s.steps[b0 + i].t);
    }
  }
  return s.esop && any_bad;
}

}  // namespace

// On one node the members of a line read each other's pivot planes in place through an
// MPI shared-memory window (one batch, no copies); otherwise they broadcast them.
template <class T>
std::unique_ptr<PlaneSource<T>> make_plane_source(StageView<T>& s, std::vector<T>& v) {
  if (s.line_size == 1) return std::make_unique<LocalPlanes<T>>(s, v);
  const bool shared = s.L > 0 && s.opt.pivot_transport != PivotTransport::broadcast &&
                      mpi::WindowRef(s.topo.line_window_handle(s.sp.axis)).valid() &&
                      s.topo.line_window_element_bytes() >= sizeof(T);
  if (!shared) return std::make_unique<BroadcastBatches<T>>(s, v);
  if (s.kernel_path && s.sp.axis != 3) {
    // Every member must run the kernels (their fences pair up): each needs W planes. With
    // folded lines the counters read every plane (busiest cell), so planes stay readable.
    const index_t right_N = s.sp.axis == 2 ? s.le2 : s.L;
    const int ok = s.wext > 0 && s.S() > 0 && !s.bs.lines_folded &&
                   SharedPanels::ring_size(kernels::shared_pack_half(s.S(), right_N)) >= 2;
    int all_ok = 0;
    {
      const auto waiting = s.clock->wait();
      all_ok = mpi::min_of(s.line, ok);
    }
    if (all_ok != 0) return std::make_unique<SharedPacking<T>>(s, v);
  }
  return std::make_unique<SharedInPlace<T>>(s, v);
}

template class PlaneSource<double>;
template class PlaneSource<cplx>;
template std::unique_ptr<PlaneSource<double>> make_plane_source(StageView<double>&,
                                                                std::vector<double>&);
template std::unique_ptr<PlaneSource<cplx>> make_plane_source(StageView<cplx>&, std::vector<cplx>&);

}  // namespace triada::detail::fused
