// triada-conv: thin main; the work is in job.cpp. Serial: every rank parses the options (so a
// bad option or network file ends all ranks together), rank 0 alone runs the layers.
#include "apps/common/serial_main.hpp"
#include "apps/conv/job.hpp"

int main(int argc, char** argv) {
  return triada::serial_main("triada-conv", argc, argv, triada::parse_conv_options,
                             triada::run_conv_job);
}
