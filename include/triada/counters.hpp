#pragma once
// What a run counts: bus events, MACs, MPI traffic, per stage and in total.
#include "counters/counters.hpp"
