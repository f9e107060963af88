#pragma once
// --activity FILE.h5 (doc/design.md §5.11): every cell's MACs, Y-bus sends and receives and
// waits, per stage and summed over the run, as uint32 datasets over the mesh's virtual
// cells, written by hyperslab from each brick rank, with the XDMF sidecar FILE.xmf.
#include <optional>
#include <string>
#include <vector>

#include "counters/cell_activity.hpp"
#include "io/output_files.hpp"
#include "io/tensor_io.hpp"
#include "jobs/transform_config.hpp"
#include "mesh/topology.hpp"
#include "report/provenance.hpp"

namespace triada {

// The file and its sidecar as outputs of the run (check_distinct); none without --activity.
std::vector<RunFile> activity_files(const TransformConfig& cfg);

// Rank 0, before any work: both can be written (an existing one only with --force).
// Returns the sidecar, to be staged once the file is written.
TextOutput probe_activity(const TransformConfig& cfg);

// Refuses a plan whose per-cell counts could pass 32 bits (a cell does at most N_a events of
// a kind per stage).
void check_activity_fits(const Plan& plan);

// Brick ranks, collective over them: the file written and finished in `writer`, not yet
// visible (publish with the run's other outputs); rank 0 stages `sidecar`.
void write_activity(const TransformConfig& cfg, const Provenance& prov, const Topology& topo,
                    const CellActivity& activity, std::optional<TensorWriter>& writer,
                    TextOutput& sidecar);

}  // namespace triada
