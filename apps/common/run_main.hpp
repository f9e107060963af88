#pragma once
// The one place a main catches errors (doc/design.md §10.9): run_main() wraps a program's body,
// prints each error once as "<app>: error: <message>" and returns the exit code.
// Errors raised collectively (every rank throws the same, see mpi::collectively) are
// printed by rank 0 only and the run ends normally with code 1 (input) or 2 (config);
// an error raised on one rank alone is printed by that rank and MPI_Abort ends the rest,
// so no rank is left waiting in a collective. `--version` among the words prints the
// version text (jobs/provenance.hpp) on rank 0 and returns 0 without running `body`.
// SIGINT, SIGTERM and SIGHUP remove the run's temporaries and a singleton's session root,
// then end the program by that signal (core/signal_cleanup.hpp).
#include <functional>
#include <string>

namespace triada {

// Freed heap memory stays in the process for the next allocation (glibc mallopt: large
// blocks from the heap, no trimming below 1 GiB free). For programs that allocate and free
// large buffers again and again (triada-conv's lowered matrix of up to hundreds of MB per
// layer): returned to the system each time, every layer pays the page faults again, and on
// a VM that backs memory lazily those cost more than the layer's arithmetic. Peak memory
// is unchanged: the blocks are reused, not added.
void keep_freed_memory();

int run_main(const std::string& app, int argc, char** argv,
             const std::function<int(int, char**)>& body);

}  // namespace triada
