#include "bench/bench.hpp"

#include <cblas.h>
#include <fcntl.h>
#include <fftw3.h>
#include <mpi.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <boost/program_options.hpp>
#include <cerrno>
#include <charconv>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <ctime>
#include <exception>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <limits>
#include <map>
#include <memory>
#include <nlohmann/json.hpp>
#include <sstream>

#include "engine/engine.hpp"
#include "config/options.hpp"
#include "core/checked.hpp"
#include "core/error.hpp"
#include "counters/counters.hpp"
#include "geometry/memory_model.hpp"
#include "io/generate.hpp"
#include "io/output_files.hpp"
#include "mesh/mpi.hpp"
#include "mesh/node_memory.hpp"
#include "mesh/topology.hpp"

extern char** environ;

namespace po = boost::program_options;

namespace triada {

namespace {

using Clock = std::chrono::steady_clock;
using json = nlohmann::json;

double seconds_since(Clock::time_point t0) {
  return std::chrono::duration<double>(Clock::now() - t0).count();
}

index_t elements(const ext3& s) {
  return s[0] * s[1] * s[2];
}

// Dense MACs of the 3-mode product with square matrices: N1 N2 N3 (N1 + N2 + N3).
std::uint64_t dense_macs(const ext3& s) {
  return static_cast<std::uint64_t>(elements(s)) * static_cast<std::uint64_t>(s[0] + s[1] + s[2]);
}

// ---------------------------------------------------------------------------------------
// Parsing

template <class Int>
bool parse_int(const std::string& s, Int& out) {
  const char* end = s.data() + s.size();
  const auto [p, ec] = std::from_chars(s.data(), end, out);
  return ec == std::errc() && p == end && !s.empty();
}

std::vector<std::string> split(const std::string& s, char sep) {
  std::vector<std::string> parts;
  size_t start = 0;
  while (true) {
    const size_t pos = s.find(sep, start);
    parts.push_back(s.substr(start, pos == std::string::npos ? pos : pos - start));
    if (pos == std::string::npos) break;
    start = pos + 1;
  }
  return parts;
}

// "N" (a cube) or "N1xN2xN3".
ext3 parse_size(const std::string& token, const std::string& option) {
  const auto bad = [&] {
    return config_error(option + ": expected N or N1xN2xN3 with positive integers, got '" +
                        printable(token) + "'");
  };
  const std::vector<std::string> parts = split(token, 'x');
  ext3 s{};
  if (parts.size() == 1) {
    if (!parse_int(parts[0], s[0]) || s[0] < 1) throw bad();
    s = {s[0], s[0], s[0]};
  } else if (parts.size() == 3) {
    for (int d = 0; d < 3; ++d)
      if (!parse_int(parts[d], s[d]) || s[d] < 1) throw bad();
  } else {
    throw bad();
  }
  if (s[0] > 4096 || s[1] > 4096 || s[2] > 4096) throw bad();
  return s;
}

const std::vector<std::string> kSparsities = {"dense", "r50", "r90", "r99", "lines90"};
const std::vector<std::string> kVariants = {"fused",    "reference", "openblas",
                                            "fftw-dft", "fftw-dct",  "fftw-dht"};

std::vector<std::string> parse_list(const std::string& s, const std::string& option,
                                    const std::vector<std::string>& allowed,
                                    const std::map<std::string, std::vector<std::string>>& alias) {
  std::vector<std::string> out;
  for (const std::string& word : split(s, ',')) {
    std::vector<std::string> expanded{word};
    if (const auto it = alias.find(word); it != alias.end()) expanded = it->second;
    for (const std::string& w : expanded) {
      if (std::find(allowed.begin(), allowed.end(), w) == allowed.end()) {
        std::string list;
        for (const auto& a : allowed) list += (list.empty() ? "" : ", ") + a;
        for (const auto& [name, _] : alias) list += ", " + name;
        throw config_error(option + ": expected a comma-separated list of " + list + ", got '" +
                           printable(word) + "'");
      }
      if (std::find(out.begin(), out.end(), w) == out.end()) out.push_back(w);
    }
  }
  return out;
}

std::string host_name() {
  char buf[256] = {};
  if (gethostname(buf, sizeof buf - 1) != 0) return "unknown";
  return buf;
}

std::string today() {
  const std::time_t t = std::time(nullptr);
  std::tm tm{};
  localtime_r(&t, &tm);
  char buf[32];
  std::strftime(buf, sizeof buf, "%Y-%m-%d", &tm);
  return buf;
}

std::string shape_str(const ext3& s) {
  return to_string(s);
}

// ---------------------------------------------------------------------------------------
// Inputs and coefficients

// The benchmark's input patterns, all uniform in [-1, 1) from the counter-based generator.
GenSpec input_spec(const ext3& shape, const std::string& sparsity, std::uint64_t seed) {
  GenSpec g;
  g.shape = shape;
  g.dist = Dist::uniform;
  g.seed = seed;
  if (sparsity == "r50") g.sparsity = 0.5;
  if (sparsity == "r90") g.sparsity = 0.9;
  if (sparsity == "r99") g.sparsity = 0.99;
  if (sparsity == "lines90") g.zero_lines = 0.9;
  return g;
}

std::array<CoeffMatrix, 3> coefficients(TransformKind kind, const ext3& shape) {
  std::array<CoeffMatrix, 3> c;
  for (int a = 0; a < 3; ++a)
    c[a] = make_coefficients(kind, shape[a], Norm::ortho, false,
                             "triada-bench axis " + std::to_string(a + 1));
  return c;
}

std::vector<double> real_part(const CoeffMatrix& c) {
  std::vector<double> r(c.data.size());
  for (size_t i = 0; i < r.size(); ++i) r[i] = c.data[i].real();
  return r;
}

// ---------------------------------------------------------------------------------------
// OpenBLAS baseline: Y = X x3 C3 x1 C1 x2 C2 (stage order 3, 1, 2), one thread.

class ThreeModeProduct {
 public:
  ThreeModeProduct(const ext3& shape, const std::array<CoeffMatrix, 3>& c)
      : n_(shape), c1_(real_part(c[0])), c2_(real_part(c[1])), c3_(real_part(c[2])) {
    for (int a = 0; a < 3; ++a) k_[a] = c[a].cols;
    // Touch every buffer once here, so no first-touch page fault lands in a timed run.
    t1_.assign(static_cast<size_t>(n_[0] * n_[1] * k_[2]), 0.0);
    t2_.assign(static_cast<size_t>(k_[0] * n_[1] * k_[2]), 0.0);
    y_.assign(static_cast<size_t>(k_[0] * k_[1] * k_[2]), 0.0);
  }

  void run(const std::vector<double>& x) {
    const int N1 = blas_int(n_[0]), N2 = blas_int(n_[1]), N3 = blas_int(n_[2]);
    const int K1 = blas_int(k_[0]), K2 = blas_int(k_[1]), K3 = blas_int(k_[2]);
    // Stage 3: T1 (N1 N2 x K3) = X (N1 N2 x N3) * C3 (N3 x K3).
    cblas_dgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, N1 * N2, K3, N3, 1.0, x.data(), N3,
                c3_.data(), K3, 0.0, t1_.data(), K3);
    // Stage 1: T2 (K1 x N2 K3) = C1^T (K1 x N1) * T1 (N1 x N2 K3).
    cblas_dgemm(CblasRowMajor, CblasTrans, CblasNoTrans, K1, N2 * K3, N1, 1.0, c1_.data(), K1,
                t1_.data(), N2 * K3, 0.0, t2_.data(), N2 * K3);
    // Stage 2: for each k1, Y[k1] (K2 x K3) = C2^T (K2 x N2) * T2[k1] (N2 x K3).
    for (int k1 = 0; k1 < K1; ++k1)
      cblas_dgemm(CblasRowMajor, CblasTrans, CblasNoTrans, K2, K3, N2, 1.0, c2_.data(), K2,
                  t2_.data() + static_cast<size_t>(k1) * static_cast<size_t>(N2 * K3), K3, 0.0,
                  y_.data() + static_cast<size_t>(k1) * static_cast<size_t>(K2 * K3), K3);
  }
  const std::vector<double>& result() const { return y_; }

 private:
  static int blas_int(index_t v) {
    if (v > std::numeric_limits<int>::max()) throw input_error("OpenBLAS: extent too large");
    return static_cast<int>(v);
  }
  ext3 n_{}, k_{};
  std::vector<double> c1_, c2_, c3_, t1_, t2_, y_;
};

struct OpenblasResult {
  double seconds = 0;
  std::string corename;
  std::string config;
};

// Runs the OpenBLAS measurement in a child process (this executable, --openblas-child) whose
// environment lacks OPENBLAS_CORETYPE and OPENBLAS_L2_SIZE, reading its one JSON line.
OpenblasResult spawn_openblas_child(const ext3& shape, int reps, TransformKind kind,
                                    std::uint64_t seed) {
  const auto sys_error = [](const std::string& what, int code) {
    return error("OpenBLAS child: " + what + ": " + std::strerror(code));
  };
  const std::vector<std::string> args = {"triada-bench",   "--openblas-child",
                                         shape_str(shape), std::to_string(reps),
                                         to_string(kind),  std::to_string(seed)};
  std::vector<std::string> env;
  for (char** e = environ; *e != nullptr; ++e) {
    const std::string kv(*e);
    if (kv.starts_with("OPENBLAS_CORETYPE=") || kv.starts_with("OPENBLAS_L2_SIZE=") ||
        kv.starts_with("OPENBLAS_NUM_THREADS="))
      continue;
    env.push_back(kv);
  }
  env.push_back("OPENBLAS_NUM_THREADS=1");
  std::vector<char*> argv_c, env_c;
  for (const auto& a : args) argv_c.push_back(const_cast<char*>(a.c_str()));
  argv_c.push_back(nullptr);
  for (const auto& kv : env) env_c.push_back(const_cast<char*>(kv.c_str()));
  env_c.push_back(nullptr);

  int fds[2];
  if (pipe2(fds, O_CLOEXEC) != 0) throw sys_error("pipe", errno);
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_adddup2(&actions, fds[1], STDOUT_FILENO);  // dup2 clears CLOEXEC
  pid_t pid = 0;
  const int rc =
      posix_spawn(&pid, "/proc/self/exe", &actions, nullptr, argv_c.data(), env_c.data());
  posix_spawn_file_actions_destroy(&actions);
  close(fds[1]);
  if (rc != 0) {
    close(fds[0]);
    throw sys_error("posix_spawn /proc/self/exe", rc);
  }
  std::string out;
  char buf[4096];
  while (true) {
    const ssize_t n = read(fds[0], buf, sizeof buf);
    if (n > 0) {
      out.append(buf, static_cast<size_t>(n));
    } else if (n == 0 || errno != EINTR) {
      break;
    }
  }
  close(fds[0]);
  int status = 0;
  while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  if (!WIFEXITED(status) || WEXITSTATUS(status) != 0)
    throw error("OpenBLAS child for " + shape_str(shape) + " failed (" +
                (WIFEXITED(status) ? "exit code " + std::to_string(WEXITSTATUS(status))
                                   : std::string("killed by a signal")) +
                ")");
  const size_t nl = out.find_last_not_of("\n");
  const size_t start = nl == std::string::npos ? 0 : out.rfind('\n', nl);
  const std::string line = out.substr(start == std::string::npos ? 0 : start + 1);
  try {
    const json j = json::parse(line);
    return {j.at("seconds").get<double>(), j.at("corename").get<std::string>(),
            j.at("config").get<std::string>()};
  } catch (const json::exception& e) {
    throw error("OpenBLAS child printed no result line (" + std::string(e.what()) + "): '" + line +
                "'");
  }
}

// ---------------------------------------------------------------------------------------
// FFTW baselines, one thread, FFTW_MEASURE planning outside the timing.

struct FftwPlan {
  fftw_plan p = nullptr;
  explicit FftwPlan(fftw_plan plan) : p(plan) {}
  ~FftwPlan() {
    if (p) fftw_destroy_plan(p);
  }
  FftwPlan(const FftwPlan&) = delete;
  FftwPlan& operator=(const FftwPlan&) = delete;
};
struct FftwFree {
  void operator()(void* p) const { fftw_free(p); }
};

double time_fftw(const std::string& variant, const ext3& s, const std::vector<double>& x,
                 int reps) {
  const int n1 = static_cast<int>(s[0]), n2 = static_cast<int>(s[1]), n3 = static_cast<int>(s[2]);
  const size_t n = static_cast<size_t>(elements(s));
  std::unique_ptr<void, FftwFree> in, out;
  std::unique_ptr<FftwPlan> plan;
  if (variant == "fftw-dft") {
    in.reset(fftw_alloc_complex(n));
    out.reset(fftw_alloc_complex(n));
    auto* ci = static_cast<fftw_complex*>(in.get());
    plan = std::make_unique<FftwPlan>(fftw_plan_dft_3d(
        n1, n2, n3, ci, static_cast<fftw_complex*>(out.get()), FFTW_FORWARD, FFTW_MEASURE));
    for (size_t i = 0; i < n; ++i) {  // after planning: MEASURE overwrites the arrays
      ci[i][0] = x[i];
      ci[i][1] = 0.0;
    }
  } else {
    const fftw_r2r_kind k = variant == "fftw-dct" ? FFTW_REDFT10 : FFTW_DHT;
    in.reset(fftw_alloc_real(n));
    out.reset(fftw_alloc_real(n));
    auto* ri = static_cast<double*>(in.get());
    plan = std::make_unique<FftwPlan>(
        fftw_plan_r2r_3d(n1, n2, n3, ri, static_cast<double*>(out.get()), k, k, k, FFTW_MEASURE));
    std::copy(x.begin(), x.end(), ri);
  }
  if (!in || !out || !plan->p) throw error("FFTW: no plan for " + variant + " " + shape_str(s));
  double best = std::numeric_limits<double>::infinity();
  for (int r = 0; r < reps; ++r) {
    const auto t0 = Clock::now();
    fftw_execute(plan->p);
    best = std::min(best, seconds_since(t0));
  }
  return best;
}

// ---------------------------------------------------------------------------------------
// The engine, timed: barrier, run_engine, max over ranks of the elapsed time.

struct EngineTiming {
  double seconds = std::numeric_limits<double>::infinity();  // best rep, max over ranks
  std::vector<double> stage_seconds;  // world rank 0's stage durations in the best rep
  RunCounters counters;
  std::vector<double> out;  // this rank's output brick (of the last rep)
  Brick out_box;
};

EngineTiming time_engine(const Topology& topo, const std::array<CoeffMatrix, 3>& coeffs,
                         Executor executor, const std::vector<double>& input, int reps) {
  const size_t ns = topo.plan().stages.size();
  std::vector<Clock::time_point> stamps(ns);
  EngineOptions opt;
  opt.executor = executor;
  opt.mode = Mode::esop;
  opt.coefficients = [&](int axis) { return coeffs[axis - 1]; };
  opt.on_stage_done = [&](int s, std::uint64_t) { stamps[static_cast<size_t>(s)] = Clock::now(); };
  EngineTiming t;
  // The second register exists before the run, as the baseline's buffers do (touched once,
  // untimed); each run hands it back.
  std::vector<double> spare = spare_register<double>(topo);
  for (int r = 0; r < reps; ++r) {
    std::vector<double> in = input;  // the copy is not timed
    CHECK_MPI(MPI_Barrier(topo.world()));
    const auto t0 = Clock::now();
    EngineResult<double> res = run_engine<double>(topo, opt, std::move(in), &spare);
    const double local = seconds_since(t0);
    double global = 0;
    CHECK_MPI(MPI_Allreduce(&local, &global, 1, MPI_DOUBLE, MPI_MAX, topo.world()));
    if (global < t.seconds) {
      t.seconds = global;
      t.stage_seconds.assign(ns, 0.0);
      for (size_t s = 0; s < ns; ++s)
        t.stage_seconds[s] =
            std::chrono::duration<double>(stamps[s] - (s == 0 ? t0 : stamps[s - 1])).count();
      t.counters = res.counters;
    }
    t.out = std::move(res.out);
    t.out_box = res.out_box;
  }
  return t;
}

// A barrier that waits asleep (MPI_Ibarrier polled every millisecond) instead of
// spinning, for ranks idle while rank 0 times a baseline.
void sleepy_barrier(MPI_Comm comm) {
  MPI_Request req = MPI_REQUEST_NULL;
  CHECK_MPI(MPI_Ibarrier(comm, &req));
  int flag = 0;
  while (true) {
    CHECK_MPI(MPI_Test(&req, &flag, MPI_STATUS_IGNORE));
    if (flag) break;
    usleep(1000);
  }
}

std::string load_average() {
  std::ifstream f("/proc/loadavg");
  std::string a, b, c;
  f >> a >> b >> c;
  return f ? a + " " + b + " " + c : "unknown";
}

// Gathers every rank's output brick into the whole tensor on rank 0 (others get nothing).
std::vector<double> gather_on_root(MPI_Comm comm, const ext3& shape, const Brick& box,
                                   const std::vector<double>& vals) {
  int rank = 0, size = 1;
  CHECK_MPI(MPI_Comm_rank(comm, &rank));
  CHECK_MPI(MPI_Comm_size(comm, &size));
  std::array<index_t, 6> mine{box.lo[0], box.lo[1], box.lo[2], box.hi[0], box.hi[1], box.hi[2]};
  if (vals.empty()) mine = {0, 0, 0, 0, 0, 0};
  std::vector<index_t> boxes(static_cast<size_t>(6 * size));
  CHECK_MPI(MPI_Gather(mine.data(), 6, MPI_INT64_T, boxes.data(), 6, MPI_INT64_T, 0, comm));
  std::vector<int> counts(static_cast<size_t>(size)), displs(static_cast<size_t>(size));
  int total = 0;
  for (int r = 0; r < size; ++r) {
    const Brick b{{boxes[6 * r], boxes[6 * r + 1], boxes[6 * r + 2]},
                  {boxes[6 * r + 3], boxes[6 * r + 4], boxes[6 * r + 5]}};
    counts[r] = static_cast<int>(b.count());
    displs[r] = total;
    total += counts[r];
  }
  std::vector<double> all(rank == 0 ? static_cast<size_t>(total) : 0);
  CHECK_MPI(MPI_Gatherv(vals.data(), static_cast<int>(vals.size()), MPI_DOUBLE, all.data(),
                        counts.data(), displs.data(), MPI_DOUBLE, 0, comm));
  if (rank != 0) return {};
  std::vector<double> y(static_cast<size_t>(elements(shape)), 0.0);
  for (int r = 0; r < size; ++r) {
    const Brick b{{boxes[6 * r], boxes[6 * r + 1], boxes[6 * r + 2]},
                  {boxes[6 * r + 3], boxes[6 * r + 4], boxes[6 * r + 5]}};
    for (index_t i = b.lo[0]; i < b.hi[0]; ++i)
      for (index_t j = b.lo[1]; j < b.hi[1]; ++j)
        for (index_t l = b.lo[2]; l < b.hi[2]; ++l)
          y[static_cast<size_t>((i * shape[1] + j) * shape[2] + l)] =
              all[static_cast<size_t>(displs[r] + b.local_offset(i, j, l))];
  }
  return y;
}

// ---------------------------------------------------------------------------------------
// Rows, table, JSON

struct Row {
  ext3 shape{};
  std::string sparsity;
  std::string variant;
  int ranks = 1;
  int brick_ranks = 1;
  std::array<int, 3> grid{1, 1, 1};
  double seconds = 0;
  std::uint64_t macs = 0;
  std::uint64_t macs_dense = 0;
  std::optional<std::uint64_t> steps;
  std::optional<std::uint64_t> input_nonzeros;
  std::vector<double> stage_seconds;
  std::vector<int> stage_axes;
  double ratio_openblas = std::numeric_limits<double>::quiet_NaN();
  double ratio_fftw = std::numeric_limits<double>::quiet_NaN();
  double gflops() const { return seconds > 0 ? static_cast<double>(macs) / seconds / 1e9 : 0.0; }
  bool baseline() const { return variant != "fused" && variant != "reference"; }
};

std::string fftw_variant_for(TransformKind k) {
  return k == TransformKind::dht ? "fftw-dht" : k == TransformKind::dft ? "fftw-dft" : "fftw-dct";
}

// Ratio = baseline seconds / row seconds, both of the same shape (> 1: faster).
void fill_ratios(std::vector<Row>& rows, TransformKind kind) {
  const std::string fftw = fftw_variant_for(kind);
  for (Row& r : rows) {
    for (const Row& b : rows) {
      if (b.shape != r.shape || b.seconds <= 0) continue;
      if (b.variant == "openblas") r.ratio_openblas = b.seconds / r.seconds;
      if (b.variant == fftw) r.ratio_fftw = b.seconds / r.seconds;
    }
  }
}

json nullable(double v) {
  return std::isfinite(v) ? json(v) : json(nullptr);
}

json row_json(const Row& r) {
  json j;
  j["shape"] = {r.shape[0], r.shape[1], r.shape[2]};
  j["sparsity"] = r.sparsity;
  j["variant"] = r.variant;
  j["threads"] = 1;
  j["ranks"] = r.ranks;
  j["brick_ranks"] = r.brick_ranks;
  j["brick_grid"] = {r.grid[0], r.grid[1], r.grid[2]};
  j["seconds"] = r.seconds;
  j["gflops"] = r.gflops();
  j["macs"] = r.macs;
  j["macs_dense"] = r.macs_dense;
  j["macs_fraction"] =
      r.macs_dense ? static_cast<double>(r.macs) / static_cast<double>(r.macs_dense) : 0.0;
  j["steps"] = r.steps ? json(*r.steps) : json(nullptr);
  j["input_nonzeros"] = r.input_nonzeros ? json(*r.input_nonzeros) : json(nullptr);
  if (!r.stage_seconds.empty()) {
    j["stage_seconds"] = r.stage_seconds;
    j["stage_axes"] = r.stage_axes;
  }
  j["ratio_openblas"] = nullable(r.ratio_openblas);
  j["ratio_fftw"] = nullable(r.ratio_fftw);
  return j;
}

std::string fmt(const char* f, double v) {
  if (!std::isfinite(v)) return "-";
  char buf[64];
  std::snprintf(buf, sizeof buf, f, v);
  return buf;
}

void print_table(std::ostream& os, const std::vector<Row>& rows, TransformKind kind) {
  char line[256];
  std::snprintf(line, sizeof line, "%-12s %-8s %-9s %5s %10s %9s %7s %9s %9s  %s\n", "shape",
                "sparsity", "variant", "ranks", "seconds", "GFLOP/s", "MACs%", "xOpenBLAS",
                ("x" + fftw_variant_for(kind)).c_str(), "stage seconds (order 3,1,2)");
  os << line;
  for (const Row& r : rows) {
    std::string stages;
    for (double s : r.stage_seconds) stages += (stages.empty() ? "" : " ") + fmt("%.4g", s);
    const double pct = r.macs_dense
                           ? 100.0 * static_cast<double>(r.macs) / static_cast<double>(r.macs_dense)
                           : 0.0;
    std::snprintf(line, sizeof line, "%-12s %-8s %-9s %5d %10.6f %9.3f %7.1f %9s %9s  %s\n",
                  shape_str(r.shape).c_str(), r.sparsity.c_str(), r.variant.c_str(), r.ranks,
                  r.seconds, r.gflops(), pct, fmt("%.3f", r.ratio_openblas).c_str(),
                  fmt("%.3f", r.ratio_fftw).c_str(), stages.c_str());
    os << line;
  }
}

std::string cpu_model() {
  std::ifstream f("/proc/cpuinfo");
  std::string line;
  while (std::getline(f, line)) {
    if (line.starts_with("model name")) {
      const size_t colon = line.find(':');
      if (colon != std::string::npos) {
        const size_t start = line.find_first_not_of(" \t", colon + 1);
        return start == std::string::npos ? "" : line.substr(start);
      }
    }
  }
  return "unknown";
}

std::string env_or(const char* name, const char* fallback) {
  const char* v = std::getenv(name);
  return v ? v : fallback;
}

std::string default_json_path(int world_size) {
  return "bench/results/bench-" + host_name() + "-" + today() + "-np" + std::to_string(world_size) +
         ".json";
}

// Creates the folder of the JSON file and probes the file as every output is probed
// (io/output_files.hpp), before any timing.
void prepare_json_path(const std::string& path, bool force) {
  const std::filesystem::path p(path);
  if (path != "-" && p.has_parent_path()) {
    std::error_code ec;
    std::filesystem::create_directories(p.parent_path(), ec);
    if (ec)
      throw input_error(path + ": cannot create " + p.parent_path().string() + " (" + ec.message() +
                        ")");
  }
  probe_output(path, force, true);
}

void write_json(const std::string& path, const json& j, bool force) {
  write_text_output(path, j.dump(1) + "\n", force);
}

// Largest relative difference max|a - b| / max|b|.
double max_rel_diff(const std::vector<double>& a, const std::vector<double>& b) {
  double diff = 0, scale = 0;
  for (size_t i = 0; i < a.size() && i < b.size(); ++i) {
    diff = std::max(diff, std::abs(a[i] - b[i]));
    scale = std::max(scale, std::abs(b[i]));
  }
  if (a.size() != b.size()) return std::numeric_limits<double>::infinity();
  return scale > 0 ? diff / scale : diff;
}

// ---------------------------------------------------------------------------------------
// --accuracy: every cell mode against fp64 on a DFT, a DCT and a GEMM

CellMode cell_mode_at(int i) {
  return kCellModeTable[static_cast<size_t>(i)].mode;
}

// A mode that exists only for complex data (a real run would use its real part).
bool complex_only(CellMode m) {
  return m == CellMode::m3xu_fp32c;
}

// The [energy] section with the MAC energy of `mode`, exactly as triada-transform reads it
// for --cell-mode MODE [--mesh FILE]: built-in defaults (= meshcfg/default.ini) unless a
// file is given.
EnergyModel energy_for(CellMode mode, const std::string& mesh_file) {
  std::vector<std::string> args = {"triada-bench", "--input",     "unused.h5",
                                   "--output",     "unused.h5",   "--transform",
                                   "dct",          "--cell-mode", to_string(mode)};
  if (!mesh_file.empty()) {
    args.push_back("--mesh");
    args.push_back(mesh_file);
  }
  std::vector<char*> argv;
  for (auto& a : args) argv.push_back(a.data());
  std::ostringstream sink;
  const std::optional<TransformConfig> c =
      parse_transform_options(static_cast<int>(argv.size()), argv.data(), sink);
  if (!c) throw error("--accuracy: cannot read the energy model");
  return c->mesh.energy;
}

struct AccuracyCell {  // one (workload, cell mode)
  bool applicable = true;
  double max_rel = std::numeric_limits<double>::quiet_NaN();
  double mean_rel = std::numeric_limits<double>::quiet_NaN();
  std::uint64_t steps = 0, cycles = 0, macs = 0;
  double energy_mac_pj = 0, energy_total_pj = 0;
};

struct AccuracyWorkload {
  std::string name;         // dft, dct, gemm
  std::string description;  // one line
  bool complex = false;     // element type of the run
  std::array<int, 3> stage_order{3, 1, 2};
  std::array<CoeffMatrix, 3> coeffs;
  std::vector<AccuracyCell> cells;  // per mode, in enum order
};

CoeffMatrix identity_matrix(index_t n) {
  CoeffMatrix c;
  c.rows = c.cols = n;
  c.data.assign(static_cast<size_t>(n * n), cplx{0.0, 0.0});
  for (index_t i = 0; i < n; ++i) c(i, i) = cplx{1.0, 0.0};
  return c;
}

// N x K, entries uniform in [-1, 1) from the counter-based generator (stream 7001).
CoeffMatrix random_matrix(index_t n, index_t k, std::uint64_t seed) {
  CoeffMatrix c;
  c.rows = n;
  c.cols = k;
  c.data.resize(static_cast<size_t>(n * k));
  for (index_t i = 0; i < n * k; ++i)
    c.data[static_cast<size_t>(i)] = {
        2.0 * unit_interval(counter_hash(seed, 7001, static_cast<std::uint64_t>(i))) - 1.0, 0.0};
  return c;
}

double magnitude(double v) {
  return std::abs(v);
}
double magnitude(const cplx& v) {
  return std::abs(v);
}

// Runs `w` in every cell mode on the same input; errors against the fp64 run, reduced over
// the world (counters: complete on world rank 0).
template <class T>
void run_accuracy_workload(MPI_Comm world, const BenchConfig& cfg, const ext3& shape,
                           const std::vector<EnergyModel>& energies, AccuracyWorkload& w) {
  int size = 1;
  CHECK_MPI(MPI_Comm_size(world, &size));
  const int n_bricks = brick_rank_count(size, cfg.actuators);
  std::optional<Plan> plan;
  mpi::collectively(world, [&] {
    PlanRequest req;
    req.in_shape = shape;
    req.out_shape = {w.coeffs[0].cols, w.coeffs[1].cols, w.coeffs[2].cols};
    req.stage_order = w.stage_order;
    req.world_size = size;
    req.actuators = cfg.actuators;
    std::array<int, 3> dims{0, 0, 0};
    CHECK_MPI(MPI_Dims_create(n_bricks, 3, dims.data()));
    req.balanced_dims = dims;
    plan = make_plan(req);
  });
  const Topology topo(*plan, world);
  const std::uint64_t cells =
      static_cast<std::uint64_t>(plan->mesh[0] * plan->mesh[1] * plan->mesh[2]);
  std::vector<T> in;
  if (topo.is_brick()) {
    GenSpec spec = input_spec(shape, "dense", cfg.seed);
    generate_brick(spec, topo.cells().intersect(whole(shape)), in);
  }
  const double n_out = static_cast<double>(elements(plan->out_shape));
  std::vector<T> ref;  // this rank's fp64 output
  w.cells.assign(kCellModes, AccuracyCell{});
  for (int mi = 0; mi < kCellModes; ++mi) {
    const CellMode mode = cell_mode_at(mi);
    AccuracyCell& cell = w.cells[static_cast<size_t>(mi)];
    if (!is_complex_v<T> && complex_only(mode)) {
      cell.applicable = false;
      continue;
    }
    EngineOptions opt;
    opt.executor = Executor::fused;
    opt.mode = Mode::esop;
    opt.cell_mode = mode;
    opt.coefficients = [&](int axis) { return w.coeffs[static_cast<size_t>(axis - 1)]; };
    EngineResult<T> res = run_engine<T>(topo, opt, in);
    if (mode == CellMode::fp64) ref = res.out;
    // max |d|, max |ref| and a non-finite flag (MPI_MAX), sum |d| (MPI_SUM).
    std::array<double, 3> mine{0, 0, 0}, mx{0, 0, 0};
    double sum = 0, total = 0;
    for (size_t i = 0; i < res.out.size() && i < ref.size(); ++i) {
      const double d = magnitude(res.out[i] - ref[i]);
      if (!std::isfinite(d))
        mine[2] = 1;
      else
        mine[0] = std::max(mine[0], d), sum += d;
      mine[1] = std::max(mine[1], magnitude(ref[i]));
    }
    CHECK_MPI(MPI_Allreduce(mine.data(), mx.data(), 3, MPI_DOUBLE, MPI_MAX, world));
    CHECK_MPI(MPI_Allreduce(&sum, &total, 1, MPI_DOUBLE, MPI_SUM, world));
    const double scale = mx[1] > 0 ? mx[1] : 1.0;
    cell.max_rel = mx[2] > 0 ? std::numeric_limits<double>::infinity() : mx[0] / scale;
    cell.mean_rel = mx[2] > 0 ? std::numeric_limits<double>::infinity() : total / n_out / scale;
    cell.steps = res.counters.total_steps();
    cell.cycles = res.counters.total_cycles();
    cell.macs = res.counters.total(Counter::macs);
    const EnergyBreakdown e =
        energy_of(res.counters.stages, energies[static_cast<size_t>(mi)], cells);
    cell.energy_mac_pj = e[Counter::macs];
    cell.energy_total_pj = e.total();
  }
}

std::string order_str(const std::array<int, 3>& o) {
  return std::to_string(o[0]) + std::to_string(o[1]) + std::to_string(o[2]);
}

void print_accuracy_table(std::ostream& os, const ext3& shape,
                          const std::vector<AccuracyWorkload>& ws) {
  const auto sci = [](double v) { return std::isfinite(v) ? fmt("%.2e", v) : std::string("inf"); };
  os << "\naccuracy on " << shape_str(shape)
     << ": error = |y - y_fp64| / max|y_fp64| (max and mean over elements), same inputs "
        "(uniform [-1, 1)), fused executor, ESOP on\n";
  for (const AccuracyWorkload& w : ws)
    os << "  " << w.name << ": " << w.description << ", stage order " << order_str(w.stage_order)
       << ", " << w.cells[0].macs << " MACs, " << w.cells[0].cycles << " fp64 cycles\n";
  char buf[512];
  std::string head1 = "             ", head2 = "mode       s ";
  for (const AccuracyWorkload& w : ws) {
    std::snprintf(buf, sizeof buf, "| %-45s", w.name.c_str());
    head1 += buf;
    std::snprintf(buf, sizeof buf, "| %9s %9s %8s %6s %8s ", "max err", "mean err", "cycles",
                  "x fp64", "MAC uJ");
    head2 += buf;
  }
  os << head1 << "\n" << head2 << "\n";
  for (int mi = 0; mi < kCellModes; ++mi) {
    const CellMode mode = cell_mode_at(mi);
    std::snprintf(buf, sizeof buf, "%-10s %d ", to_string(mode).c_str(), substeps(mode));
    std::string line = buf;
    for (const AccuracyWorkload& w : ws) {
      const AccuracyCell& c = w.cells[static_cast<size_t>(mi)];
      if (!c.applicable) {
        std::snprintf(buf, sizeof buf, "| %-45s", "n/a (complex-only mode, real data)");
      } else {
        const double ratio = w.cells[0].cycles ? static_cast<double>(c.cycles) /
                                                     static_cast<double>(w.cells[0].cycles)
                                               : 0.0;
        std::snprintf(buf, sizeof buf, "| %9s %9s %8llu %6.2f %8.3f ", sci(c.max_rel).c_str(),
                      sci(c.mean_rel).c_str(), static_cast<unsigned long long>(c.cycles), ratio,
                      c.energy_mac_pj * 1e-6);
      }
      line += buf;
    }
    os << line << "\n";
  }
}

json accuracy_row(const ext3& shape, int mi, const std::vector<AccuracyWorkload>& ws,
                  const EnergyModel& energy) {
  const CellMode mode = cell_mode_at(mi);
  json row = {{"shape", {shape[0], shape[1], shape[2]}},
              {"cell_mode", to_string(mode)},
              {"substeps", substeps(mode)},
              {"mac_pj", energy.mac_pj()}};
  json per = json::object();
  for (const AccuracyWorkload& w : ws) {
    const AccuracyCell& c = w.cells[static_cast<size_t>(mi)];
    const AccuracyCell& f = w.cells[0];
    json j = {{"applicable", c.applicable},
              {"element", w.complex ? "complex" : "real"},
              {"substeps", substeps(mode, w.complex)}};
    if (!c.applicable) {
      j["max_rel_error"] = nullptr;
      j["mean_rel_error"] = nullptr;
      j["note"] =
          "m3xu-fp32c is a complex-only mode: not run on real data (a real run would "
          "use its real part, one exact product per MAC, at 2 sub-steps)";
    } else {
      j["max_rel_error"] = c.max_rel;
      j["mean_rel_error"] = c.mean_rel;
      j["steps"] = c.steps;
      j["cycles"] = c.cycles;
      j["cycles_fp64"] = f.cycles;
      j["cycles_ratio"] =
          f.cycles ? static_cast<double>(c.cycles) / static_cast<double>(f.cycles) : 0.0;
      j["macs"] = c.macs;
      j["energy_mac_pj"] = c.energy_mac_pj;
      j["energy_total_pj"] = c.energy_total_pj;
      j["energy_total_ratio"] = f.energy_total_pj > 0 ? c.energy_total_pj / f.energy_total_pj : 0.0;
    }
    per[w.name] = j;
  }
  row["workloads"] = per;
  return row;
}

int run_accuracy(const BenchConfig& cfg, MPI_Comm world) {
  int rank = 0, size = 1;
  CHECK_MPI(MPI_Comm_rank(world, &rank));
  CHECK_MPI(MPI_Comm_size(world, &size));
  std::vector<EnergyModel> energies;
  mpi::collectively(world, [&] {
    for (int mi = 0; mi < kCellModes; ++mi)
      energies.push_back(energy_for(cell_mode_at(mi), cfg.mesh));
  });
  if (rank == 0)
    std::cout << "triada-bench --accuracy: " << size << " rank" << (size > 1 ? "s" : "")
              << ", every cell mode against fp64 on the same inputs; MAC energies from "
              << (cfg.mesh.empty() ? std::string("the built-in defaults (meshcfg/default.ini)")
                                   : cfg.mesh)
              << "\n"
              << std::flush;
  json rows = json::array(), workloads = json::array();
  for (const ext3& shape : cfg.sizes) {
    std::vector<AccuracyWorkload> ws(3);
    ws[0].name = "dft";
    ws[0].description = "complex 3D DFT (norm ortho) of a complex input";
    ws[0].complex = true;
    ws[1].name = "dct";
    ws[1].description = "real 3D DCT-II (norm ortho)";
    ws[2].name = "gemm";
    ws[2].description = "GEMM as gemt: C1 random N1 x N1 in [-1, 1), C2 = C3 = I";
    ws[2].stage_order = {3, 2, 1};  // the identity stages first: the last stage is the GEMM
    for (int a = 0; a < 3; ++a) {
      const std::string what = "triada-bench --accuracy axis " + std::to_string(a + 1);
      ws[0].coeffs[static_cast<size_t>(a)] =
          make_coefficients(TransformKind::dft, shape[a], Norm::ortho, false, what);
      ws[1].coeffs[static_cast<size_t>(a)] =
          make_coefficients(TransformKind::dct, shape[a], Norm::ortho, false, what);
      ws[2].coeffs[static_cast<size_t>(a)] =
          a == 0 ? random_matrix(shape[0], shape[0], cfg.seed) : identity_matrix(shape[a]);
    }
    for (AccuracyWorkload& w : ws) {
      if (w.complex)
        run_accuracy_workload<cplx>(world, cfg, shape, energies, w);
      else
        run_accuracy_workload<double>(world, cfg, shape, energies, w);
      if (rank == 0)
        std::fprintf(stderr, "triada-bench --accuracy %s %s: done\n", shape_str(shape).c_str(),
                     w.name.c_str());
    }
    if (rank == 0) {
      print_accuracy_table(std::cout, shape, ws);
      for (int mi = 0; mi < kCellModes; ++mi)
        rows.push_back(accuracy_row(shape, mi, ws, energies[static_cast<size_t>(mi)]));
      if (workloads.empty())
        for (const AccuracyWorkload& w : ws)
          workloads.push_back({{"name", w.name},
                               {"description", w.description},
                               {"element", w.complex ? "complex" : "real"},
                               {"stage_order", order_str(w.stage_order)}});
    }
  }
  mpi::collectively(world, [&] {
    if (rank != 0) return;
    json j;
    j["schema"] = "triada-bench-accuracy/1";
    j["date"] = today();
    j["machine"] = {{"hostname", host_name()},
                    {"cpu_model", cpu_model()},
                    {"mpi_world_size", size},
                    {"brick_ranks", brick_rank_count(size, cfg.actuators)}};
    j["config"] = {{"seed", cfg.seed},
                   {"inputs",
                    "uniform in [-1, 1) from the counter-based generator (complex: "
                    "real and imaginary parts independent)"},
                   {"executor", "fused"},
                   {"esop", true},
                   {"norm", "ortho"},
                   {"mesh", cfg.mesh.empty() ? json(nullptr) : json(cfg.mesh)},
                   {"quick", cfg.quick}};
    j["workloads"] = workloads;
    j["definition"] =
        "max_rel_error = max |y - y_fp64| / max |y_fp64|, mean_rel_error = mean |y - y_fp64| / "
        "max |y_fp64| (complex: modulus), y_fp64 the fp64 run of the same input and matrices; "
        "cycles = time steps x the mode's sub-steps; energy_mac_pj = MACs x the mode's mac_pj; "
        "energy_total_pj: the whole energy model (buses, waits, static) with that mac_pj";
    j["accuracy"] = rows;
    write_json(cfg.json, j, cfg.force);
    if (cfg.json != "-") std::cout << "\nwrote " << cfg.json << "\n";
  });
  return 0;
}

}  // namespace

// ---------------------------------------------------------------------------------------

std::optional<BenchConfig> parse_bench_options(int argc, char** argv, std::ostream& help,
                                               int world_size) {
  std::string sizes = "32,64,128,256,100x60x90", sparsity = "dense,r50,r90,r99,lines90",
              variants = "fused,reference,openblas,fftw", reps = "3", ref_max = "32768",
              transform = "dct", actuators = "colocated", seed = "1", json_path, mesh;
  po::options_description desc("Options");
  // clang-format off
  desc.add_options()
    ("help,h", "print this help and exit")
    ("sizes", po::value(&sizes)->value_name("LIST")->default_value(sizes),
     "tensor shapes, comma-separated: N for an N^3 cube or N1xN2xN3")
    ("sparsity", po::value(&sparsity)->value_name("LIST")->default_value(sparsity),
     "input patterns (uniform values in [-1,1)): dense; r50, r90, r99 = 50/90/99% of the "
     "elements zero at random; lines90 = 90% of the (i1,i2) lines along axis 3 zero")
    ("variants", po::value(&variants)->value_name("LIST")->default_value(variants),
     "what to time: fused and reference (the TriADA executors, on every rank, ESOP on), "
     "openblas (3-mode product by cblas_dgemm, rank 0, one thread, in a child process "
     "without OPENBLAS_CORETYPE / OPENBLAS_L2_SIZE), fftw-dft, fftw-dct, fftw-dht (FFTW 3D "
     "transforms, rank 0, one thread); fftw = all three")
    ("reps", po::value(&reps)->value_name("N")->default_value(reps),
     "repetitions of each measurement; the best (smallest) time is reported")
    ("reference-max", po::value(&ref_max)->value_name("N")->default_value(ref_max),
     "run the reference executor only on shapes of at most N elements (it is ~100x slower)")
    ("transform", po::value(&transform)->value_name("T")->default_value(transform),
     "transform the fused / reference rows run (dct or dht, norm ortho, on every axis); "
     "their FFTW ratio is to fftw-dct or fftw-dht")
    ("actuators", po::value(&actuators)->value_name("auto|colocated")->default_value(actuators),
     "colocated: actuators live in brick ranks, so every rank computes; auto: 3 dedicated "
     "actuator ranks when there are at least 4 ranks")
    ("seed", po::value(&seed)->value_name("S")->default_value(seed),
     "seed of the counter-based input generator (the input does not depend on the ranks)")
    ("json", po::value(&json_path)->value_name("FILE"),
     "JSON output (default bench/results/bench-<host>-<date>-np<ranks>.json, relative to "
     "the working directory; the folder is created; - : standard output)")
    ("force", "overwrite an existing --json file")
    ("quick", "smoke-test mode for the test suite: sizes 16 and 12x10x8, reps 1, every "
     "variant (explicit --sizes / --reps still win); with --accuracy: size 16x12x10")
    ("accuracy", "instead of timing: run a complex 3D DFT, a real 3D DCT and a GEMM (gemt "
     "with C1 random, C2 = C3 = I) in every cell mode (fp64, fp32, tf32, bf16, fp16, "
     "m3xu-fp32, m3xu-fp32c, 3xtf32) and print max / mean relative error against the fp64 "
     "run of the same inputs, cycles and MAC energy per mode (size 32 unless --sizes; "
     "--sparsity, --variants, --reps, --transform are not used; JSON default "
     "bench/results/accuracy-<host>-<date>-np<ranks>.json)")
    ("mesh", po::value(&mesh)->value_name("FILE"),
     "--accuracy: mesh config whose [energy] mac_pj / mac_pj_<mode> keys give the MAC "
     "energies (default: the built-in defaults, which meshcfg/default.ini writes out)");
  // clang-format on
  const po::variables_map vm = parse_command_line_strict(argc, argv, desc);
  if (vm.count("help")) {
    help << "Usage: [mpirun -np K] triada-bench [options]\n"
         << "Times the TriADA fused and reference executors against a 3-mode product through\n"
         << "OpenBLAS dgemm and FFTW's 3D transforms on this machine, prints a table on rank 0\n"
         << "and writes one JSON row per (shape, sparsity, variant). Times are the simulation\n"
         << "only: after input generation, before any output. Baselines run on rank 0.\n"
         << "With --accuracy it instead compares every cell mode with fp64 on a 3D DFT, a 3D\n"
         << "DCT and a GEMM (error, cycles, MAC energy; doc/precision.md).\n\n"
         << desc << "\n";
    return std::nullopt;
  }
  BenchConfig c;
  c.quick = vm.count("quick") > 0;
  c.accuracy = vm.count("accuracy") > 0;
  c.mesh = mesh;
  if (vm.count("mesh") && mesh.empty()) throw config_error("--mesh: empty file name");
  if (!mesh.empty()) parse_mesh_file(mesh);  // a bad file fails up front, naming itself
  if (c.accuracy && vm["sizes"].defaulted())
    sizes = c.quick ? "16x12x10" : "32";
  else if (c.quick && vm["sizes"].defaulted())
    sizes = "16,12x10x8";
  if (c.quick && vm["reps"].defaulted()) reps = "1";
  for (const std::string& tok : split(sizes, ',')) c.sizes.push_back(parse_size(tok, "--sizes"));
  c.sparsities = parse_list(sparsity, "--sparsity", kSparsities, {});
  c.variants = parse_list(variants, "--variants", kVariants,
                          {{"fftw", {"fftw-dft", "fftw-dct", "fftw-dht"}}});
  if (!parse_int(reps, c.reps) || c.reps < 1 || c.reps > 1000)
    throw config_error("--reps: expected an integer in [1, 1000], got '" + printable(reps) + "'");
  if (!parse_int(ref_max, c.reference_max) || c.reference_max < 0)
    throw config_error("--reference-max: expected a non-negative integer, got '" +
                       printable(ref_max) + "'");
  c.transform = named("--transform", [&] { return parse_transform(transform); });
  if (c.transform != TransformKind::dct && c.transform != TransformKind::dht)
    throw config_error("--transform: expected dct or dht, got '" + printable(transform) + "'");
  if (actuators == "auto")
    c.actuators = ActuatorPlacement::automatic;
  else if (actuators == "colocated")
    c.actuators = ActuatorPlacement::colocated;
  else
    throw config_error("--actuators: expected auto or colocated, got '" + printable(actuators) +
                       "'");
  if (!parse_int(seed, c.seed))
    throw config_error("--seed: expected a non-negative integer, got '" + printable(seed) + "'");
  c.json = vm.count("json") ? json_path : default_json_path(world_size);
  if (c.accuracy && !vm.count("json"))
    c.json = "bench/results/accuracy-" + host_name() + "-" + today() + "-np" +
             std::to_string(world_size) + ".json";
  if (c.json.empty()) throw config_error("--json: empty file name");
  c.force = vm.count("force") > 0;
  return c;
}

bool is_openblas_child(int argc, char** argv) {
  return argc >= 2 && std::strcmp(argv[1], "--openblas-child") == 0;
}

int run_openblas_child(int argc, char** argv) {
  try {
    if (argc != 6) throw config_error("--openblas-child: expected N1xN2xN3 REPS TRANSFORM SEED");
    const ext3 shape = parse_size(argv[2], "--openblas-child");
    int reps = 0;
    std::uint64_t seed = 0;
    if (!parse_int(std::string(argv[3]), reps) || reps < 1)
      throw config_error("--openblas-child: bad REPS");
    const TransformKind kind = parse_transform(argv[4]);
    if (!parse_int(std::string(argv[5]), seed)) throw config_error("--openblas-child: bad SEED");
    openblas_set_num_threads(1);
    std::vector<double> x;
    generate_brick(input_spec(shape, "dense", seed), whole(shape), x);
    ThreeModeProduct p(shape, coefficients(kind, shape));
    double best = std::numeric_limits<double>::infinity();
    for (int r = 0; r < reps; ++r) {
      const auto t0 = Clock::now();
      p.run(x);
      best = std::min(best, seconds_since(t0));
    }
    json j;
    j["seconds"] = best;
    j["corename"] = openblas_get_corename();
    j["config"] = openblas_get_config();
    j["threads"] = openblas_get_num_threads();
    std::cout << j.dump() << std::endl;
    return 0;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "triada-bench (OpenBLAS child): error: %s\n", e.what());
    return dynamic_cast<const config_error*>(&e) ? 2 : 3;
  }
}

int run_bench(int argc, char** argv) {
  const MPI_Comm world = MPI_COMM_WORLD;
  int rank = 0, size = 1;
  CHECK_MPI(MPI_Comm_rank(world, &rank));
  CHECK_MPI(MPI_Comm_size(world, &size));
  openblas_set_num_threads(1);  // this process only verifies; the child measures

  std::optional<BenchConfig> parsed;
  std::ostringstream help;
  mpi::collectively(world, [&] { parsed = parse_bench_options(argc, argv, help, size); });
  if (!parsed) {
    if (rank == 0) std::cout << help.str();
    return 0;
  }
  const BenchConfig& cfg = *parsed;
  mpi::collectively(world, [&] {
    if (rank == 0) prepare_json_path(cfg.json, cfg.force);
  });
  if (cfg.accuracy) return run_accuracy(cfg, world);
  const auto has = [&](const std::string& v) {
    return std::find(cfg.variants.begin(), cfg.variants.end(), v) != cfg.variants.end();
  };
  const std::string load_start = load_average();  // other work on the machine skews timings
  const int n_bricks = brick_rank_count(size, cfg.actuators);
  const std::string fftw_match = fftw_variant_for(cfg.transform);

  // Rows to run, for the progress counter.
  int total_rows = 0;
  for (const ext3& s : cfg.sizes) {
    for (const auto& v : cfg.variants) total_rows += v != "fused" && v != "reference";
    total_rows += static_cast<int>(cfg.sparsities.size()) *
                  ((has("fused") ? 1 : 0) + (has("reference") && elements(s) <= cfg.reference_max));
  }
  size_t smallest = 0;
  for (size_t i = 1; i < cfg.sizes.size(); ++i)
    if (elements(cfg.sizes[i]) < elements(cfg.sizes[smallest])) smallest = i;

  if (rank == 0)
    std::cout << "triada-bench: " << size << " rank" << (size > 1 ? "s" : "") << " (" << n_bricks
              << " brick rank" << (n_bricks > 1 ? "s" : "") << ", actuators "
              << (cfg.actuators == ActuatorPlacement::colocated ? "colocated" : "auto") << "), "
              << to_string(cfg.transform) << " norm=ortho, stage order 312, ESOP on, best of "
              << cfg.reps << "\n"
              << "  times are the simulation only: after input generation, before any output; "
                 "baselines on rank 0, one thread;\n"
                 "  registers and baseline buffers are allocated and touched before timing\n"
              << std::flush;

  std::vector<Row> rows;
  std::vector<std::pair<ext3, double>> memory_floor;  // rank 0: memcpy of each shape
  std::string blas_corename, blas_config;
  std::array<int, 3> first_grid{1, 1, 1};
  std::string verification = "not run";
  double verification_diff = std::numeric_limits<double>::quiet_NaN();
  int done = 0;
  const auto progress = [&](const Row& r) {
    ++done;
    if (rank != 0) return;
    std::fprintf(stderr, "triada-bench [%d/%d] %s %s %s: %.6f s, %.3f GFLOP/s\n", done, total_rows,
                 shape_str(r.shape).c_str(), r.sparsity.c_str(), r.variant.c_str(), r.seconds,
                 r.gflops());
  };

  for (size_t si = 0; si < cfg.sizes.size(); ++si) {
    const ext3& shape = cfg.sizes[si];
    std::optional<Plan> plan;
    mpi::collectively(world, [&] {
      PlanRequest req;
      req.in_shape = shape;
      req.out_shape = shape;
      req.stage_order = {3, 1, 2};
      req.world_size = size;
      req.actuators = cfg.actuators;
      std::array<int, 3> dims{0, 0, 0};
      CHECK_MPI(MPI_Dims_create(n_bricks, 3, dims.data()));
      req.balanced_dims = dims;
      plan = make_plan(req);
    });
    if (si == 0) first_grid = plan->ranks.grid;
    {  // Up-front memory check: the engine's prediction, and on rank 0 the baselines'
       // buffers (FFTW: the input and two complex arrays, 40 bytes an element).
      const std::string what = "--sizes " + shape_str(shape);
      std::uint64_t need = 0;
      mpi::collectively(world, [&] {
        need = predict_memory(*plan, rank, {}, what).node_share();
        if (rank == 0)
          need = checked_add(
              need, checked_mul(checked_product<std::uint64_t>(shape, what), 40u, what), what);
      });
      require_node_memory(world, need, what);
    }
    const Topology topo(*plan, world, sizeof(double));
    const std::array<CoeffMatrix, 3> coeffs = coefficients(cfg.transform, shape);
    const std::uint64_t mdense = macs_dense(*plan);
    std::vector<int> axes;
    for (const auto& st : plan->stages) axes.push_back(st.axis);

    // Baselines: rank 0 alone, one thread, dense input. The other ranks wait asleep (not
    // spinning in a collective) so that the baseline has its core and the memory system to
    // itself; a failure on rank 0 is then agreed by every rank.
    std::vector<Row> base;
    std::exception_ptr baseline_failure;
    if (rank == 0) try {
        const auto baseline_row = [&](const std::string& variant, double seconds) {
          Row r;
          r.shape = shape;
          r.sparsity = "dense";
          r.variant = variant;
          r.seconds = seconds;
          r.macs = r.macs_dense = dense_macs(shape);
          base.push_back(r);
          progress(r);
        };
        {  // The memory floor of one stage: one read and one write of the tensor.
          std::vector<double> src(static_cast<size_t>(elements(shape)), 1.0), dst(src.size(), 0.0);
          double best = std::numeric_limits<double>::infinity();
          for (int r = 0; r < std::max(cfg.reps, 3); ++r) {
            const auto t0 = Clock::now();
            std::memcpy(dst.data(), src.data(), src.size() * sizeof(double));
            best = std::min(best, seconds_since(t0));
          }
          memory_floor.emplace_back(shape, best);
        }
        if (has("openblas")) {
          const OpenblasResult ob = spawn_openblas_child(shape, cfg.reps, cfg.transform, cfg.seed);
          blas_corename = ob.corename;
          blas_config = ob.config;
          baseline_row("openblas", ob.seconds);
        }
        bool any_fftw = false;
        for (const auto& v : cfg.variants) any_fftw |= v.starts_with("fftw-");
        if (any_fftw) {
          std::vector<double> x;
          generate_brick(input_spec(shape, "dense", cfg.seed), whole(shape), x);
          for (const auto& v : cfg.variants)
            if (v.starts_with("fftw-")) baseline_row(v, time_fftw(v, shape, x, cfg.reps));
        }
      } catch (...) {
        baseline_failure = std::current_exception();
      }
    sleepy_barrier(world);
    mpi::collectively(world, [&] {
      if (baseline_failure) std::rethrow_exception(baseline_failure);
    });
    if (rank != 0)
      for (const auto& v : cfg.variants) done += v != "fused" && v != "reference";
    rows.insert(rows.end(), base.begin(), base.end());

    for (size_t pi = 0; pi < cfg.sparsities.size(); ++pi) {
      const std::string& sp = cfg.sparsities[pi];
      const GenSpec spec = input_spec(shape, sp, cfg.seed);
      std::vector<double> in;
      index_t local_nnz = 0, nnz = 0;
      if (topo.is_brick())
        local_nnz = generate_brick(spec, topo.cells().intersect(whole(shape)), in);
      CHECK_MPI(MPI_Allreduce(&local_nnz, &nnz, 1, MPI_INT64_T, MPI_SUM, world));
      for (const Executor ex : {Executor::fused, Executor::reference}) {
        if (!has(to_string(ex))) continue;
        if (ex == Executor::reference && elements(shape) > cfg.reference_max) continue;
        EngineTiming t = time_engine(topo, coeffs, ex, in, cfg.reps);
        Row r;
        r.shape = shape;
        r.sparsity = sp;
        r.variant = to_string(ex);
        r.ranks = size;
        r.brick_ranks = n_bricks;
        r.grid = plan->ranks.grid;
        r.seconds = t.seconds;
        r.macs = t.counters.total(Counter::macs);
        r.macs_dense = mdense;
        r.steps = t.counters.total_steps();
        r.input_nonzeros = static_cast<std::uint64_t>(nnz);
        r.stage_seconds = t.stage_seconds;
        r.stage_axes = axes;
        rows.push_back(r);
        progress(r);

        // Sanity check (not the test oracle): fused equals the OpenBLAS product on the
        // smallest shape's first input pattern.
        if (si == smallest && pi == 0 && ex == Executor::fused && has("openblas")) {
          const std::vector<double> y = gather_on_root(world, shape, t.out_box, t.out);
          mpi::collectively(world, [&] {
            if (rank != 0) return;
            std::vector<double> x;
            generate_brick(spec, whole(shape), x);
            ThreeModeProduct p(shape, coeffs);
            p.run(x);
            verification_diff = max_rel_diff(y, p.result());
            verification = verification_diff <= 1e-10 ? "verified" : "MISMATCH";
            if (verification_diff > 1e-10)
              throw error("fused and OpenBLAS results differ on " + shape_str(shape) + " " + sp +
                          ": max relative difference " + fmt("%.3g", verification_diff));
          });
        }
      }
    }
  }

  // Report on rank 0, agreed so that a failure (e.g. the JSON not written) ends every rank.
  mpi::collectively(world, [&] {
    if (rank != 0) return;
    fill_ratios(rows, cfg.transform);

    // Report: machine, notes, table.
    const std::string inherited_core = openblas_get_corename();
    const std::string load_end = load_average();
    std::cout << "machine: " << host_name() << ", " << cpu_model() << ", "
              << sysconf(_SC_NPROCESSORS_ONLN) << " cores; MPI world " << size << ", brick grid "
              << first_grid[0] << "x" << first_grid[1] << "x" << first_grid[2] << "; load average "
              << load_start << " at start, " << load_end << " at end\n";
    if (has("openblas")) {
      std::cout << "OpenBLAS kernel: " << blas_corename
                << " (OPENBLAS_CORETYPE, OPENBLAS_L2_SIZE unset for this measurement; this "
                   "environment has OPENBLAS_CORETYPE="
                << env_or("OPENBLAS_CORETYPE", "(unset)")
                << ", OPENBLAS_L2_SIZE=" << env_or("OPENBLAS_L2_SIZE", "(unset)")
                << ", which would give " << inherited_core << ")\n";
      std::cout << "OpenBLAS vs fused on " << shape_str(cfg.sizes[smallest]) << " "
                << cfg.sparsities.front() << ": max relative difference "
                << fmt("%.2e", verification_diff) << " -> " << verification << "\n";
    }
    std::cout
        << "FFTW: " << fftw_version << ", FFTW_MEASURE planning not timed\n"
        << "GFLOP/s = useful MACs / s / 1e9 (one MAC = one multiply-add; fused/reference: "
           "executed MACs, baselines: the dense 3-mode product's MACs N1N2N3(N1+N2+N3));\n"
        << "xOpenBLAS, x" << fftw_match
        << " = baseline seconds / row seconds, same shape (> 1: faster than the baseline)\n\n";
    print_table(std::cout, rows, cfg.transform);
    std::cout
        << "\nmemory floor of one stage (rank 0 copies the tensor once: one read, one write):";
    for (const auto& [fs, fsec] : memory_floor)
      std::cout << " " << shape_str(fs) << " " << fmt("%.6f", fsec) << " s;";
    std::cout << "\n";

    json j;
    j["schema"] = "triada-bench/1";
    j["date"] = today();
    j["machine"] = {
        {"hostname", host_name()},
        {"cpu_model", cpu_model()},
        {"cores", sysconf(_SC_NPROCESSORS_ONLN)},
        {"loadavg_start", load_start},
        {"loadavg_end", load_end},
        {"openblas_corename", has("openblas") ? json(blas_corename) : json(nullptr)},
        {"openblas_config", has("openblas") ? json(blas_config) : json(nullptr)},
        {"openblas_corename_with_inherited_env", inherited_core},
        {"env_OPENBLAS_CORETYPE", env_or("OPENBLAS_CORETYPE", "")},
        {"env_OPENBLAS_L2_SIZE", env_or("OPENBLAS_L2_SIZE", "")},
        {"fftw_version", std::string(fftw_version)},
        {"compiler", __VERSION__},
        {"mpi_world_size", size},
        {"brick_ranks", n_bricks},
        {"brick_grid", {first_grid[0], first_grid[1], first_grid[2]}},
        {"actuators", cfg.actuators == ActuatorPlacement::colocated ? "colocated" : "auto"},
    };
    j["memory_floor"] = json::array();
    for (const auto& [fs, fsec] : memory_floor)
      j["memory_floor"].push_back({{"shape", {fs[0], fs[1], fs[2]}}, {"seconds", fsec}});
    j["config"] = {{"transform", to_string(cfg.transform)},
                   {"norm", "ortho"},
                   {"stage_order", {3, 1, 2}},
                   {"esop", true},
                   {"reps", cfg.reps},
                   {"reference_max", cfg.reference_max},
                   {"seed", cfg.seed},
                   {"quick", cfg.quick}};
    j["verification"] = {
        {"shape", {cfg.sizes[smallest][0], cfg.sizes[smallest][1], cfg.sizes[smallest][2]}},
        {"sparsity", cfg.sparsities.front()},
        {"max_rel_diff", nullable(verification_diff)},
        {"result", verification}};
    j["notes"] = {
        "times are the simulation only: after input generation, before any output",
        "seconds: best of reps; fused/reference: max over ranks of run_engine's wall time after "
        "a barrier; stage_seconds: world rank 0's time to the end of each stage, in stage order",
        "fused/reference: each brick's second register is allocated and touched once before the "
        "reps, as the openblas buffers are, so page faults of first touch are not timed",
        "memory_floor: rank 0's best memcpy of the whole tensor into a touched buffer (one read "
        "and one write), a lower bound for any stage that reads V and writes W on one core",
        "gflops = useful MACs / seconds / 1e9, one MAC = one multiply-add; fused/reference: "
        "counters.macs (MACs executed under ESOP); openblas and fftw rows: the dense 3-mode "
        "product's MAC count N1 N2 N3 (N1+N2+N3) over their time, so ratios compare like with like",
        "openblas and fftw rows run on world rank 0 alone, one thread, on the dense input",
        "ratio_openblas, ratio_fftw: baseline seconds / row seconds of the same shape (> 1: faster "
        "than the baseline); ratio_fftw is to fftw of the transform the engine rows run",
        "openblas: cblas_dgemm 3-mode product (stage 3, 1, 2) in a child process without "
        "OPENBLAS_CORETYPE and OPENBLAS_L2_SIZE (machine.openblas_corename is its kernel)",
        "fftw-dft: complex 3D DFT of the real input; fftw-dct: REDFT10 (DCT-II); fftw-dht: "
        "separable 3D DHT; FFTW_MEASURE planning not timed",
    };
    json jr = json::array();
    for (const Row& r : rows) jr.push_back(row_json(r));
    j["rows"] = jr;
    write_json(cfg.json, j, cfg.force);
    if (cfg.json != "-") std::cout << "\nwrote " << cfg.json << "\n";
  });
  return 0;
}

}  // namespace triada
