#pragma once
// The jobs: what a run of triada-transform, triada-tcu and triada-conv is, as library calls
// on a validated config (<triada/config.hpp>) and a communicator, returning the report.
// A transform (TransformJob) reads and writes HDF5 files or the caller's arrays
// (ArrayInputs, array_view). doc/cpp.md.
#include "jobs/array_view.hpp"
#include "jobs/conv_job.hpp"
#include "jobs/tcu_job.hpp"
#include "jobs/transform_job.hpp"
