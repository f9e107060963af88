// The baselines: a 3-mode product by OpenBLAS dgemm in a child process, FFTW's 3D
// transforms (one thread, FFTW_MEASURE planning outside the timing) and the memory floor.
#include <cblas.h>
#include <fcntl.h>
#include <fftw3.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <iostream>
#include <memory>

#include "apps/bench/bench.hpp"
#include "core/error.hpp"

extern char** environ;

namespace triada {
namespace bench {

namespace {

std::vector<double> real_part(const CoeffMatrix& c) {
  std::vector<double> r(c.data.size());
  for (size_t i = 0; i < r.size(); ++i) r[i] = c.data[i].real();
  return r;
}

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

}  // namespace

ThreeModeProduct::ThreeModeProduct(const ext3& shape, const std::array<CoeffMatrix, 3>& c)
    : n_(shape), c1_(real_part(c[0])), c2_(real_part(c[1])), c3_(real_part(c[2])) {
  for (int a = 0; a < 3; ++a) k_[a] = c[a].cols;
  // Touch every buffer once here, so no first-touch page fault lands in a timed run.
  t1_.assign(static_cast<size_t>(n_[0] * n_[1] * k_[2]), 0.0);
  t2_.assign(static_cast<size_t>(k_[0] * n_[1] * k_[2]), 0.0);
  y_.assign(static_cast<size_t>(k_[0] * k_[1] * k_[2]), 0.0);
}

void ThreeModeProduct::run(const std::vector<double>& x) {
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

int ThreeModeProduct::blas_int(index_t v) {
  if (v > std::numeric_limits<int>::max()) throw input_error("OpenBLAS: extent too large");
  return static_cast<int>(v);
}

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

double memory_floor_seconds(const ext3& shape, int reps) {
  std::vector<double> src(static_cast<size_t>(elements(shape)), 1.0), dst(src.size(), 0.0);
  double best = std::numeric_limits<double>::infinity();
  for (int r = 0; r < std::max(reps, 3); ++r) {
    const auto t0 = Clock::now();
    std::memcpy(dst.data(), src.data(), src.size() * sizeof(double));
    best = std::min(best, seconds_since(t0));
  }
  return best;
}

std::string openblas_corename() {
  return openblas_get_corename();
}

const char* fftw_version_string() {
  return fftw_version;
}

void set_openblas_threads(int n) {
  openblas_set_num_threads(n);
}

}  // namespace bench

using namespace bench;

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

}  // namespace triada
