// The YAML schema: which keys exist and how each one maps onto a Config field.
#pragma once

#include "core/yaml_reader.h"
#include "netdaq/config.h"

namespace netdaq::detail {

// Fills `cfg` from the document root; problems go to the reader's issue list.
void read_config(YamlReader& r, const YAML::Node& root, Config& cfg);

}  // namespace netdaq::detail
