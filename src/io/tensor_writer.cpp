// The tensor writer (io/tensor_io.hpp): atomic, collective HDF5 outputs.
#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstdlib>
#include <exception>
#include <filesystem>
#include <thread>
#include <type_traits>

#include "core/checked.hpp"
#include "core/error.hpp"
#include "geometry/memory_model.hpp"
#include "io/hdf5.hpp"
#include "io/output_files.hpp"
#include "io/tensor_io.hpp"
#include "io/tensor_io_common.hpp"
#include "mesh/mpi.hpp"

namespace triada {

namespace fs = std::filesystem;
using namespace tensor_io_detail;

// ---------------------------------------------------------------------------------------
// Output
//
// Why the writer is built this way (doc/errors.md "Errors", "Parallel I/O"): rank 0 alone creates
// the file and the dataset through HDF5's serial driver, with the data space allocated at
// creation, and reserves the data's blocks on disk with fallocate, so a full file system
// is reported before any data moves ("No space left on device"). The ranks then open the
// finished file in parallel and write raw data only (collective hyperslabs through
// MPI-IO): the parallel file never holds dirty metadata, so a failed write cannot leave
// HDF5's collective close waiting on mismatched barriers. Attributes are written by
// rank 0 after the parallel close; the file is fsynced, its size checked, and only then
// renamed onto the target. MPI-IO itself goes through ROMIO (mesh/mpi.cpp explains why).

std::string output_dataset_path(const DatasetRef& target) {
  return target.dataset.empty() ? "/y" : rooted(target.dataset);
}

void check_output_writable(const DatasetRef& target, bool force) {
  probe_output(target.file, force, false);
}

namespace {

enum class WriterState { unopened, open, finished, committed, aborted };

// File types, little-endian as h5py writes them on the usual machines.
h5::Datatype file_type(ElementType e) {
  switch (e) {
    case ElementType::int32:
      return h5::Datatype(CHECK_H5(H5Tcopy(H5T_STD_I32LE)));
    case ElementType::float32:
      return h5::Datatype(CHECK_H5(H5Tcopy(H5T_IEEE_F32LE)));
    case ElementType::float64:
      return h5::Datatype(CHECK_H5(H5Tcopy(H5T_IEEE_F64LE)));
    case ElementType::uint32:
      return h5::Datatype(CHECK_H5(H5Tcopy(H5T_STD_U32LE)));
    case ElementType::complex64:
    case ElementType::complex128: {
      const bool wide = e == ElementType::complex128;
      const size_t w = wide ? 8 : 4;
      h5::Datatype t(CHECK_H5(H5Tcreate(H5T_COMPOUND, 2 * w)));
      const hid_t part = wide ? H5T_IEEE_F64LE : H5T_IEEE_F32LE;
      CHECK_H5(H5Tinsert(t.get(), "r", 0, part));
      CHECK_H5(H5Tinsert(t.get(), "i", w, part));
      return t;
    }
  }
  throw internal_error("file_type: bad ElementType");
}

// TRIADA_TEST_LATE_ABORT=R:S (tests only): rank R of a writer's communicator comes S
// seconds late to an abort's clean-up, as a rank of a loaded machine may when the scheduler
// runs the others first (tests/cli/test_io_stress.sh).
void late_for_test(int rank) noexcept {
  const char* v = std::getenv("TRIADA_TEST_LATE_ABORT");
  if (!v) return;
  char* end = nullptr;
  const long r = std::strtol(v, &end, 10);
  if (end == v || *end != ':' || r != rank) return;
  const long s = std::strtol(end + 1, nullptr, 10);
  if (s > 0 && s < 600) std::this_thread::sleep_for(std::chrono::seconds(s));
}

std::uint64_t element_bytes(ElementType t) {
  switch (t) {
    case ElementType::int32:
    case ElementType::float32:
    case ElementType::uint32:
      return 4;
    case ElementType::float64:
    case ElementType::complex64:
      return 8;
    case ElementType::complex128:
      return 16;
  }
  return 16;
}

// Why an HDF5 call that writes `path` failed, in plain words: errno's reason where HDF5's
// message holds one (its driver's failed write), else a full disk if the file system says so
// (MPI-IO's errors name no errno), else "<doing> (<HDF5's message>)".
std::string write_failure(const std::string& path, const std::string& detail,
                          const std::string& doing = "write failed") {
  if (const int err = h5::errno_in(detail)) return io_failure(path, err);
  const fs::path dir =
      fs::path(path).parent_path().empty() ? fs::path(".") : fs::path(path).parent_path();
  if (free_bytes(dir.string()) == 0) return io_failure(path, ENOSPC);
  return path + ": " + doing + (detail.empty() ? "" : " (" + detail + ")");
}

// "x.h5: No space left on device (the file needs at least N MiB, M MiB available)".
std::string no_space(const std::string& shown, std::uint64_t needs, std::uint64_t available) {
  return shown + ": No space left on device (the file needs at least " +
         format_bytes(static_cast<double>(needs)) + ", " +
         format_bytes(static_cast<double>(available)) + " available)";
}

// Reserves the blocks of [offset, offset + bytes) of `path`, so that writing them cannot
// meet a full disk; file systems without fallocate are checked after the writes instead.
// `needs` and `available`: the file's figures for the message, measured before anything
// was taken (what a failed fallocate took is released when the temporary is removed).
void reserve_blocks(const std::string& shown, const std::string& path, std::uint64_t offset,
                    std::uint64_t bytes, std::uint64_t needs, std::uint64_t available) {
  const int fd = ::open(path.c_str(), O_WRONLY | O_CLOEXEC);
  if (fd < 0) throw input_error(io_failure(shown, errno));
  const int err = reserve_file_blocks(fd, offset, bytes);
  ::close(fd);
  if (err == 0 || err == EOPNOTSUPP) return;
  throw input_error(err == ENOSPC ? no_space(shown, needs, available) : io_failure(shown, err));
}

// Under --force, unlinks an existing dataset at `dset` so that a new one takes its name;
// anything else there (a group and what it holds) is refused, never deleted.
void replace_dataset_link(hid_t file, const std::string& dset, const std::string& name) {
  if (!object_exists(file, dset, H5P_DEFAULT)) return;
  h5::Object obj(H5Oopen(file, dset.c_str(), H5P_DEFAULT));
  if (!obj.valid() || H5Iget_type(obj.get()) != H5I_DATASET)
    throw input_error(name + ": exists and is not a dataset; " +
                      (overwrite_option().empty()
                           ? std::string("only a dataset is replaced")
                           : overwrite_option() + " replaces only a dataset"));
  obj.reset();
  if (H5Ldelete(file, dset.c_str(), H5P_DEFAULT) < 0)
    throw input_error(name + ": cannot replace (" + h5::last_error_message() + ")");
}

// One dataset of a writer's file: what it holds and, once created, where its data lies.
struct WriterPart {
  std::string dataset;  // rooted path
  ext3 shape{};
  ElementType type = ElementType::float64;
  std::uint64_t offset = 0;  // rank 0's: file offset of the data
  h5::Dataset dset;          // the parallel handle, open between creation and finish()
  std::uint64_t bytes(const std::string& shown) const {
    return checked_mul(checked_product<std::uint64_t>(shape, shown + ": output size"),
                       element_bytes(type), shown + ": output size");
  }
};

// Creates one contiguous dataset with its space allocated and returns the file offset
// of its data.
std::uint64_t create_dataset(hid_t file, const std::string& shown, const WriterPart& part) {
  h5::PropList lcpl(CHECK_H5(H5Pcreate(H5P_LINK_CREATE)));
  CHECK_H5(H5Pset_create_intermediate_group(lcpl.get(), 1));
  h5::PropList dcpl(CHECK_H5(H5Pcreate(H5P_DATASET_CREATE)));
  CHECK_H5(H5Pset_layout(dcpl.get(), H5D_CONTIGUOUS));
  CHECK_H5(H5Pset_alloc_time(dcpl.get(), H5D_ALLOC_TIME_EARLY));
  // Every element is written by some brick; don't write a fill value first.
  CHECK_H5(H5Pset_fill_time(dcpl.get(), H5D_FILL_TIME_NEVER));
  const auto dims = to_h(part.shape);
  h5::Dataspace space(CHECK_H5(H5Screate_simple(3, dims.data(), nullptr)));
  h5::Datatype ft = file_type(part.type);
  h5::Dataset d(H5Dcreate2(file, part.dataset.c_str(), ft.get(), space.get(), lcpl.get(),
                           dcpl.get(), H5P_DEFAULT));
  if (!d.valid())
    throw input_error(shown + ":" + part.dataset + ": cannot create dataset (" +
                      h5::last_error_message() + ")");
  const haddr_t addr = H5Dget_offset(d.get());
  H5Eclear2(H5E_DEFAULT);
  try {
    d.close();
  } catch (const hdf5_error& e) {
    throw input_error(write_failure(shown, e.reason()));
  }
  return addr == HADDR_UNDEF ? 0 : static_cast<std::uint64_t>(addr);
}

// Under --force an existing HDF5 target is copied and updated: its other objects survive.
bool updates_existing(const OutputTarget& target) {
  return target.kind == TargetKind::regular && H5Fis_hdf5(target.resolved.c_str()) > 0;
}

// The bytes a copy of an updated target takes (its size: holes may not stay holes), else 0.
std::uint64_t copied_bytes(const OutputTarget& target) {
  std::error_code ec;
  const auto size = updates_existing(target) ? fs::file_size(target.resolved, ec) : 0;
  return ec ? 0 : static_cast<std::uint64_t>(size);
}

// Serial (rank 0) creation: copies an existing HDF5 target under --force so that only the
// named datasets are replaced, creates them with their space allocated, and records the
// file offset of each one's data.
void create_serially(const std::string& shown, const OutputTarget& target, const std::string& tmp,
                     std::vector<WriterPart>& parts) {
  h5::PropList fapl(CHECK_H5(H5Pcreate(H5P_FILE_ACCESS)));
  best_effort_locking(fapl.get());
  h5::WrittenFile file;
  if (updates_existing(target)) {
    copy_file_contents(target.resolved, tmp, shown);
    file = h5::WrittenFile(H5Fopen(tmp.c_str(), H5F_ACC_RDWR, fapl.get()));
    if (!file.valid())
      throw input_error(write_failure(shown, h5::last_error_message(), "cannot open"));
    for (const WriterPart& p : parts)
      replace_dataset_link(file.get(), p.dataset, shown + ":" + p.dataset);
  } else {
    file = h5::WrittenFile(H5Fcreate(tmp.c_str(), H5F_ACC_TRUNC, H5P_DEFAULT, fapl.get()));
    if (!file.valid())
      throw input_error(write_failure(shown, h5::last_error_message(), "cannot create " + tmp));
  }
  for (WriterPart& p : parts) p.offset = create_dataset(file.get(), shown, p);
  try {
    file.close();
  } catch (const hdf5_error& e) {
    throw input_error(write_failure(shown, e.reason()));
  }
}

struct PendingAttribute {
  std::string object;  // where it goes: "" the first dataset, else a path in the file
  std::string name;
  enum { text, ints, integer, real } kind = text;  // integer, real, text: scalars
  std::string s;
  std::vector<index_t> v;
  double d = 0;
};

void write_attribute(hid_t dset, const PendingAttribute& a) {
  if (CHECK_H5(H5Aexists(dset, a.name.c_str())) > 0) CHECK_H5(H5Adelete(dset, a.name.c_str()));
  h5::Datatype t;
  h5::Dataspace s;
  const void* buf = nullptr;
  const char* p = a.s.c_str();
  const index_t zero = 0;
  if (a.kind == PendingAttribute::text) {
    // Variable-length UTF-8: h5py reads it as str (fixed-length would come back as bytes).
    t = h5::Datatype(CHECK_H5(H5Tcopy(H5T_C_S1)));
    CHECK_H5(H5Tset_size(t.get(), H5T_VARIABLE));
    CHECK_H5(H5Tset_cset(t.get(), H5T_CSET_UTF8));
    s = h5::Dataspace(CHECK_H5(H5Screate(H5S_SCALAR)));
    buf = &p;
  } else if (a.kind == PendingAttribute::ints) {
    t = h5::Datatype(CHECK_H5(H5Tcopy(H5T_STD_I64LE)));
    const hsize_t n = a.v.size();
    s = h5::Dataspace(CHECK_H5(H5Screate_simple(1, &n, nullptr)));
    buf = a.v.empty() ? static_cast<const void*>(&zero) : static_cast<const void*>(a.v.data());
  } else if (a.kind == PendingAttribute::integer) {
    t = h5::Datatype(CHECK_H5(H5Tcopy(H5T_STD_I64LE)));
    s = h5::Dataspace(CHECK_H5(H5Screate(H5S_SCALAR)));
    buf = a.v.data();
  } else {
    t = h5::Datatype(CHECK_H5(H5Tcopy(H5T_IEEE_F64LE)));
    s = h5::Dataspace(CHECK_H5(H5Screate(H5S_SCALAR)));
    buf = &a.d;
  }
  h5::Attribute at(
      CHECK_H5(H5Acreate2(dset, a.name.c_str(), t.get(), s.get(), H5P_DEFAULT, H5P_DEFAULT)));
  CHECK_H5(H5Awrite(at.get(), t.get(), buf));
  at.close();
}

}  // namespace

struct TensorWriter::Impl {
  mpi::Comm comm;  // private duplicate: our collectives never match the caller's
  int rank = 0;
  std::string file_name;  // the target file as given
  OutputTarget where;     // rank 0's probe of file_name
  std::vector<WriterPart> parts;
  bool force = false;
  std::string tmp;
  h5::File file;  // the parallel handle, open between construction and finish()
  std::vector<PendingAttribute> attributes;
  std::string attribute_object;  // attributes_on()
  WriterState state = WriterState::unopened;

  ~Impl() { abort(); }

  std::string shown(std::size_t i = 0) const { return file_name + ":" + parts[i].dataset; }

  void remove_temporary() noexcept {
    std::error_code ec;
    fs::remove(tmp, ec);
    unregister_temporary(tmp);
  }

  void abort() noexcept {
    if (state != WriterState::open && state != WriterState::finished) return;
    const bool was_open = state == WriterState::open;
    state = WriterState::aborted;
    h5::QuietErrors quiet;
    late_for_test(rank);
    // Alone: this rank unwinds a failure of its own, not an agreed one. Its peers never come
    // to a collective close (they may wait in another collective); MPI_Abort in the main
    // ends them. Otherwise every rank aborts (an agreed error, or abort() called by all):
    // they close together, each when it gets here, however late. No timeout decides it: on
    // a loaded machine a peer may come seconds later, and a rank that stopped waiting for it
    // left the file to H5close at exit, whose collectives then met the wrong ones (a crash).
    const bool alone = std::uncaught_exceptions() > 0 && !mpi::unwinding_agreed_error(comm.get());
    if (!was_open) {  // nothing parallel left open; rank 0 removes the file
      if (rank == 0 || alone) remove_temporary();
      unregister_temporary(tmp);
      return;
    }
    if (!alone) {
      for (WriterPart& p : parts) p.dset.reset();  // collective closes with nothing to flush
      file.reset();
      MPI_Barrier(comm.get());
      if (rank == 0) remove_temporary();
      unregister_temporary(tmp);
    } else {
      // Leave the handles to MPI_Abort (the main) and remove the temporary file from this
      // rank (any rank can unlink it).
      for (WriterPart& p : parts) p.dset.release();
      file.release();
      remove_temporary();
    }
  }

  // Where the data ends in the file: no byte of it may be missing from the temporary.
  std::uint64_t data_end() const {
    std::uint64_t end = 0;
    for (const WriterPart& p : parts) end = std::max(end, p.offset + p.bytes(file_name));
    return end;
  }

  // Where the first dataset's data begins: the datasets and what lies between them are
  // reserved at once.
  std::uint64_t data_start() const {
    std::uint64_t start = data_end();
    for (const WriterPart& p : parts)
      if (p.bytes(file_name) > 0) start = std::min(start, p.offset);
    return start;
  }

  void require(WriterState s, const char* who) const {
    if (state != s)
      throw internal_error(std::string("TensorWriter::") + who + ": writer is not " +
                           (s == WriterState::open ? "open" : "finished"));
  }

  // Rank 0 creates the file under its temporary name with every dataset, their blocks
  // reserved on disk.
  void create_on_rank0() {
    try {
      // Checked before anything is taken: the copy of an updated target and every dataset.
      const std::uint64_t available = free_bytes(fs::path(tmp).parent_path().string());
      std::uint64_t needs = copied_bytes(where);
      for (const WriterPart& p : parts)
        needs = checked_add(needs, p.bytes(file_name), file_name + ": output size");
      if (space_checked_ahead() && needs > available)
        throw input_error(no_space(file_name, needs, available));
      create_serially(file_name, where, tmp, parts);
      const std::uint64_t start = data_start();
      reserve_blocks(file_name, tmp, start, data_end() - start, needs, available);
    } catch (...) {
      remove_temporary();
      throw;
    }
  }

  void create(MPI_Comm c) {
    // Rank 0 names the temporary and every rank registers it before rank 0 creates it:
    // whichever rank a SIGKILL takes, the ranks Open MPI then terminates remove it.
    std::string named;
    mpi::collectively(c, [&] {
      if (rank != 0) return;
      where = probe_output(file_name, force, false);
      named = temporary_name_for(where.resolved);
    });
    tmp = mpi::bcast_string(c, named, 0);
    register_temporary(tmp);
    mpi::barrier(c);  // rank 0 creates the file only once every rank can remove it
    try {
      mpi::collectively(c, [&] {
        if (rank == 0) create_on_rank0();
      });
    } catch (...) {
      unregister_temporary(tmp);
      throw;
    }
    state = WriterState::open;  // from here on, failure removes the temporary file
    mpi::collectively(c, [&] { open_parallel(c); });
  }

  void open_parallel(MPI_Comm c) {
    h5::PropList fapl = mpio_access(c);
    file = h5::File(H5Fopen(tmp.c_str(), H5F_ACC_RDWR, fapl.get()));
    if (!file.valid())
      throw input_error(file_name + ": cannot open " + tmp + " in parallel (" +
                        h5::last_error_message() + ")");
    for (std::size_t i = 0; i < parts.size(); ++i) {
      parts[i].dset = h5::Dataset(H5Dopen2(file.get(), parts[i].dataset.c_str(), H5P_DEFAULT));
      if (!parts[i].dset.valid())
        throw input_error(shown(i) + ": cannot open the new dataset (" + h5::last_error_message() +
                          ")");
    }
  }

  template <class T>
  static bool holds(ElementType type) {
    if constexpr (is_complex_v<T>)
      return is_complex(type);
    else if constexpr (std::is_same_v<T, std::uint32_t>)
      return type == ElementType::uint32;
    else
      return !is_complex(type) && type != ElementType::uint32;
  }

  template <class T>
  void write(std::size_t index, const Brick& brick, const std::vector<T>& values) {
    require(WriterState::open, "write_brick");
    if (index >= parts.size()) throw internal_error("TensorWriter::write_brick: no such dataset");
    WriterPart& part = parts[index];
    if (!holds<T>(part.type))
      throw internal_error("TensorWriter::write_brick: values of the wrong kind for a " +
                           to_string(part.type) + " dataset");
    check_brick_inside(brick, part.shape, "TensorWriter::write_brick");
    if (static_cast<index_t>(values.size()) != brick.count())
      throw internal_error("TensorWriter::write_brick: values do not match the brick size");
    h5::QuietErrors quiet;
    mpi::collectively(comm.get(), [&] {
      h5::Dataspace fspace = file_selection(part.dset.get(), brick);
      h5::Dataspace mspace = memory_selection(brick.count());
      h5::PropList dxpl = collective_transfer();
      h5::Datatype mt = memory_type<T>(part);
      const T dummy{};
      const void* buf = values.empty() ? static_cast<const void*>(&dummy)
                                       : static_cast<const void*>(values.data());
      if (H5Dwrite(part.dset.get(), mt.get(), mspace.get(), fspace.get(), dxpl.get(), buf) < 0)
        throw input_error(write_failure(file_name, h5::last_error_message()));
    });
  }

  // The values' type in memory. When it is the file's own type (complex128 on a
  // little-endian machine) the dataset's type is passed, so HDF5 sees no conversion and
  // needs no conversion buffer as large as the brick.
  template <class T>
  static h5::Datatype memory_type(const WriterPart& part) {
    if constexpr (is_complex_v<T>) {
      h5::Datatype mt = complex_memtype();
      h5::Datatype ft(CHECK_H5(H5Dget_type(part.dset.get())));
      return CHECK_H5(H5Tequal(mt.get(), ft.get())) > 0 ? std::move(ft) : std::move(mt);
    } else if constexpr (std::is_same_v<T, std::uint32_t>) {
      return h5::Datatype(CHECK_H5(H5Tcopy(H5T_NATIVE_UINT32)));
    } else {
      return h5::Datatype(CHECK_H5(H5Tcopy(H5T_NATIVE_DOUBLE)));
    }
  }

  // Rank 0, serially: the attributes, each on its object.
  void write_attributes() const {
    h5::PropList fapl(CHECK_H5(H5Pcreate(H5P_FILE_ACCESS)));
    best_effort_locking(fapl.get());
    h5::WrittenFile f(CHECK_H5(H5Fopen(tmp.c_str(), H5F_ACC_RDWR, fapl.get())));
    for (const auto& a : attributes) {
      const std::string& path = a.object.empty() ? parts[0].dataset : a.object;
      h5::Object o(CHECK_H5(H5Oopen(f.get(), path.c_str(), H5P_DEFAULT)));
      write_attribute(o.get(), a);
      o.close();
    }
    f.close();
  }

  // Closes the parallel file, adds the attributes (rank 0, serial), fsyncs and checks the
  // size: afterwards the temporary holds every byte, on disk.
  void finish() {
    require(WriterState::open, "commit");
    h5::QuietErrors quiet;
    const MPI_Comm c = comm.get();
    mpi::collectively(c, [&] {
      // All closed whatever the first says: nothing parallel may outlive this call.
      herr_t closed = 0;
      for (WriterPart& p : parts) closed = std::min(closed, H5Dclose(p.dset.release()));
      closed = std::min(closed, H5Fclose(file.release()));
      if (closed < 0) throw input_error(write_failure(file_name, h5::last_error_message()));
    });
    state = WriterState::finished;
    mpi::collectively(c, [&] {
      if (rank != 0) return;
      try {
        write_attributes();
      } catch (const hdf5_error& e) {
        throw input_error(write_failure(file_name, e.reason()));
      }
      std::error_code ec;
      const auto size = fs::file_size(tmp, ec);
      if (ec || size < data_end())
        throw input_error(file_name + ": written file is shorter than its data (" +
                          std::to_string(ec ? 0 : size) + " bytes); not published");
      sync_file(tmp);
    });
  }

  void publish() {
    require(WriterState::finished, "commit");
    mpi::collectively(comm.get(), [&] {
      if (rank == 0) publish_file(tmp, where.resolved, force);
    });
    unregister_temporary(tmp);
    state = WriterState::committed;
  }

  void start(MPI_Comm c, bool force_replace) {
    MPI_Comm dup = MPI_COMM_NULL;
    CHECK_MPI(MPI_Comm_dup(c, &dup));
    comm = mpi::Comm::adopt(dup);
    rank = comm.rank();
    force = force_replace;
    for (const WriterPart& p : parts)
      for (index_t n : p.shape)
        if (n < 0) throw internal_error("TensorWriter: negative extent " + to_string(p.shape));
    create(comm.get());
  }
};

TensorWriter::TensorWriter(MPI_Comm comm, const DatasetRef& target, const ext3& shape,
                           bool is_complex_values, bool force)
    : TensorWriter(comm, target, shape,
                   is_complex_values ? ElementType::complex128 : ElementType::float64, force) {}

TensorWriter::TensorWriter(MPI_Comm comm, const DatasetRef& target, const ext3& shape,
                           ElementType type, bool force)
    : TensorWriter(comm, target.file, {{output_dataset_path(target), shape, type}}, force) {}

TensorWriter::TensorWriter(MPI_Comm comm, const std::string& file,
                           const std::vector<DatasetSpec>& datasets, bool force)
    : impl_(std::make_unique<Impl>()) {
  if (datasets.empty()) throw internal_error("TensorWriter: no dataset");
  h5::QuietErrors quiet;
  Impl& m = *impl_;
  m.file_name = file;
  for (const DatasetSpec& d : datasets) {
    WriterPart p;
    p.dataset = rooted(d.dataset);
    p.shape = d.shape;
    p.type = d.type;
    m.parts.push_back(std::move(p));
  }
  m.start(comm, force);
}

TensorWriter::~TensorWriter() = default;  // Impl's destructor aborts if not committed

void TensorWriter::write_brick(const Brick& brick, const std::vector<double>& values) {
  impl_->write(0, brick, values);
}
void TensorWriter::write_brick(const Brick& brick, const std::vector<cplx>& values) {
  impl_->write(0, brick, values);
}
void TensorWriter::write_brick(std::size_t index, const Brick& brick,
                               const std::vector<std::uint32_t>& values) {
  impl_->write(index, brick, values);
}

void TensorWriter::set_attribute(const std::string& name, const std::string& value) {
  impl_->attributes.push_back(
      {impl_->attribute_object, name, PendingAttribute::text, value, {}, 0});
}
void TensorWriter::set_attribute(const std::string& name, const std::vector<index_t>& value) {
  impl_->attributes.push_back(
      {impl_->attribute_object, name, PendingAttribute::ints, {}, value, 0});
}
void TensorWriter::set_attribute(const std::string& name, index_t value) {
  impl_->attributes.push_back(
      {impl_->attribute_object, name, PendingAttribute::integer, {}, {value}, 0});
}
void TensorWriter::set_attribute(const std::string& name, double value) {
  impl_->attributes.push_back(
      {impl_->attribute_object, name, PendingAttribute::real, {}, {}, value});
}
void TensorWriter::attributes_on(const std::string& object) {
  impl_->attribute_object = object;
}

std::uint64_t TensorWriter::data_offset(std::size_t index) const {
  return index < impl_->parts.size() ? impl_->parts[index].offset : 0;
}

void TensorWriter::finish() {
  impl_->finish();
}
void TensorWriter::publish() {
  impl_->publish();
}
void TensorWriter::commit() {
  impl_->finish();
  impl_->publish();
}

void TensorWriter::abort() noexcept {
  impl_->abort();
}

}  // namespace triada
