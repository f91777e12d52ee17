// The unit tests load the example files, which hold the CLI's `run:` block: declared to the
// loader before any test runs, as `netdaq` does in main().
#include "run_block.h"

namespace {
const bool kRunBlockRegistered = (netdaq::cli::register_run_block(), true);
}  // namespace
