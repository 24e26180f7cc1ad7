// The subcommands of the attngen command line. Each registers its options on the CLI11 app and
// runs when selected; failures are thrown as cli::Error.
#pragma once

#include <CLI/CLI.hpp>

namespace attngen::cli {

void add_attention_command(CLI::App &app);
void add_mha_command(CLI::App &app);
void add_list_command(CLI::App &app);
void add_demo_command(CLI::App &app);

}  // namespace attngen::cli
