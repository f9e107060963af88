#include "jobs/memory_tensors.hpp"

#include <cstring>
#include <optional>
#include <span>
#include <string>

#include "core/error.hpp"
#include "mesh/mpi.hpp"

namespace triada {

namespace {

// Tags of the scatter of X and Y0 and of the gather of Y on the brick communicator, which
// carries nothing else while they run (before and after the engine).
constexpr int kTagInput = 7301, kTagInitial = 7302, kTagOutput = 7303;

// Places a brick's values (C order of `box`) into the whole tensor of `shape`.
template <class T>
void place(const Brick& box, const std::vector<T>& part, const ext3& shape, std::vector<T>& all) {
  const std::size_t row = static_cast<std::size_t>(box.extent(2));
  if (row == 0) return;
  const T* src = part.data();
  for (index_t i = box.lo[0]; i < box.hi[0]; ++i)
    for (index_t j = box.lo[1]; j < box.hi[1]; ++j, src += row)
      std::memcpy(all.data() + (i * shape[1] + j) * shape[2] + box.lo[2], src, row * sizeof(T));
}

class ArrayTensors final : public TransformTensors {
 public:
  ArrayTensors(const TransformConfig& cfg, const ArrayInputs& in, ArrayResult& result)
      : cfg_(cfg), in_(in), result_(result) {}

  std::vector<RunFile> run_files() const override {
    return {{cfg_.mesh.file, "--mesh", false, false},
            {cfg_.report, "--report", true, false},
            {cfg_.trace, "--trace", true, false}};
  }
  void check_output() override {}

  TensorInfo inspect_input() override {
    return inspect(in_.x, "x", in_.distributed ? in_.global_shape : ext3{});
  }
  TensorInfo inspect_initial(const ext3& out_shape) override {
    return inspect(in_.initial, "initial", in_.distributed ? out_shape : ext3{});
  }

  CoeffMatrix gemt_matrix(int axis, std::string& what) override {
    what = "C" + std::to_string(axis);
    if (shared_[axis - 1]) return *shared_[axis - 1];
    const ArrayView& c = in_.coeffs[axis - 1];
    if (!c.given) throw input_error(what + ": missing (gemt takes three matrices)");
    check_array(c, 2, what);
    return to_matrix(c, what);
  }

  TensorNames names(const TensorInfo&, const TensorInfo&) const override {
    return {"x", "x", cfg_.initial.file.empty() ? "" : "initial", "y"};
  }

  // gemt's matrices from rank 0 to every rank (an actuator may live on any): their sizes
  // first, so that every rank makes sure its copy fits, as rank 0 did, before any is sent.
  void share(MPI_Comm world) override {
    const bool root = mpi::rank(world) == 0;
    std::array<CoeffMatrix, 3> m;
    mpi::collectively(world, [&] {
      std::string what;
      for (int a = 1; a <= 3; ++a)
        if (root && is_gemt(a)) m[a - 1] = gemt_matrix(a, what);
    });
    for (CoeffMatrix& c : m) {
      std::array<index_t, 3> dims{c.rows, c.cols, c.is_complex ? 1 : 0};
      mpi::bcast_bytes(world, std::span<index_t>(dims), 0);
      c.rows = dims[0], c.cols = dims[1], c.is_complex = dims[2] != 0;
    }
    mpi::collectively(world, [&] {
      if (root) return;  // checked in gemt_matrix
      for (int a = 1; a <= 3; ++a) {
        const CoeffMatrix& c = m[a - 1];
        matrix_elements(c.rows, c.cols, 1, matrix_label("C" + std::to_string(a), c.rows, c.cols));
      }
    });
    for (int a = 1; a <= 3; ++a)
      if (is_gemt(a)) {
        mpi::bcast(world, m[a - 1].data, 0);
        shared_[a - 1] = std::move(m[a - 1]);
      }
  }

  void read(const Topology& topo, const TensorInfo& info, bool initial, const Brick& box,
            std::vector<double>& out) override {
    read_typed(topo, info, initial, box, out);
  }
  void read(const Topology& topo, const TensorInfo& info, bool initial, const Brick& box,
            std::vector<cplx>& out) override {
    read_typed(topo, info, initial, box, out);
  }
  void write(const TensorNames&, const Provenance&, const Topology& topo,
             EngineResult<double>& res) override {
    write_typed(topo, res);
  }
  void write(const TensorNames&, const Provenance&, const Topology& topo,
             EngineResult<cplx>& res) override {
    write_typed(topo, res);
  }
  void publish() override {}

 private:
  bool is_gemt(int axis) const { return cfg_.kinds[axis - 1] == TransformKind::gemt; }

  // World rank 0: a tensor's facts, from its array (or, distributed, rank 0's part and the
  // whole shape given).
  static TensorInfo inspect(const ArrayView& a, const std::string& name, const ext3& whole_shape) {
    check_array(a, 3, name);
    TensorInfo info;
    info.shape = {a.shape[0], a.shape[1], a.shape[2]};
    if (whole_shape != ext3{}) info.shape = whole_shape;
    for (index_t n : info.shape)
      if (n <= 0) throw input_error(name + ": empty extent " + to_string(info.shape));
    info.is_complex = a.is_complex();
    info.type_name = a.type_name;
    return info;
  }

  // This rank's own part of a distributed tensor: the brick's shape, a real type for a real run.
  template <class T>
  static void check_part(const ArrayView& a, const std::string& name, const TensorInfo& info,
                         const Brick& box, int rank) {
    const std::string part = name + " (rank " + std::to_string(rank) + "'s part)";
    if (!a.given)
      throw input_error(part + ": missing (distributed: every brick rank gives its part)");
    if (static_cast<int>(a.shape.size()) != 3 || !a.supported())
      check_array(a, 3, part);  // the message of what is wrong with it
    const ext3 want{box.extent(0), box.extent(1), box.extent(2)};
    if (ext3{a.shape[0], a.shape[1], a.shape[2]} != want)
      throw input_error(part + ": shape " + a.shape_string() + ", but this rank's brick is " +
                        to_string(want) + " at " + to_string(box.lo) +
                        " (the plan's bricks: TransformJob::plan)");
    if (a.is_complex() && !is_complex_v<T>)
      throw input_error(part + ": complex (" + a.type_name + "), but rank 0's part is " +
                        info.type_name + " and the run is real");
  }

  template <class T>
  void read_typed(const Topology& topo, const TensorInfo& info, bool initial, const Brick& box,
                  std::vector<T>& out) {
    const ArrayView& a = initial ? in_.initial : in_.x;
    const std::string name = initial ? "initial" : "x";
    if (in_.distributed) {
      check_part<T>(a, name, info, box, topo.world_rank());
      copy_box(a, box, box.lo, out);
      return;
    }
    // Whole on rank 0: each brick rank's part sent in turn (one part in flight at a time).
    const MPI_Comm bricks = topo.bricks();
    const int tag = initial ? kTagInitial : kTagInput;
    if (mpi::rank(bricks) != 0) {
      out.resize(static_cast<std::size_t>(box.count()));
      mpi::recv_bytes(bricks, 0, tag, out.data(), out.size() * sizeof(T));
      return;
    }
    const Plan& plan = topo.plan();
    const Brick all = whole(initial ? plan.out_shape : plan.in_shape);
    std::vector<T> part;
    for (int r = 1; r < mpi::size(bricks); ++r) {
      copy_box(a, plan.brick_cells(r).intersect(all), ext3{0, 0, 0}, part);
      mpi::isend_bytes(bricks, part.data(), part.size() * sizeof(T), r, tag).wait();
    }
    copy_box(a, box, ext3{0, 0, 0}, out);
  }

  template <class T>
  void keep(std::vector<T>&& values, const Brick& box) {
    result_.present = true;
    result_.is_complex = is_complex_v<T>;
    result_.box = box;
    if constexpr (is_complex_v<T>)
      result_.complex = std::move(values);
    else
      result_.real = std::move(values);
  }

  template <class T>
  void write_typed(const Topology& topo, EngineResult<T>& res) {
    const MPI_Comm bricks = topo.bricks();
    const int ranks = mpi::size(bricks);
    if (!in_.gather || ranks == 1) return keep(std::move(res.out), res.out_box);
    if (mpi::rank(bricks) != 0) {
      mpi::isend_bytes(bricks, res.out.data(), res.out.size() * sizeof(T), 0, kTagOutput).wait();
      return;
    }
    const Plan& plan = topo.plan();
    const Brick all = whole(plan.out_shape);
    std::vector<T> y(static_cast<std::size_t>(all.count())), part;
    place(res.out_box, res.out, plan.out_shape, y);
    for (int r = 1; r < ranks; ++r) {
      const Brick box = plan.brick_cells(r).intersect(all);
      part.resize(static_cast<std::size_t>(box.count()));
      mpi::recv_bytes(bricks, r, kTagOutput, part.data(), part.size() * sizeof(T));
      place(box, part, plan.out_shape, y);
    }
    keep(std::move(y), all);
  }

  const TransformConfig& cfg_;
  const ArrayInputs& in_;
  ArrayResult& result_;
  std::array<std::optional<CoeffMatrix>, 3> shared_;
};

}  // namespace

std::unique_ptr<TransformTensors> array_tensors(const TransformConfig& cfg, const ArrayInputs& in,
                                                ArrayResult& result) {
  return std::make_unique<ArrayTensors>(cfg, in, result);
}

}  // namespace triada
