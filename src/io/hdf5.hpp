#pragma once
// A thin RAII layer over the HDF5 C API (STYLE.md #7, #8): move-only handles that close
// their hid_t with the matching H5?close, CHECK_H5 that turns a failed call into
// triada::hdf5_error, and a guard that silences HDF5's own error printing so that our
// one-line messages are the only output.
#include <hdf5.h>

#include <string>
#include <utility>
#include <vector>

#include "core/error.hpp"

namespace triada::h5 {

// The innermost message of HDF5's current error stack ("" if none).
std::string last_error_message();

[[noreturn]] void throw_hdf5_error(const char* call, const char* file, int line);

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

// Every dataset below `loc` (a file or group) with its rank (-1 if unreadable), in name
// order (H5Ovisit's default); paths start with "/".
struct DatasetEntry {
  std::string path;
  int rank;
};
std::vector<DatasetEntry> list_datasets(hid_t loc);

}  // namespace triada::h5
