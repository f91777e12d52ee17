// Applications' own top-level config blocks (netdaq/app_block.h): where they are registered,
// how the loader reads them and how the validator checks their declared ranges.
#pragma once

#include <string>
#include <vector>

#include "netdaq/app_block.h"

namespace YAML {
class Node;
}

namespace netdaq::detail {

class Checker;
class YamlReader;

// The registered blocks, in registration order (copies: a block may be replaced meanwhile).
std::vector<AppBlock> app_blocks();
// Reads `node` (the block under its key) into `block` with the reader's messages.
void read_app_block(YamlReader& r, const YAML::Node& node, const std::string& path, const AppBlock& spec,
                    OptionBlock& block);
// The declared ranges of every block set in the config, then each block's own check.
void check_app_blocks(Checker& c);
// True when the config sets a block that needs no interfaces (AppBlock::without_interfaces).
bool app_block_without_interfaces(const Config& cfg);

}  // namespace netdaq::detail
