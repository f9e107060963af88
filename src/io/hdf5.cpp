#include "io/hdf5.hpp"

namespace triada::h5 {

namespace {
// H5Ewalk2 callback: with H5E_WALK_UPWARD the first entry is the most specific one
// (where the error was detected), which usually says the most (e.g. errno text).
herr_t keep_first(unsigned n, const H5E_error2_t* err, void* data) {
  if (n == 0 && err->desc) *static_cast<std::string*>(data) = err->desc;
  return 0;
}
}  // namespace

std::string last_error_message() {
  std::string msg;
  H5Ewalk2(H5E_DEFAULT, H5E_WALK_UPWARD, keep_first, &msg);
  return msg;
}

void throw_hdf5_error(const char* call, const char* file, int line) {
  std::string msg =
      std::string("HDF5 call failed: ") + call + " at " + file + ":" + std::to_string(line);
  const std::string detail = last_error_message();
  if (!detail.empty()) msg += ": " + detail;
  H5Eclear2(H5E_DEFAULT);
  throw hdf5_error(msg);
}

QuietErrors::QuietErrors() noexcept {
  saved_ = H5Eget_auto2(H5E_DEFAULT, &func_, &data_) >= 0;
  H5Eset_auto2(H5E_DEFAULT, nullptr, nullptr);
}

QuietErrors::~QuietErrors() {
  if (saved_) H5Eset_auto2(H5E_DEFAULT, func_, data_);
}

}  // namespace triada::h5
