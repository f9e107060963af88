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

namespace {
herr_t collect_dataset(hid_t obj, const char* name, const H5O_info_t* info, void* data) {
  if (info->type != H5O_TYPE_DATASET) return 0;
  Dataset d(H5Dopen2(obj, name, H5P_DEFAULT));
  if (!d.valid()) return 0;  // e.g. an external link target missing: not a candidate
  Dataspace s(H5Dget_space(d.get()));
  const int rank = s.valid() ? H5Sget_simple_extent_ndims(s.get()) : -1;
  static_cast<std::vector<DatasetEntry>*>(data)->push_back({std::string("/") + name, rank});
  return 0;
}
}  // namespace

std::vector<DatasetEntry> list_datasets(hid_t loc) {
  std::vector<DatasetEntry> all;
  CHECK_H5(H5Ovisit2(loc, H5_INDEX_NAME, H5_ITER_INC, collect_dataset, &all, H5O_INFO_BASIC));
  return all;
}

}  // namespace triada::h5
