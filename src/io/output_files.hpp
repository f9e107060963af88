#pragma once
// The files a run writes (doc/errors.md "Errors"). Every target is probed before any work; data
// goes to a temporary file beside the target, which is flushed, checked and fsynced; only
// when every output of the run is complete are the temporaries renamed onto their
// targets. A FIFO, a character device or "-" (standard output) is written directly at
// that moment, never renamed over. Temporaries are removed on failure and on SIGTERM,
// SIGINT and SIGHUP (what mpirun sends the survivors when a rank dies) where the process
// has the clean-up handler (core/signal_cleanup.hpp).
#include <cstdint>
#include <string>
#include <vector>

namespace triada {

enum class TargetKind {
  absent,   // nothing there yet: created
  regular,  // an existing regular file (symlinks followed): replaced only with force
  special,  // a FIFO or character device: written directly, never replaced
  standard  // "-": standard output
};

struct OutputTarget {
  std::string path;      // as the user wrote it
  std::string resolved;  // the file actually written (symlinks followed)
  TargetKind kind = TargetKind::absent;
};

// How the program spells "replace existing outputs" (its option, e.g. "--force"), for the
// refusals below; set once by the program, since the library names no command-line option
// itself. Empty (the default): the messages say only that nothing is overwritten.
void set_overwrite_option(const std::string& name);
const std::string& overwrite_option();
// " (use NAME to overwrite)", or " (not overwritten)" when no option is set.
std::string overwrite_hint();

// Checks on the calling rank that `path` can be written, before any work. Refuses, with
// an input_error naming the path: an existing file or a symlink (also a dangling one)
// unless `force`; a directory, socket or block device; a FIFO, character device or "-"
// unless `special_ok`; a missing directory; a directory where no file can be created
// (tried, not guessed: root passes access() on read-only mounts); a name that is too long.
OutputTarget probe_output(const std::string& path, bool force, bool special_ok);

// One path a run reads or writes, with the role that names it in messages.
struct RunFile {
  std::string path;
  std::string role;  // "--input", "--report", ...
  bool output = false;
  bool hdf5 = false;  // two HDF5 files may be one: datasets are told apart by the caller
};
// Refuses an output that is the same file as any other input or output (same inode when
// both exist, same canonical path otherwise), except two HDF5 ones. "-", descriptors and
// empty paths are skipped.
void check_distinct(const std::vector<RunFile>& files);

// A text output (report, trace, JSON): probed at construction, staged into a checked,
// fsynced temporary by stage(), and made visible by publish(). Destroying it before
// publish() removes the temporary and leaves any existing target as it was.
class TextOutput {
 public:
  TextOutput() = default;
  TextOutput(const std::string& path, bool force);
  ~TextOutput();
  TextOutput(TextOutput&& o) noexcept;
  TextOutput& operator=(TextOutput&& o) noexcept;
  TextOutput(const TextOutput&) = delete;
  TextOutput& operator=(const TextOutput&) = delete;

  bool active() const { return !target_.path.empty(); }
  const std::string& path() const { return target_.path; }
  void stage(const std::string& text);
  // Writes a special or standard target now, the part of publishing that can fail on a
  // device (a full disk behind it, /dev/full): a run delivers every such output before it
  // renames any file into place, so a failed one leaves every existing file as it was. A
  // no-op for a regular file; publish() delivers what was not delivered.
  void deliver();
  void publish();

 private:
  void discard() noexcept;
  OutputTarget target_;
  std::string tmp_;
  std::string text_;  // for special targets, written at publish()
  bool force_ = false;
  bool staged_ = false;
  bool delivered_ = false;
};

// Writes `text` to `path` at once (probe, stage, publish): for outputs with nothing to
// wait for.
void write_text_output(const std::string& path, const std::string& text, bool force);

// Temporary files of this process that a fatal signal must not leave behind
// (signal_cleanup::add).
void register_temporary(const std::string& path);
void unregister_temporary(const std::string& path);

// A temporary name beside `target`, unique to this process: ".NAME.tmp-PID".
std::string temporary_name_for(const std::string& target);

// fsync of a file and of the directory holding it; throw input_error naming `path`.
void sync_file(const std::string& path);
void sync_parent_directory(const std::string& path);

// Renames `tmp` onto `target` (same directory, atomic) and syncs the directory. Without
// `force`, refuses a target that appeared meanwhile.
void publish_file(const std::string& tmp, const std::string& target, bool force);

// "x.h5: No space left on device": the reason for errno `err`, naming `path`.
std::string io_failure(const std::string& path, int err);

// Bytes this process may still write to the file system holding `path` (a directory or a
// file) or the open file `fd` (root may also use the blocks reserved for it); UINT64_MAX
// if the file system cannot say.
std::uint64_t free_bytes(const std::string& path);
std::uint64_t free_bytes(int fd);

// False under TRIADA_NO_FALLOCATE=1 (tests): the run behaves as on a file system without
// fallocate and skips the free-space check before creating a file, so that what comes
// after (the copy, the writes, the closes) meets the full disk.
bool space_checked_ahead();

// Reserves the blocks of [offset, offset + bytes) of the open file `fd` (fallocate, size
// kept), so that writing there cannot meet a full disk: 0, or errno (ENOSPC; EOPNOTSUPP
// where the file system cannot, or !space_checked_ahead()).
int reserve_file_blocks(int fd, std::uint64_t offset, std::uint64_t bytes);

// Copies the regular file `from` to `to` (created, or truncated), with `from`'s permission
// bits. Throws input_error naming `shown` with errno's reason (a full disk says so).
void copy_file_contents(const std::string& from, const std::string& to, const std::string& shown);

}  // namespace triada
