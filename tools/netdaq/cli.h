// Subcommands of the netdaq CLI. Each cmd_*.cpp adds its subcommand to the app; the callback
// stores the process exit code in *exit_code.
#pragma once

#include <CLI/CLI.hpp>

namespace netdaq::cli {

// Exit codes (docs/cli.md).
inline constexpr int kExitOk = 0;
inline constexpr int kExitError = 1;    // invalid config, bad option, setup failure
inline constexpr int kExitLoss = 2;     // --expect-no-loss and something was lost or dropped
inline constexpr int kExitUnaccounted = 3;  // bench: lost != counted drops (bench_check.h), duplicates, malformed

void add_run_command(CLI::App& app, int* exit_code);
void add_bench_command(CLI::App& app, int* exit_code);
void add_validate_command(CLI::App& app, int* exit_code);
void add_capture_command(CLI::App& app, int* exit_code);
void add_check_command(CLI::App& app, int* exit_code);
void add_replay_command(CLI::App& app, int* exit_code);
void add_roce_recv_command(CLI::App& app, int* exit_code);
void add_roce_send_command(CLI::App& app, int* exit_code);
void add_video_send_command(CLI::App& app, int* exit_code);
void add_ingest_command(CLI::App& app, int* exit_code);
void add_build_command(CLI::App& app, int* exit_code);

// The embedded default configuration (examples/loopback.yaml at build time).
const char* default_config_text() noexcept;
const char* default_config_name() noexcept;

}  // namespace netdaq::cli
