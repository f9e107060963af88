#include "core/signal_cleanup.hpp"

#include <dirent.h>
#include <fcntl.h>
#include <signal.h>
#include <unistd.h>

#include <array>
#include <atomic>
#include <cstring>
#include <mutex>

namespace triada::signal_cleanup {

namespace {

constexpr int kSlots = 32;
constexpr int kMaxDepth = 16;  // Open MPI's session tree is 4 levels deep
constexpr int kFatal[] = {SIGINT, SIGTERM, SIGHUP};

struct Slot {
  std::atomic<int> used{0};  // lock-free: read by the handler
  bool tree = false;
  pid_t owner = 0;
  char path[4096] = {0};
};
std::array<Slot, kSlots> g_slots;
std::mutex g_mutex;

bool is_dot_entry(const char* n) {
  return n[0] == '.' && (n[1] == '\0' || (n[1] == '.' && n[2] == '\0'));
}

void remove_contents(int dir, int depth) noexcept;

// Removes `name` in the directory `at`: a file, or a directory with what it holds.
void remove_entry(int at, const char* name, unsigned char type, int depth) noexcept {
  if (type != DT_DIR && ::unlinkat(at, name, 0) == 0) return;
  if (depth <= 0) return;
  const int sub = ::openat(at, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
  if (sub < 0) return;
  remove_contents(sub, depth - 1);
  ::unlinkat(at, name, AT_REMOVEDIR);
}

// Empties the directory `dir` (and closes it). Entries go while it is read, so it is read
// again from the start until a pass finds nothing left (a few passes at most).
void remove_contents(int dir, int depth) noexcept {
  alignas(8) char buf[2048];
  bool found = true;
  for (int pass = 0; pass < 4 && found; ++pass) {
    found = false;
    ::lseek(dir, 0, SEEK_SET);
    ssize_t n = 0;
    while ((n = ::getdents64(dir, buf, sizeof buf)) > 0)
      for (ssize_t off = 0; off < n;) {
        const auto* d = reinterpret_cast<const struct dirent64*>(buf + off);
        off += d->d_reclen;
        if (is_dot_entry(d->d_name)) continue;
        remove_entry(dir, d->d_name, d->d_type, depth);
        found = true;
      }
  }
  ::close(dir);
}

void remove_tree(const char* path) noexcept {
  const int fd = ::open(path, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
  if (fd >= 0) remove_contents(fd, kMaxDepth);
  ::rmdir(path);
}

// Removes what this process registered (a forked child's copy of the list is its parent's).
void remove_registered() noexcept {
  const pid_t me = ::getpid();
  for (Slot& s : g_slots) {
    if (!s.used.load(std::memory_order_acquire) || s.owner != me) continue;
    if (s.tree)
      remove_tree(s.path);
    else
      ::unlink(s.path);
  }
}

extern "C" void cleanup_handler(int sig) {
  die_by_signal(sig);
}

// The current handler of `sig` (SIG_DFL, SIG_IGN or a function; nullptr for SA_SIGINFO).
void (*current_handler(int sig))(int) {
  struct sigaction old {};
  ::sigaction(sig, nullptr, &old);
  return (old.sa_flags & SA_SIGINFO) ? nullptr : old.sa_handler;
}

void set_handler(int sig, void (*handler)(int)) {
  struct sigaction sa {};
  sa.sa_handler = handler;
  sigemptyset(&sa.sa_mask);
  for (int s : kFatal) sigaddset(&sa.sa_mask, s);  // one clean-up at a time
  ::sigaction(sig, &sa, nullptr);
}

}  // namespace

void add(const std::string& path, bool tree) {
  if (path.empty() || path.size() >= sizeof(Slot::path)) return;
  std::lock_guard lock(g_mutex);
  for (Slot& s : g_slots)
    if (!s.used.load(std::memory_order_relaxed)) {
      std::memcpy(s.path, path.c_str(), path.size() + 1);
      s.tree = tree;
      s.owner = ::getpid();
      s.used.store(1, std::memory_order_release);
      return;
    }
}

void remove(const std::string& path) {
  std::lock_guard lock(g_mutex);
  for (Slot& s : g_slots)
    if (s.used.load(std::memory_order_relaxed) && path == s.path)
      s.used.store(0, std::memory_order_release);
}

void install() {
  for (int sig : kFatal)
    if (current_handler(sig) != SIG_IGN) set_handler(sig, cleanup_handler);
}

void install_where_default() {
  for (int sig : {SIGTERM, SIGHUP})
    if (current_handler(sig) == SIG_DFL) set_handler(sig, cleanup_handler);
}

void restore_defaults() {
  for (int sig : {SIGTERM, SIGHUP})
    if (current_handler(sig) == cleanup_handler) set_handler(sig, SIG_DFL);
}

void die_by_signal(int sig) noexcept {
  remove_registered();
  set_handler(sig, SIG_DFL);
  sigset_t only;
  sigemptyset(&only);
  sigaddset(&only, sig);
  ::sigprocmask(SIG_UNBLOCK, &only, nullptr);  // blocked while its handler runs
  ::raise(sig);
  ::_exit(128 + sig);  // not reached: the default action of these signals ends the process
}

}  // namespace triada::signal_cleanup
