// Where the tests find the source tree and the CLI binary. The paths live in one generated
// file (test_paths.cpp) instead of -D flags on every test source, so a build in another
// checkout reuses the compiled test sources from ccache (scripts/build.sh).
#pragma once

namespace netdaq::test {
const char* source_dir();  // the checkout's root
const char* cli_path();    // the built `netdaq` binary
}  // namespace netdaq::test

#define NETDAQ_SOURCE_DIR (::netdaq::test::source_dir())
#define NETDAQ_CLI (::netdaq::test::cli_path())
