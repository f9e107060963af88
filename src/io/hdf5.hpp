#pragma once
// A thin RAII layer over the HDF5 C API (doc/design.md §10.7, §10.8): move-only handles that close
// their hid_t with the matching H5?close, CHECK_H5 that turns a failed call into
// triada::hdf5_error, and a guard that silences HDF5's own error printing so that our
// one-line messages are the only output.
#include <hdf5.h>

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "core/error.hpp"

namespace triada::h5 {

// The innermost message of HDF5's current error stack ("" if none).
std::string last_error_message();

// Throws hdf5_error naming the failed call and our source line, with HDF5's reason.
[[noreturn]] void throw_hdf5_error(const char* call, const char* file, int line);

// HDF5's message in plain words where it is cryptic (a truncated file, a checksum).
std::string plain_reason(const std::string& hdf5_message);

// Runs `body`; a failed HDF5 call in it becomes input_error "<name>: cannot read (<why>)".
// Use around everything that inspects or reads an input: a corrupt file is bad input.
template <class F>
decltype(auto) reading_input(const std::string& name, F&& body) {
  try {
    return body();
  } catch (const hdf5_error& e) {
    throw input_error(name + ": cannot read (" + plain_reason(e.reason()) + ")");
  }
}

// HDF5 calls report failure with a negative value (herr_t, hid_t, htri_t, ssize_t).
template <class T>
T checked(T value, const char* call, const char* file, int line) {
  if (value < 0) throw_hdf5_error(call, file, line);
  return value;
}

// Evaluates `call`, throws hdf5_error (with file, line and call) if it failed, and
// otherwise yields its value, so it also wraps calls that return ids.
#define CHECK_H5(call) ::triada::h5::checked((call), #call, __FILE__, __LINE__)

// Owns an hid_t and closes it with Close. Move-only; the destructor never throws.
template <herr_t (*Close)(hid_t)>
class Handle {
 public:
  Handle() = default;
  explicit Handle(hid_t id) : id_(id) {}
  ~Handle() { reset(); }
  Handle(const Handle&) = delete;
  Handle& operator=(const Handle&) = delete;
  Handle(Handle&& o) noexcept : id_(std::exchange(o.id_, H5I_INVALID_HID)) {}
  Handle& operator=(Handle&& o) noexcept {
    if (this != &o) {
      reset();
      id_ = std::exchange(o.id_, H5I_INVALID_HID);
    }
    return *this;
  }

  hid_t get() const { return id_; }
  bool valid() const { return id_ >= 0; }
  // Closes now and reports failure (use where a failed close means lost data, e.g.
  // H5Fclose flushing a file before it is renamed).
  void close() {
    if (!valid()) return;
    const hid_t id = std::exchange(id_, H5I_INVALID_HID);
    checked(Close(id), "H5?close (handle)", __FILE__, __LINE__);
  }
  // Gives up ownership without closing (for a rank that must not enter a collective close).
  hid_t release() noexcept { return std::exchange(id_, H5I_INVALID_HID); }
  // Closes quietly, ignoring errors.
  void reset() noexcept {
    if (valid()) Close(std::exchange(id_, H5I_INVALID_HID));
  }

 private:
  hid_t id_ = H5I_INVALID_HID;
};

using File = Handle<H5Fclose>;
// Closes a file written through HDF5's default (sec2) driver without letting the close
// fail: HDF5 1.10 frees a file whose close failed (its metadata met a full disk) yet keeps
// its id, no later flush of it works, and H5close crashes on it. So the blocks below the
// file's end of allocation, where all its unwritten metadata lies, are reserved first; if
// they cannot be had, the metadata goes to an anonymous memory file instead, the close
// completes, and a negative return leaves "errno = N" on HDF5's error stack (errno_in).
herr_t close_written_file(hid_t id);
using WrittenFile = Handle<close_written_file>;
using Group = Handle<H5Gclose>;
using Dataset = Handle<H5Dclose>;
using Dataspace = Handle<H5Sclose>;
using Datatype = Handle<H5Tclose>;
using PropList = Handle<H5Pclose>;
using Attribute = Handle<H5Aclose>;
using Object = Handle<H5Oclose>;

// Switches off HDF5's automatic error printing for its lifetime and restores the
// previous handler afterwards. Never throws.
class QuietErrors {
 public:
  QuietErrors() noexcept;
  ~QuietErrors();
  QuietErrors(const QuietErrors&) = delete;
  QuietErrors& operator=(const QuietErrors&) = delete;

 private:
  H5E_auto2_t func_ = nullptr;
  void* data_ = nullptr;
  bool saved_ = false;
};

// A link access property list for opening inputs: an external link whose target file
// exists but is not a regular file is refused (opening a FIFO would block forever).
// `cls`: H5P_LINK_ACCESS, or H5P_DATASET_ACCESS for H5Dopen2.
PropList input_link_access(hid_t cls = H5P_LINK_ACCESS);

// The datasets of an input, found without visiting more than needed: links are iterated
// group by group (H5Literate), a group is entered once (hard-link cycles) and at most 32
// deep, soft links are skipped (aliases of objects found by their hard path), an external
// link is followed one hop to a dataset (never into groups), and a dangling one is skipped.
// `problem` says why an object behind a hard link could not be read (it might have been a
// candidate). Paths start with "/", in name order.
struct DatasetEntry {
  std::string path;
  int rank = -1;        // -1: not a simple dataspace, or unreadable
  std::string shape;    // "rank 2", "scalar", "empty (null dataspace)"
  std::string target;   // "other.h5:/y" for an external link, else ""
  std::string problem;  // non-empty: could not be read (HDF5's reason)
};
std::vector<DatasetEntry> list_datasets(hid_t loc);

// Opens `path` read-only with the default properties; an invalid handle if HDF5 cannot
// (last_error_message() says why). Inputs are opened by the reader (io/tensor_io.hpp).
File open_read_only(const std::string& path);

// Closes the HDF5 library now, quietly. HDF5 closes what is still open at exit, after
// MPI_Finalize: a parallel file left open by a failure would then call MPI and crash.
void close_library() noexcept;

// The errno a message of HDF5's names ("errno = 28" when its driver's write failed), or 0.
int errno_in(const std::string& hdf5_message);

// The HDF5 library this program runs with (H5get_libversion), e.g. "1.10.8".
std::string library_version();

// "rank N", "scalar" or "empty (null dataspace)" for a dataspace.
std::string describe_extent(hid_t space);

}  // namespace triada::h5
