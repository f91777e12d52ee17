// `netdaq run` with rx.reorder: GPU pipeline lines of the summary and their JSON.
#pragma once

#include <cstdio>

#include <nlohmann/json.hpp>

#include "traffic.h"

namespace netdaq::cli {

void print_gpu_summary(std::FILE* out, const TrafficResult& r);
nlohmann::ordered_json gpu_json(const TrafficResult& r);

}  // namespace netdaq::cli
