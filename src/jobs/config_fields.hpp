#pragma once
// A job's description as named words (mesh/agreement.hpp), so that its ranks can check
// that they run the same job before any work (doc/cpp.md "Ranks that disagree"): every
// field of its config but the words it was started with (command_line, spelled: each
// rank's own), and of an array run the inputs' description (not their values, which are
// rank 0's or each rank's own part).
#include <mpi.h>

#include <string>
#include <vector>

#include "jobs/conv_config.hpp"
#include "jobs/tcu_config.hpp"
#include "jobs/transform_job.hpp"
#include "mesh/agreement.hpp"

namespace triada {

using Fields = std::vector<mpi::Field>;

// "mesh.cells", "energy.mac_pj", ...: every key of the mesh config, as the INI names it.
Fields mesh_fields(const MeshConfig& m);
Fields config_fields(const TransformConfig& c);
Fields config_fields(const TcuConfig& c);
Fields config_fields(const ConvConfig& c);
// distributed, gather, and where distributed the whole shape and whether Y0 is given.
Fields input_fields(const ArrayInputs& in);

// Collective over `comm`: returns if every rank's `fields` are equal, else throws
// config_error on every rank naming the first that differs (`what` names the struct:
// "TransformConfig") with rank 0's value and the lowest differing rank's.
void agree_on(MPI_Comm comm, const Fields& fields, const std::string& what);

}  // namespace triada
