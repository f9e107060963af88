#pragma once
// A time model of a distributed run (doc/design.md §8.11): each stage's time on the
// busiest brick as the actuator's stream, the kernels' multiply-adds at a measured rate,
// and the pivot planes' transport, from the plan alone (no MPI, nothing read), for a
// machine described by measured constants (triada-bench --calibrate) or assumed ones (a
// network between nodes). Used by the grid chooser, --dry-run and the report.
#include <array>
#include <cstddef>
#include <string>
#include <vector>

#include "geometry/plan.hpp"

namespace triada {

// The machine a run is priced on. Rates and bandwidths are per rank. The built-in
// constants: triada-bench --calibrate --quick --sizes 128,256 at 16 ranks on the 16-core
// Intel Xeon node of doc/scaling.md "Scaling on a 16-core node" (its 256^3 rates); the actuator's
// message building measured on the project's 2-core VM (1.58 MB of a 256-point stage in
// 1.2 ms); the network between nodes assumed (meshcfg/default.ini).
struct MachineModel {
  std::string source = "built-in (16-core Xeon node)";  // where the numbers come from
  int cores_per_node = 16;                              // ranks a node runs at once, one per core
  int ranks_per_node = 0;  // the run's placement to price (0: as the run's ranks are placed)
  // Multiply-adds per second of the fused kernels (binary64): along axis 3 (data on the
  // left) and along axes 1 and 2 (on the right), one rank alone and every core busy.
  double left_rate_alone = 19.7e9, left_rate_all = 16.5e9;
  double right_rate_alone = 18.1e9, right_rate_all = 14.7e9;
  double copy_bytes_per_s = 3.9e9;    // bytes one rank copies per second, every core busy
  double stream_bytes_per_s = 1.3e9;  // bytes of actuator messages its host builds a second
  double fence_s = 3.3e-6;            // one synchronisation of a line's shared window
  // One rank waiting on another's flag in shared memory (half a round trip): the shared
  // packing's synchronisation a chunk. Assumed for the built-in node (not measured there;
  // the 2-core VM measured 0.24 us); a calibration's sync.flag_handshake where it has one.
  double handshake_s = 0.5e-6;
  // Point to point within a node and between nodes: t = alpha + bytes x beta.
  double node_alpha_s = 0.70e-6, node_beta_s_per_byte = 1.0 / 7.7e9;
  double net_alpha_s = 1e-6, net_beta_s_per_byte = 1.0 / 24e9;
  // The multiply-add rate of `kernel` (left: axis 3) with `busy` ranks of a node computing:
  // linear between alone (1) and all (cores_per_node).
  double mac_rate(bool left, int busy) const;
};

// How pivot planes travel (EngineOptions' transport, as the model sees it).
enum class ModelTransport { automatic, broadcast, shared };

// One stage's modelled seconds on its busiest brick.
struct StageModel {
  int axis = 0;
  double stream = 0;   // the actuator's stream: built, then received, before the kernels
  double compute = 0;  // the kernels' multiply-adds (dense)
  double planes = 0;   // pivot planes: packing, copying, synchronising, broadcasting
  double total() const { return stream + compute + planes; }
};

// Every stage of a dense run of `plan` in `element_bytes` elements (8 real, 16 complex:
// the complex path is not modelled beyond its bytes), with `ranks_per_node` ranks on each
// node (consecutive world ranks share a node).
std::vector<StageModel> model_stages(const Plan& plan, const MachineModel& m,
                                     std::size_t element_bytes, ModelTransport transport,
                                     int ranks_per_node);
double model_total(const std::vector<StageModel>& stages);

// The brick grids of `req`'s brick ranks (every factorisation p1 p2 p3 = B that fits the
// mesh), each with its modelled stages, fastest first; among equal times the balanced
// grid (req.balanced_dims as make_plan lays it out) first. req.grid is ignored (it is what
// a user gives to override the choice).
struct GridChoice {
  std::array<int, 3> grid{1, 1, 1};
  std::vector<StageModel> stages;
  double total = 0;
};
std::vector<GridChoice> rank_grids(PlanRequest req, const MachineModel& m,
                                   std::size_t element_bytes, ModelTransport transport,
                                   int ranks_per_node);

}  // namespace triada
