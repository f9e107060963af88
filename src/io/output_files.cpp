#include "io/output_files.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <iostream>
#include <limits>
#include <vector>

#include "core/error.hpp"
#include "core/signal_cleanup.hpp"

namespace triada {

namespace fs = std::filesystem;

std::string io_failure(const std::string& path, int err) {
  return path + ": " + std::strerror(err);
}

namespace {
// What statvfs or fstatvfs (returning `rc`) said is free for this process.
std::uint64_t free_of(int rc, const struct statvfs& v) {
  if (rc != 0 || v.f_frsize == 0) return std::numeric_limits<std::uint64_t>::max();
  const std::uint64_t blocks = ::geteuid() == 0 ? v.f_bfree : v.f_bavail;
  return blocks * static_cast<std::uint64_t>(v.f_frsize);
}
}  // namespace

std::uint64_t free_bytes(const std::string& path) {
  struct statvfs v {};
  const int rc = ::statvfs(path.empty() ? "." : path.c_str(), &v);
  return free_of(rc, v);
}

std::uint64_t free_bytes(int fd) {
  struct statvfs v {};
  const int rc = ::fstatvfs(fd, &v);
  return free_of(rc, v);
}

bool space_checked_ahead() {
  const char* e = std::getenv("TRIADA_NO_FALLOCATE");
  return !(e && std::string(e) == "1");
}

int reserve_file_blocks(int fd, std::uint64_t offset, std::uint64_t bytes) {
  if (!space_checked_ahead()) return EOPNOTSUPP;
  if (bytes == 0) return 0;
  const int rc =
      ::fallocate(fd, FALLOC_FL_KEEP_SIZE, static_cast<off_t>(offset), static_cast<off_t>(bytes));
  return rc == 0 ? 0 : errno == ENOSYS ? EOPNOTSUPP : errno;
}

namespace {

// Writes all of [p, p + left) to `fd`; false with errno set on failure.
bool write_all(int fd, const char* p, size_t left) {
  while (left > 0) {
    const ssize_t n = ::write(fd, p, left);
    if (n < 0) {
      if (errno == EINTR) continue;
      return false;
    }
    p += n;
    left -= static_cast<size_t>(n);
  }
  return true;
}

bool write_all(int fd, const std::string& text) {
  return write_all(fd, text.data(), text.size());
}

// Copies what is left of `in` to `out`; 0, or the errno that stopped it. The kernel copies
// (copy_file_range) where it can; read and write do the rest.
int copy_descriptor(int in, int out) {
  bool kernel = true;
  std::vector<char> buf;
  for (;;) {
    ssize_t n = -1;
    if (kernel) {
      n = ::copy_file_range(in, nullptr, out, nullptr, std::size_t{1} << 30, 0);
      if (n < 0 && (errno == ENOSYS || errno == EXDEV || errno == EINVAL || errno == EOPNOTSUPP)) {
        kernel = false;  // nothing was copied by the failed call: go on by hand
        buf.resize(std::size_t{1} << 20);
        continue;
      }
    } else {
      n = ::read(in, buf.data(), buf.size());
      if (n > 0 && !write_all(out, buf.data(), static_cast<std::size_t>(n))) return errno;
    }
    if (n == 0) return 0;
    if (n < 0 && errno != EINTR) return errno;
  }
}

}  // namespace

void copy_file_contents(const std::string& from, const std::string& to, const std::string& shown) {
  const int in = ::open(from.c_str(), O_RDONLY | O_CLOEXEC);
  if (in < 0) throw input_error(io_failure(shown, errno));
  struct stat st {};
  int err = ::fstat(in, &st) == 0 ? 0 : errno;
  const int out =
      err ? -1 : ::open(to.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, st.st_mode & 07777);
  if (!err && out < 0) err = errno;
  if (!err) err = copy_descriptor(in, out);
  if (!err && ::fchmod(out, st.st_mode & 07777) != 0) err = errno;
  if (out >= 0 && ::close(out) != 0 && !err) err = errno;
  ::close(in);
  if (err) throw input_error(io_failure(shown, err));
}

std::string temporary_name_for(const std::string& target) {
  const fs::path p(target);
  const std::string base = "." + p.filename().string() + ".tmp-" + std::to_string(::getpid());
  return (p.parent_path() / base).string();
}

// ---------------------------------------------------------------------------------------
// Temporaries removed on a fatal signal (core/signal_cleanup.hpp: the programs install the
// handler; the Python module never replaces a handler of the user's).

void register_temporary(const std::string& path) {
  signal_cleanup::add(path);
}

void unregister_temporary(const std::string& path) {
  signal_cleanup::remove(path);
}

// ---------------------------------------------------------------------------------------
// Probing

namespace {

std::string kind_name(mode_t m) {
  if (S_ISDIR(m)) return "a directory";
  if (S_ISFIFO(m)) return "a FIFO";
  if (S_ISCHR(m)) return "a character device";
  if (S_ISBLK(m)) return "a block device";
  if (S_ISSOCK(m)) return "a socket";
  return "not a regular file";
}

// Creates and removes the very temporary name the run will use: proves the directory
// takes new files and the name is not too long.
void probe_create(const std::string& shown, const std::string& resolved) {
  const std::string tmp = temporary_name_for(resolved);
  int fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_EXCL, 0600);
  if (fd < 0 && errno == EEXIST) {  // left by a killed run of the same pid
    ::unlink(tmp.c_str());
    fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_EXCL, 0600);
  }
  if (fd < 0) {
    const int err = errno;
    throw input_error(shown + ": cannot create a file in " +
                      fs::path(resolved).parent_path().string() + " (" + std::strerror(err) + ")");
  }
  ::close(fd);
  ::unlink(tmp.c_str());
}

}  // namespace

namespace {

// "-", /dev/stdout, /dev/stderr, /dev/fd/N and /proc/self/fd/N name a descriptor this
// process already has: write to it, never to what it happens to point at. -1 otherwise.
int named_descriptor(const std::string& path) {
  if (path == "-" || path == "/dev/stdout") return STDOUT_FILENO;
  if (path == "/dev/stderr") return STDERR_FILENO;
  for (const std::string prefix : {"/dev/fd/", "/proc/self/fd/"})
    if (path.rfind(prefix, 0) == 0) {
      const std::string n = path.substr(prefix.size());
      if (!n.empty() && n.size() < 6 && n.find_first_not_of("0123456789") == std::string::npos)
        return std::stoi(n);
    }
  return -1;
}

}  // namespace

namespace {
std::string& overwrite_option_name() {
  static std::string name;
  return name;
}
}  // namespace

void set_overwrite_option(const std::string& name) {
  overwrite_option_name() = name;
}

const std::string& overwrite_option() {
  return overwrite_option_name();
}

std::string overwrite_hint() {
  const std::string& name = overwrite_option();
  return name.empty() ? " (not overwritten)" : " (use " + name + " to overwrite)";
}

OutputTarget probe_output(const std::string& path, bool force, bool special_ok) {
  OutputTarget t;
  t.path = path;
  if (path.empty()) throw config_error("empty output file name");
  if (const int fd = named_descriptor(path); fd >= 0) {
    if (!special_ok) throw input_error(path + ": a descriptor cannot hold an HDF5 file");
    if (::fcntl(fd, F_GETFD) < 0)
      throw input_error(path + ": descriptor " + std::to_string(fd) + " is not open");
    t.resolved = std::to_string(fd);
    t.kind = TargetKind::standard;
    return t;
  }
  struct stat link {};
  if (::lstat(path.c_str(), &link) != 0) {
    const int err = errno;
    if (err != ENOENT) throw input_error(io_failure(path, err));
    fs::path dir = fs::path(path).parent_path();
    if (dir.empty()) dir = ".";
    struct stat ds {};
    if (::stat(dir.c_str(), &ds) != 0)
      throw input_error(path + ": directory " + dir.string() + " does not exist");
    if (!S_ISDIR(ds.st_mode)) throw input_error(path + ": " + dir.string() + " is not a directory");
    t.resolved = path;
    t.kind = TargetKind::absent;
    probe_create(path, path);
    return t;
  }
  struct stat st {};
  const bool dangling = ::stat(path.c_str(), &st) != 0;
  if (dangling) st = link;
  // Writing into a FIFO or a device replaces nothing: no --force needed, never renamed.
  if (S_ISFIFO(st.st_mode) || S_ISCHR(st.st_mode)) {
    if (!special_ok)
      throw input_error(path + ": " + kind_name(st.st_mode) + " cannot hold an HDF5 file");
    t.resolved = path;
    t.kind = TargetKind::special;
    return t;
  }
  if (!S_ISREG(st.st_mode) && !dangling) throw input_error(path + ": is " + kind_name(st.st_mode));
  if (!force)
    throw input_error(path + (dangling ? ": exists (a dangling symbolic link)" : ": exists") +
                      overwrite_hint());
  // Write where a link points, so the link (and its other users) stay intact; --force on
  // a dangling link replaces the link.
  std::error_code ec;
  t.resolved = dangling ? path : fs::canonical(path, ec).string();
  if (ec) t.resolved = path;
  t.kind = TargetKind::regular;
  probe_create(path, t.resolved);
  return t;
}

void check_distinct(const std::vector<RunFile>& files) {
  struct Id {
    bool exists = false;
    dev_t dev = 0;
    ino_t ino = 0;
    std::string canon;
  };
  std::vector<Id> ids(files.size());
  for (size_t k = 0; k < files.size(); ++k) {
    if (files[k].path.empty() || named_descriptor(files[k].path) >= 0) continue;
    struct stat st {};
    if (::stat(files[k].path.c_str(), &st) == 0) {
      ids[k].exists = true;
      ids[k].dev = st.st_dev;
      ids[k].ino = st.st_ino;
    }
    std::error_code ec;
    ids[k].canon = fs::weakly_canonical(fs::absolute(files[k].path, ec), ec).string();
    if (ec) ids[k].canon = files[k].path;
  }
  for (size_t a = 0; a < files.size(); ++a)
    for (size_t b = a + 1; b < files.size(); ++b) {
      if (!files[a].output && !files[b].output) continue;
      if (files[a].hdf5 && files[b].hdf5) continue;
      if (ids[a].canon.empty() || ids[b].canon.empty()) continue;
      const bool same = (ids[a].exists && ids[b].exists)
                            ? ids[a].dev == ids[b].dev && ids[a].ino == ids[b].ino
                            : ids[a].canon == ids[b].canon;
      if (same) {
        const RunFile& out = files[b].output ? files[b] : files[a];
        const RunFile& other = files[b].output ? files[a] : files[b];
        throw input_error(out.path + ": " + out.role + " is the same file as " + other.role + " " +
                          other.path);
      }
    }
}

// ---------------------------------------------------------------------------------------
// Syncing and publishing

void sync_file(const std::string& path) {
  const int fd = ::open(path.c_str(), O_RDONLY);
  if (fd < 0 || ::fsync(fd) != 0) {
    const int err = errno;
    if (fd >= 0) ::close(fd);
    throw input_error(io_failure(path, err));
  }
  if (::close(fd) != 0) throw input_error(io_failure(path, errno));
}

void sync_parent_directory(const std::string& path) {
  fs::path dir = fs::path(path).parent_path();
  if (dir.empty()) dir = ".";
  const int fd = ::open(dir.c_str(), O_RDONLY | O_DIRECTORY);
  if (fd < 0) return;  // nothing to sync through; the rename itself succeeded
  const int rc = ::fsync(fd);
  const int err = errno;
  ::close(fd);
  // Some file systems refuse fsync on directories (EINVAL); that loses nothing here.
  if (rc != 0 && err != EINVAL && err != EROFS) throw input_error(io_failure(path, err));
}

void publish_file(const std::string& tmp, const std::string& target, bool force) {
  struct stat st {};
  // The target may have appeared since the probe looked.
  if (!force && ::lstat(target.c_str(), &st) == 0)
    throw input_error(target + ": exists" + overwrite_hint());
  if (::rename(tmp.c_str(), target.c_str()) != 0) {
    const int err = errno;
    throw input_error(target + ": cannot move the finished file into place (" + std::strerror(err) +
                      ")");
  }
  unregister_temporary(tmp);
  sync_parent_directory(target);
}

// ---------------------------------------------------------------------------------------
// TextOutput

TextOutput::TextOutput(const std::string& path, bool force)
    : target_(probe_output(path, force, true)), force_(force) {}

TextOutput::~TextOutput() {
  discard();
}

TextOutput::TextOutput(TextOutput&& o) noexcept
    : target_(std::move(o.target_)),
      tmp_(std::move(o.tmp_)),
      text_(std::move(o.text_)),
      force_(o.force_),
      staged_(o.staged_),
      delivered_(o.delivered_) {
  o.target_ = {};
  o.tmp_.clear();
  o.staged_ = o.delivered_ = false;
}

TextOutput& TextOutput::operator=(TextOutput&& o) noexcept {
  if (this != &o) {
    discard();
    target_ = std::move(o.target_);
    tmp_ = std::move(o.tmp_);
    text_ = std::move(o.text_);
    force_ = o.force_;
    staged_ = o.staged_;
    delivered_ = o.delivered_;
    o.target_ = {};
    o.tmp_.clear();
    o.staged_ = o.delivered_ = false;
  }
  return *this;
}

void TextOutput::discard() noexcept {
  if (!tmp_.empty()) {
    ::unlink(tmp_.c_str());
    unregister_temporary(tmp_);
    tmp_.clear();
  }
}

void TextOutput::stage(const std::string& text) {
  if (!active()) return;
  if (target_.kind == TargetKind::special || target_.kind == TargetKind::standard) {
    text_ = text;
    staged_ = true;
    return;
  }
  tmp_ = temporary_name_for(target_.resolved);
  register_temporary(tmp_);
  const int fd = ::open(tmp_.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
  if (fd < 0) throw input_error(io_failure(target_.path, errno));
  bool ok = write_all(fd, text) && ::fsync(fd) == 0;
  int err = errno;
  if (::close(fd) != 0 && ok) {
    ok = false;
    err = errno;
  }
  if (!ok) {
    discard();
    throw input_error(io_failure(target_.path, err));
  }
  staged_ = true;
}

void TextOutput::deliver() {
  if (!active() || delivered_) return;
  if (!staged_) throw internal_error("TextOutput::deliver before stage");
  if (target_.kind == TargetKind::standard) {
    std::cout.flush();  // what the app printed before comes first
    std::fflush(stdout);
    if (!write_all(std::stoi(target_.resolved), text_))
      throw input_error(io_failure(target_.path, errno));
  } else if (target_.kind == TargetKind::special) {
    const int fd = ::open(target_.resolved.c_str(), O_WRONLY);
    if (fd < 0) throw input_error(io_failure(target_.path, errno));
    const bool ok = write_all(fd, text_);
    const int err = errno;
    if ((::close(fd) != 0 || !ok)) throw input_error(io_failure(target_.path, ok ? errno : err));
  }
  delivered_ = true;
}

void TextOutput::publish() {
  if (!active()) return;
  if (!staged_) throw internal_error("TextOutput::publish before stage");
  deliver();
  if (target_.kind == TargetKind::absent || target_.kind == TargetKind::regular) {
    publish_file(tmp_, target_.resolved, force_);
    tmp_.clear();
  }
  target_ = {};
}

void write_text_output(const std::string& path, const std::string& text, bool force) {
  TextOutput out(path, force);
  out.stage(text);
  out.publish();
}

}  // namespace triada
