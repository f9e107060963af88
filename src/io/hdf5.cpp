#include "io/hdf5.hpp"

#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <set>

#include "io/input_file.hpp"
#include "io/output_files.hpp"

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

int errno_in(const std::string& hdf5_message) {
  const auto at = hdf5_message.find("errno = ");
  return at == std::string::npos ? 0 : std::max(0, std::atoi(hdf5_message.c_str() + at + 8));
}

void throw_hdf5_error(const char* call, const char* file, int line) {
  std::string msg = std::string("HDF5 call failed: ") + call + " at " + source_line(file, line);
  const std::string detail = last_error_message();
  if (!detail.empty()) msg += ": " + detail;
  H5Eclear2(H5E_DEFAULT);
  throw hdf5_error(msg, detail);
}

std::string plain_reason(const std::string& m) {
  if (m.empty()) return "HDF5 could not read it";
  const auto has = [&](const char* s) { return m.find(s) != std::string::npos; };
  if (has("checksum")) return "checksum mismatch: " + m;
  // Addresses past the end of file: the file was cut short or its metadata is broken.
  if (has("addr overflow") || has("eoa") || has("truncated"))
    return "truncated or corrupt file: " + m;
  return m;
}

File open_read_only(const std::string& path) {
  return File(H5Fopen(path.c_str(), H5F_ACC_RDONLY, H5P_DEFAULT));
}

namespace {

// The descriptor of file `id` if HDF5's default (sec2) driver holds it, else nullptr.
int* sec2_descriptor(hid_t id) {
  const PropList fapl(H5Fget_access_plist(id));
  void* handle = nullptr;
  if (!fapl.valid() || H5Pget_driver(fapl.get()) != H5FD_SEC2 ||
      H5Fget_vfd_handle(id, fapl.get(), &handle) < 0)
    return nullptr;
  return static_cast<int*>(handle);
}

// 0 if everything HDF5 may still write to file `id` (all of it lies below its end of
// allocation) has blocks on disk: reserved now, or, without fallocate, fitting the free
// space. Else the errno a write would meet.
int room_for_metadata(hid_t id, int fd) {
  haddr_t eoa = 0;
  if (H5Fget_eoa(id, &eoa) < 0) return 0;  // cannot tell: let the close find out
  const int err = reserve_file_blocks(fd, 0, eoa);
  if (err != EOPNOTSUPP) return err;
  struct stat st {};
  if (::fstat(fd, &st) != 0) return 0;
  const std::uint64_t held = static_cast<std::uint64_t>(st.st_blocks) * 512;
  return eoa > held && eoa - held > free_bytes(fd) ? ENOSPC : 0;
}

// Points descriptor `fd` at an anonymous memory file: what HDF5 writes there goes nowhere.
void divert_to_memory(int fd) {
  const int mem = ::memfd_create("triada-unwritten", MFD_CLOEXEC);
  if (mem < 0) return;
  ::dup2(mem, fd);
  ::close(mem);
}

}  // namespace

herr_t close_written_file(hid_t id) {
  int* fd = sec2_descriptor(id);
  const int err = fd ? room_for_metadata(id, *fd) : 0;
  if (err == 0) return H5Fclose(id);
  divert_to_memory(*fd);
  H5Fclose(id);
  H5Epush2(H5E_DEFAULT, __FILE__, __func__, __LINE__, H5E_ERR_CLS, H5E_FILE, H5E_WRITEERROR,
           "file write failed: errno = %d, error message = '%s'", err, std::strerror(err));
  return -1;
}

void close_library() noexcept {
  H5Eset_auto2(H5E_DEFAULT, nullptr, nullptr);
  H5close();
}

std::string library_version() {
  unsigned major = 0, minor = 0, release = 0;
  CHECK_H5(H5get_libversion(&major, &minor, &release));
  return std::to_string(major) + "." + std::to_string(minor) + "." + std::to_string(release);
}

QuietErrors::QuietErrors() noexcept {
  saved_ = H5Eget_auto2(H5E_DEFAULT, &func_, &data_) >= 0;
  H5Eset_auto2(H5E_DEFAULT, nullptr, nullptr);
}

QuietErrors::~QuietErrors() {
  if (saved_) H5Eset_auto2(H5E_DEFAULT, func_, data_);
}

namespace {

// H5Pset_elink_cb hook, called before HDF5 opens an external link's file: refuse a target
// that exists but is not a regular file, as given and beside the parent file (where HDF5
// looks too).
herr_t refuse_irregular_target(const char* parent_file, const char*, const char* child_file,
                               const char*, unsigned*, hid_t, void*) {
  std::string beside = parent_file;
  const auto slash = beside.rfind('/');
  beside = (slash == std::string::npos ? std::string() : beside.substr(0, slash + 1)) + child_file;
  for (const std::string& p : {std::string(child_file), beside}) {
    const std::string kind = non_regular_kind(p);
    if (!kind.empty()) {
      H5Epush2(H5E_DEFAULT, __FILE__, __func__, __LINE__, H5E_ERR_CLS, H5E_LINK, H5E_CANTOPENFILE,
               "external link target %s is not a regular file (%s)", p.c_str(), kind.c_str());
      return -1;
    }
  }
  return 0;
}

constexpr int kMaxDepth = 32;
constexpr std::size_t kMaxLinks = 100000;

struct Walk {
  std::vector<DatasetEntry> found;
  std::set<haddr_t> groups;  // entered already (hard-link cycles)
  std::size_t links = 0;
  hid_t lapl = H5P_DEFAULT;
};

void walk_group(hid_t group, const std::string& prefix, int depth, Walk& w);

// Why the last HDF5 call failed, never empty (an empty problem would read as none).
std::string failure() {
  const std::string m = last_error_message();
  return m.empty() ? "HDF5 could not read it" : m;
}

// One dataset (already open): its extent, rank and, if it cannot be read, why.
DatasetEntry describe_dataset(hid_t dset, const std::string& path) {
  DatasetEntry e;
  e.path = path;
  Dataspace s(H5Dget_space(dset));
  if (!s.valid()) {
    e.problem = failure();
    return e;
  }
  e.shape = describe_extent(s.get());
  if (H5Sget_simple_extent_type(s.get()) == H5S_SIMPLE)
    e.rank = H5Sget_simple_extent_ndims(s.get());
  return e;
}

void visit_hard(hid_t group, const std::string& path, haddr_t addr, int depth, Walk& w) {
  Object obj(H5Oopen_by_addr(group, addr));  // by address: the name is not parsed as a path
  if (!obj.valid()) {
    w.found.push_back({path, -1, "", "", failure()});
    return;
  }
  const H5I_type_t kind = H5Iget_type(obj.get());
  if (kind == H5I_DATASET) {
    w.found.push_back(describe_dataset(obj.get(), path));
  } else if (kind == H5I_GROUP && depth < kMaxDepth && w.groups.insert(addr).second) {
    walk_group(obj.get(), path + "/", depth + 1, w);
  }
}

// An external link: followed one hop; only a dataset there is a candidate.
void visit_external(hid_t group, const char* name, const std::string& path, const H5L_info_t& info,
                    Walk& w) {
  std::vector<char> val(info.u.val_size + 1, '\0');
  const char* file = nullptr;
  const char* obj_path = nullptr;
  if (H5Lget_val(group, name, val.data(), info.u.val_size, H5P_DEFAULT) < 0 ||
      H5Lunpack_elink_val(val.data(), info.u.val_size, nullptr, &file, &obj_path) < 0)
    return;
  Object obj(H5Oopen(group, name, w.lapl));
  if (!obj.valid() || H5Iget_type(obj.get()) != H5I_DATASET) return;  // dangling, or a group
  DatasetEntry e = describe_dataset(obj.get(), path);
  e.target = std::string(file) + ":" + obj_path;
  w.found.push_back(std::move(e));
}

struct GroupWalk {
  std::string prefix;
  int depth;
  Walk* walk;
};

herr_t on_link(hid_t group, const char* name, const H5L_info_t* info, void* data) {
  auto& g = *static_cast<GroupWalk*>(data);
  Walk& w = *g.walk;
  if (++w.links > kMaxLinks) return 1;  // stop: a corrupt index may not end
  const std::string path = g.prefix + name;
  try {
    if (info->type == H5L_TYPE_HARD)
      visit_hard(group, path, info->u.address, g.depth, w);
    else if (info->type == H5L_TYPE_EXTERNAL)
      visit_external(group, name, path, *info, w);
  } catch (const std::exception& e) {  // never through HDF5's C frames
    w.found.push_back({path, -1, "", "", e.what()});
  }
  H5Eclear2(H5E_DEFAULT);
  return 0;
}

void walk_group(hid_t group, const std::string& prefix, int depth, Walk& w) {
  GroupWalk g{prefix, depth, &w};
  hsize_t idx = 0;
  if (H5Literate(group, H5_INDEX_NAME, H5_ITER_INC, &idx, on_link, &g) < 0) {
    const std::string where = prefix.size() > 1 ? prefix.substr(0, prefix.size() - 1) : "/";
    w.found.push_back({where, -1, "", "", failure()});
    H5Eclear2(H5E_DEFAULT);
  }
}

}  // namespace

PropList input_link_access(hid_t cls) {
  PropList lapl(CHECK_H5(H5Pcreate(cls)));
  CHECK_H5(H5Pset_elink_cb(lapl.get(), refuse_irregular_target, nullptr));
  return lapl;
}

std::string describe_extent(hid_t space) {
  switch (H5Sget_simple_extent_type(space)) {
    case H5S_SCALAR:
      return "scalar";
    case H5S_NULL:
      return "empty (null dataspace)";
    case H5S_SIMPLE:
      return "rank " + std::to_string(H5Sget_simple_extent_ndims(space));
    default:
      return "unreadable dataspace";
  }
}

std::vector<DatasetEntry> list_datasets(hid_t loc) {
  Walk w;
  PropList lapl = input_link_access();
  w.lapl = lapl.get();
  H5O_info_t root;
  if (H5Oget_info2(loc, &root, H5O_INFO_BASIC) >= 0) w.groups.insert(root.addr);
  walk_group(loc, "/", 0, w);
  if (w.links > kMaxLinks)
    w.found.push_back({"/", -1, "", "", "more than 100000 links (a corrupt group index?)"});
  std::sort(w.found.begin(), w.found.end(),
            [](const DatasetEntry& a, const DatasetEntry& b) { return a.path < b.path; });
  return w.found;
}

}  // namespace triada::h5
