#pragma once
// The JSON report and summary of a run, and its provenance record.
#include "jobs/provenance.hpp"
#include "report/provenance.hpp"
#include "report/report.hpp"
