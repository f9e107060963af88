#include "jobs/provenance.hpp"

#include <fstream>
#include <string>
#include <vector>

#include "core/version.hpp"
#include "io/hdf5.hpp"
#include "jobs/provenance_attributes.hpp"
#include "kernels/isa.hpp"
#include "mesh/kernel_path.hpp"
#include "mesh/mpi.hpp"

namespace triada {

namespace {

// The words this process was started with (/proc/self/cmdline; none where there is no
// /proc): what called the library, when its caller gave no command line of its own.
std::vector<std::string> own_argv() {
  std::ifstream in("/proc/self/cmdline", std::ios::binary);
  std::vector<std::string> words;
  for (std::string w; std::getline(in, w, '\0');) words.push_back(w);
  return words;
}

}  // namespace

Provenance local_provenance(const std::string& program, const std::string& command_line,
                            int ranks) {
  // A config a library consumer built (no command line): the record names the job the
  // program's code ran in, and the process that called it, not the program's own name.
  const bool library = command_line.empty();
  Provenance p = build_provenance(library ? program + " job (library)" : program,
                                  library ? shell_words(own_argv()) : command_line, ranks);
  p.mpi_library = mpi::library_version();
  p.hdf5_library = h5::library_version();
  p.kernels = kernels::to_string(kernels::isa());
  return p;
}

Provenance run_provenance(MPI_Comm comm, const std::string& program,
                          const std::string& command_line) {
  agree_on_kernel_path(comm);
  const int size = mpi::size(comm);
  Provenance p;
  if (mpi::rank(comm) == 0) p = local_provenance(program, command_line, size);
  // Field by field: the words of a command line need not be UTF-8 (JSON text would).
  for (std::string* s : {&p.program, &p.version, &p.commit, &p.command_line, &p.host, &p.date,
                         &p.mpi_library, &p.hdf5_library, &p.kernels})
    *s = mpi::bcast_string(comm, *s, 0);
  p.ranks = size;
  return p;
}

void set_provenance_attributes(TensorWriter& w, const Provenance& p) {
  const nlohmann::json record = to_json(p);  // alive through the loop
  for (const auto& [key, value] : record.items()) {
    if (value.is_number_integer())
      w.set_attribute(key, value.get<index_t>());
    else
      w.set_attribute(key, value.get<std::string>());
  }
}

std::string version_text(const std::string& program) {
  return program + " " + version_string() + "\ncommit " + git_commit() +
         "\nMPI: " + mpi::library_version() + "\nHDF5: " + h5::library_version() +
         "\nkernels: " + kernels::isa_summary() + "\n";
}

nlohmann::json kernels_json() {
  const auto names = [](const std::vector<kernels::Isa>& isas) {
    nlohmann::json a = nlohmann::json::array();
    for (const kernels::Isa i : isas) a.push_back(kernels::to_string(i));
    return a;
  };
  const std::string flags = kernels::arch_flags();
  const kernels::KernelBlock block = kernels::kernel_block();
  return {{"isa", kernels::to_string(kernels::isa())},
          {"selected_by", kernels::to_string(kernels::isa_source())},
          {"compiled", names(kernels::compiled_isas())},
          {"available", names(kernels::available_isas())},
          {"arch_flags", flags.empty() ? nlohmann::json(nullptr) : nlohmann::json(flags)},
          {"register_block", {block.rows, block.columns}}};
}

}  // namespace triada
