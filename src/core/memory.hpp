#pragma once
// Resident memory of this process (Linux): current, from /proc/self/statm, and peak,
// from getrusage.
#include <sys/mman.h>
#include <sys/resource.h>
#include <unistd.h>

#include <cstdint>
#include <cstdio>
#include <vector>

namespace triada {

inline long peak_rss_bytes() {
  rusage u{};
  getrusage(RUSAGE_SELF, &u);
  return u.ru_maxrss * 1024L;  // kilobytes on Linux
}

inline long current_rss_bytes() {
  long pages = 0, resident = 0;
  if (std::FILE* f = std::fopen("/proc/self/statm", "r")) {
    if (std::fscanf(f, "%ld %ld", &pages, &resident) != 2) resident = 0;
    std::fclose(f);
  }
  return resident * sysconf(_SC_PAGESIZE);
}

// Reserves room for n elements and asks for transparent huge pages on it before it is
// first touched: a brick register of many MB then costs hundreds, not hundreds of
// thousands, of page faults. Only a hint; harmless where THP is off.
template <class T>
void reserve_huge(std::vector<T>& v, std::size_t n) {
  v.reserve(n);
  constexpr std::uintptr_t huge = std::uintptr_t{2} << 20;
  const auto lo = (reinterpret_cast<std::uintptr_t>(v.data()) + huge - 1) & ~(huge - 1);
  const auto hi = (reinterpret_cast<std::uintptr_t>(v.data() + v.capacity())) & ~(huge - 1);
  if (hi > lo) madvise(reinterpret_cast<void*>(lo), hi - lo, MADV_HUGEPAGE);
}

}  // namespace triada
