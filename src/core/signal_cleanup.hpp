#pragma once
// What a fatal signal (SIGINT, SIGTERM, SIGHUP) must not leave behind: the output
// temporaries of a run (io/output_files.hpp) and a singleton's own Open MPI session root
// (mesh/mpi.cpp). The handler removes them with async-signal-safe calls only (the names
// live in fixed buffers; a directory is walked with getdents64 on a stack buffer, never
// with malloc or std::filesystem), then ends the process by the signal's default action,
// so the exit status still says which signal it was. A forked child never removes its
// parent's paths.
#include <string>

namespace triada::signal_cleanup {

// Registers a path for removal: a file, or with `tree` a directory with everything under
// it. Nothing happens for a path too long to keep (a run cannot have created it) or when
// every slot is taken.
void add(const std::string& path, bool tree = false);
void remove(const std::string& path);

// The programs: the handler on SIGINT, SIGTERM and SIGHUP, except where a signal is
// ignored (nohup keeps ignoring SIGHUP).
void install();

// The Python module: the handler only on those of SIGTERM and SIGHUP whose disposition is
// the default (a Python process's, where the signal would kill it without clean-up), never
// over a handler of the user's or Python's own SIGINT; restore_defaults() puts the
// default back where the handler is still ours.
void install_where_default();
void restore_defaults();

// What the handler does: removes every registered path, then ends the process by `sig`'s
// default action. Async-signal-safe; for a handler of the caller's that must end the
// process as the default action would.
[[noreturn]] void die_by_signal(int sig) noexcept;

}  // namespace triada::signal_cleanup
