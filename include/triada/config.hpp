#pragma once
// The configs the jobs take (each program's options as a struct) and the mesh INI file's
// keys (parse_mesh_file).
#include "config/mesh_config.hpp"
#include "jobs/conv_config.hpp"
#include "jobs/tcu_config.hpp"
#include "jobs/transform_config.hpp"
