#pragma once
// The one exception hierarchy: config_error (the programs' exit code 2), input_error (1),
// mpi_error, hdf5_error, error (3); and how a message is made fit for one terminal line.
#include "core/error.hpp"
#include "jobs/messages.hpp"
