#pragma once
// Signals during a call (README "Python"). The module never takes a signal over from
// Python or the user. On Python's main thread a call installs, for its duration only, a
// handler on SIGINT, SIGTERM and SIGHUP (not on an ignored one) and restores the previous
// disposition exactly when it returns. That handler does what the previous one would:
// where that was the default action it removes the call's temporaries and the process's
// own Open MPI session root and dies by the signal; otherwise it calls the previous
// handler (Python's, which notes the signal) and marks it for the call, which polls
// between batches (mesh/cancel.hpp): Python's handler then runs there, with the GIL, and
// if it raises (KeyboardInterrupt by default) the call stops on every rank, publishes
// nothing and raises that exception; if it returns, the call goes on. A call from another
// thread leaves every handler alone and is not stopped (Python runs handlers on its main
// thread only).
#include <functional>

#include "bindings.hpp"

namespace triada::py {

// One call's handlers, constructed and destroyed with the GIL held, on the calling thread.
class CallSignals {
 public:
  CallSignals();
  ~CallSignals();
  CallSignals(const CallSignals&) = delete;
  CallSignals& operator=(const CallSignals&) = delete;

  // For cancel::Scope (polled without the GIL): whether a Python handler raised. Empty off
  // the main thread.
  std::function<bool()> poll() const;

 private:
  bool installed_ = false;
};

// The exception a stopped call raises (its handler's, or KeyboardInterrupt on the ranks
// that only followed another), and the start and end of MPI with the clean-up handler on
// SIGTERM and SIGHUP where Python leaves them at the default action.
void register_interrupts(pyb::module_& m);

}  // namespace triada::py
