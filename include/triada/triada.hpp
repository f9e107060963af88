#pragma once
// The whole public API in one include: #include <triada/triada.hpp> and link triada::triada
// (find_package(triada)). Each part is also a header of its own: <triada/jobs.hpp>,
// config, plan, counters, report, errors, version.
#include <triada/config.hpp>
#include <triada/counters.hpp>
#include <triada/errors.hpp>
#include <triada/jobs.hpp>
#include <triada/plan.hpp>
#include <triada/report.hpp>
#include <triada/version.hpp>
