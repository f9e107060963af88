// triada-conv: thin main, argv -> config -> job (jobs/conv_job.hpp). Every rank parses the
// options (so a bad option or network file ends all ranks together); the layers' work units
// are split over the ranks (jobs/conv_distributed.hpp) and rank 0 writes the one report.
#include "apps/common/serial_main.hpp"
#include "apps/conv/options.hpp"
#include "jobs/conv_job.hpp"

int main(int argc, char** argv) {
  return triada::serial_main<triada::ConvJob>("triada-conv", argc, argv,
                                              triada::parse_conv_options);
}
