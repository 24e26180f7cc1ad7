// attngen: run attention kernels on .npy files, list the compiled kernels, run the demo.
#include <CLI/CLI.hpp>
#include <cstdio>
#include <exception>

#include "cli_error.h"
#include "commands.h"

int main(int argc, char **argv) {
    using namespace attngen::cli;
    CLI::App app{"attngen: attention kernels generated with Halide"};
    app.require_subcommand(1);
    add_attention_command(app);
    add_mha_command(app);
    add_list_command(app);
    add_demo_command(app);
    try {
        app.parse(argc, argv);
    } catch (const CLI::CallForHelp &e) {
        return app.exit(e);
    } catch (const CLI::CallForAllHelp &e) {
        return app.exit(e);
    } catch (const CLI::ParseError &e) {
        std::fprintf(stderr, "attngen: error: %s (see attngen --help)\n", e.what());
        return kExitBadInput;
    } catch (const Error &e) {
        std::fprintf(stderr, "attngen: error: %s\n", e.what());
        return e.code();
    } catch (const std::exception &e) {
        std::fprintf(stderr, "attngen: error: %s\n", e.what());
        return kExitFailure;
    }
    return kExitOk;
}
