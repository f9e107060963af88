#pragma once
// The external-memory I/O lower bounds that the TCU paper's Theorem 12 (Sec. 5) transfers to
// the weak TCU model: a problem needing F I/Os in an external memory of M = 3m + O(1) words
// and block B = 1 needs Omega(F) time on a weak (m, l)-TCU. Reported beside the model time
// for the problems whose I/O bound is known; the transfer is asymptotic (Omega), so the
// value is the external-memory bound itself, not an inequality the model time must meet.
#include <cstdint>
#include <optional>
#include <string>

namespace triada {

struct IoLowerBound {
  std::optional<double> value;  // I/Os (words, B = 1) at M = 3m; none when not known
  std::string formula;          // the bound as text, in the algorithm's size
  std::string source;           // where the bound comes from
  std::string reason;           // why there is no value (empty when there is one)
};

// `algo` as in tcu_algorithms(), `size` its natural size (matrix side for matmul), m the
// unit size.
IoLowerBound tcu_io_lower_bound(const std::string& algo, double size, std::int64_t m);

}  // namespace triada
