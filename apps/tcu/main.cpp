// triada-tcu: thin main; the work is in jobs/tcu_job.cpp. Every rank parses the options (so a bad
// option ends all ranks together); a sweep's points are split over the ranks, a single run
// is rank 0's, and rank 0 writes the one report.
#include "apps/common/serial_main.hpp"
#include "apps/tcu/options.hpp"
#include "jobs/tcu_job.hpp"

int main(int argc, char** argv) {
  return triada::serial_main("triada-tcu", argc, argv, triada::parse_tcu_options,
                             triada::run_tcu_job);
}
