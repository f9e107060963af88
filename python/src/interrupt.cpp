#include "interrupt.hpp"

#include <signal.h>

#include <exception>

#include "core/signal_cleanup.hpp"

namespace triada::py {

namespace {

constexpr int kSignals[] = {SIGINT, SIGTERM, SIGHUP};

// The dispositions a call replaced (read by its handler), and whether it did.
struct sigaction g_previous[NSIG];
bool g_replaced[NSIG] = {};
int g_depth = 0;                    // calls in progress (a handler may call the module)
volatile sig_atomic_t g_noted = 0;  // a signal came that Python's handler must see
PyObject *g_type = nullptr, *g_value = nullptr, *g_trace = nullptr;  // what it raised

extern "C" void during_call(int sig, siginfo_t* info, void* context) {
  const struct sigaction& prev = g_previous[sig];
  if (prev.sa_flags & SA_SIGINFO) {
    g_noted = 1;
    prev.sa_sigaction(sig, info, context);
  } else if (prev.sa_handler == SIG_DFL) {
    signal_cleanup::die_by_signal(sig);  // as the default action, the call's files removed
  } else if (prev.sa_handler != SIG_IGN) {
    g_noted = 1;
    prev.sa_handler(sig);  // Python's own handler: the signal is noted for Python
  }
}

bool ours(int sig) {
  struct sigaction now {};
  sigaction(sig, nullptr, &now);
  return (now.sa_flags & SA_SIGINFO) && now.sa_sigaction == during_call;
}

void forget_raised() {
  Py_CLEAR(g_type);
  Py_CLEAR(g_value);
  Py_CLEAR(g_trace);
}

bool on_main_thread() {
  const pyb::module_ threading = pyb::module_::import("threading");
  const pyb::object main_ident = threading.attr("main_thread")().attr("ident");
  return main_ident.equal(threading.attr("get_ident")());
}

// Runs Python's handlers of the signals noted; true (their exception kept) if one raised.
bool handler_raised() {
  if (!g_noted) return false;
  g_noted = 0;
  pyb::gil_scoped_acquire gil;
  if (PyErr_CheckSignals() == 0) return false;
  forget_raised();
  PyErr_Fetch(&g_type, &g_value, &g_trace);
  return true;
}

}  // namespace

CallSignals::CallSignals() {
  if (g_depth++ > 0 || !on_main_thread()) return;
  forget_raised();
  g_noted = 0;
  installed_ = true;
  for (int sig : kSignals) {
    sigaction(sig, nullptr, &g_previous[sig]);
    const struct sigaction& prev = g_previous[sig];
    g_replaced[sig] = (prev.sa_flags & SA_SIGINFO) || prev.sa_handler != SIG_IGN;
    if (!g_replaced[sig]) continue;
    struct sigaction sa {};
    sa.sa_sigaction = during_call;
    sa.sa_flags = SA_SIGINFO | SA_RESTART;
    sigemptyset(&sa.sa_mask);
    for (int s : kSignals) sigaddset(&sa.sa_mask, s);
    sigaction(sig, &sa, nullptr);
  }
}

CallSignals::~CallSignals() {
  --g_depth;
  if (!installed_) return;
  // Exactly as before, unless someone replaced the call's handler meanwhile.
  for (int sig : kSignals)
    if (g_replaced[sig] && ours(sig)) sigaction(sig, &g_previous[sig], nullptr);
}

std::function<bool()> CallSignals::poll() const {
  if (!installed_) return {};
  return handler_raised;
}

void register_interrupts(pyb::module_&) {
  // Tried before the module's other translators (registered earlier).
  pyb::register_exception_translator([](std::exception_ptr p) {
    try {
      if (p) std::rethrow_exception(p);
    } catch (const cancelled& e) {
      if (g_type) {
        PyErr_Restore(g_type, g_value, g_trace);  // the handler's own exception
        g_type = g_value = g_trace = nullptr;
      } else {
        PyErr_SetString(PyExc_KeyboardInterrupt, e.what());  // another rank's
      }
    }
  });
}

}  // namespace triada::py
