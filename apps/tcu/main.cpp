// triada-tcu: thin main, argv -> config -> job (jobs/tcu_job.hpp). Every rank parses the
// options (so a bad option ends all ranks together); a sweep's points are split over the
// ranks, a single run is rank 0's, and rank 0 writes the one report.
#include "apps/common/serial_main.hpp"
#include "apps/tcu/options.hpp"
#include "jobs/tcu_job.hpp"

int main(int argc, char** argv) {
  return triada::serial_main<triada::TcuJob>("triada-tcu", argc, argv, triada::parse_tcu_options);
}
