// triada-gen: writes a synthetic rank-3 test tensor to HDF5. Every value is a pure
// function of (seed, stream, global index) through a counter-based hash (io/generate.hpp),
// so the file is the same for any number of MPI ranks; each rank writes its own slab
// along axis 1.
#include <cstdint>
#include <iostream>
#include <nlohmann/json.hpp>
#include <optional>
#include <sstream>
#include <string>
#include <vector>

#include "apps/common/run_main.hpp"
#include "apps/gen/options.hpp"
#include "core/checked.hpp"
#include "core/error.hpp"
#include "core/types.hpp"
#include "counters/progress.hpp"
#include "geometry/brick.hpp"
#include "io/generate.hpp"
#include "io/output_files.hpp"
#include "io/tensor_io.hpp"
#include "jobs/provenance.hpp"
#include "jobs/provenance_attributes.hpp"
#include "mesh/mpi.hpp"
#include "mesh/node_memory.hpp"
#include "report/provenance.hpp"

namespace triada {
namespace {

// Rank 0's progress: the planes of its slab generated (the write is one collective call).
PlaneProgress plane_progress(Progress& progress) {
  return [&progress](index_t done, index_t total) {
    progress.update(static_cast<double>(done) / static_cast<double>(total), [&] {
      return "generate: plane " + std::to_string(done) + "/" + std::to_string(total) +
             " of rank 0's slab";
    });
  };
}

template <class T>
index_t generate_and_write(const GenConfig& c, MPI_Comm comm, TensorWriter& w) {
  const int rank = mpi::rank(comm), size = mpi::size(comm);
  const Brick slab = generator_slab(c.spec.shape, size, rank);
  std::vector<T> values;
  index_t local = 0;
  Progress progress("triada-gen", c.progress, rank == 0);
  mpi::collectively(comm, [&] {
    local = out_of_memory_is_input_error(c.output.str(), [&] {
      return generate_brick(c.spec, slab, values, plane_progress(progress));
    });
  });
  progress.finish();
  w.write_brick(slab, values);
  return mpi::sum_of(comm, std::int64_t{local});
}

// The file's attributes: how it was generated, and by what (jobs/provenance.hpp).
void set_gen_attributes(TensorWriter& w, const GenConfig& c, const Provenance& prov) {
  w.set_attribute("generator", std::string("triada-gen"));
  w.set_attribute("shape", std::vector<index_t>(c.spec.shape.begin(), c.spec.shape.end()));
  w.set_attribute("type", to_string(c.type));
  w.set_attribute("dist", c.dist_name);
  w.set_attribute("seed", static_cast<index_t>(c.spec.seed));
  w.set_attribute("sparsity", c.spec.sparsity);
  w.set_attribute("zero_lines", c.spec.zero_lines);
  w.set_attribute("zero_planes", c.spec.zero_planes);
  w.set_attribute("plane_axis", index_t{c.spec.plane_axis});
  w.set_attribute("sparsity_pattern", sparsity_pattern_string(c.spec));
  w.set_attribute("pattern_axis", index_t{c.spec.pattern_axis});
  set_provenance_attributes(w, prov);
}

// --report (schema triada-gen-report/1): the settings, what was written and by what, so
// that a sweep can read an input's zero fraction without opening it.
nlohmann::json gen_report(const GenConfig& c, index_t nonzeros, const Provenance& prov) {
  const index_t total = c.spec.shape[0] * c.spec.shape[1] * c.spec.shape[2];
  return {{"schema", "triada-gen-report/1"},
          {"app", "triada-gen"},
          {"output", c.output.str()},
          {"shape", std::vector<index_t>(c.spec.shape.begin(), c.spec.shape.end())},
          {"type", to_string(c.type)},
          {"dist", c.dist_name},
          {"seed", c.spec.seed},
          {"sparsity", c.spec.sparsity},
          {"zero_lines", c.spec.zero_lines},
          {"zero_planes", c.spec.zero_planes},
          {"plane_axis", c.spec.plane_axis},
          {"sparsity_pattern", sparsity_pattern_string(c.spec)},
          {"pattern_axis", c.spec.pattern_axis},
          {"elements", total},
          {"nonzeros", nonzeros},
          {"zero_fraction", static_cast<double>(total - nonzeros) / static_cast<double>(total)},
          {"provenance", to_json(prov)}};
}

// Rank 0's --report target, probed before any work: not the output file, not an existing
// file without --force (io/output_files.hpp).
TextOutput probe_report(const GenConfig& c, MPI_Comm comm) {
  TextOutput report;
  mpi::collectively(comm, [&] {
    if (mpi::rank(comm) != 0 || c.report.empty()) return;
    check_distinct({{c.output.file, "--output", true, true}, {c.report, "--report", true}});
    report = TextOutput(c.report, c.force);
  });
  return report;
}

int run(int argc, char** argv) {
  const MPI_Comm comm = MPI_COMM_WORLD;
  const int rank = mpi::rank(comm);
  std::optional<GenConfig> parsed;
  std::ostringstream help;
  mpi::collectively(comm, [&] { parsed = parse_gen_options(argc, argv, help); });
  if (!parsed) {
    if (rank == 0) std::cout << help.str();
    return 0;
  }
  const GenConfig& c = *parsed;

  // Up-front memory check of every rank's slab, before the output is created.
  const std::size_t element = is_complex(c.type) ? sizeof(cplx) : sizeof(double);
  const std::string what = c.output.str() + ": shape " + to_string(c.spec.shape) +
                           (is_complex(c.type) ? " complex128" : " float64");  // as generated
  const int size = mpi::size(comm);
  std::uint64_t need = 0;
  mpi::collectively(comm, [&] {
    need = generate_bytes(c.spec, generator_slab(c.spec.shape, size, rank), element, what);
  });
  require_node_memory(comm, need, what);

  TextOutput report = probe_report(c, comm);
  const Provenance prov = run_provenance(comm, "triada-gen", c.command_line);
  TensorWriter w(comm, c.output, c.spec.shape, c.type, c.force);
  const index_t nonzeros = is_complex(c.type) ? generate_and_write<cplx>(c, comm, w)
                                              : generate_and_write<double>(c, comm, w);
  set_gen_attributes(w, c, prov);
  // Staged (written and synced) and, on a device, delivered before the tensor is renamed
  // into place; a regular report published after (io/output_files.hpp).
  w.finish();
  mpi::collectively(comm, [&] {
    if (report.active()) report.stage(gen_report(c, nonzeros, prov).dump(2) + "\n");
    report.deliver();
  });
  w.publish();
  mpi::collectively(comm, [&] { report.publish(); });

  if (rank == 0) {
    const index_t total = c.spec.shape[0] * c.spec.shape[1] * c.spec.shape[2];
    std::cout << "triada-gen: wrote " << c.output.str() << " (" << to_string(c.spec.shape) << " "
              << to_string(c.type) << ", " << c.dist_name << ", " << total << " elements, "
              << nonzeros << " nonzeros)\n";
  }
  return 0;
}

}  // namespace
}  // namespace triada

int main(int argc, char** argv) {
  return triada::run_main("triada-gen", argc, argv, triada::run);
}
