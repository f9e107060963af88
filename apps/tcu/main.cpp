// triada-tcu: thin main; the work is in job.cpp. Serial: every rank parses the options (so a
// bad option ends all ranks together), rank 0 alone runs the algorithm.
#include "apps/common/serial_main.hpp"
#include "apps/tcu/job.hpp"

int main(int argc, char** argv) {
  return triada::serial_main("triada-tcu", argc, argv, triada::parse_tcu_options,
                             triada::run_tcu_job);
}
