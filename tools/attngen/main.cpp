// attngen: run attention kernels on .npy files, list the compiled kernels, run the demo.
#include <unistd.h>

#include <CLI/CLI.hpp>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <exception>
#include <string>
#include <vector>

#include "cli_error.h"
#include "commands.h"

namespace {

// `attngen tune ...` runs the tuner, attngen-tune, a separate program because it links Halide's
// compiler, which the rest of the command line does not need. It is looked for next to this
// program (an installation), in ../tuner (a build tree), then on PATH.
int run_tuner(int argc, char **argv) {
    char self[4096];
    const ssize_t n = readlink("/proc/self/exe", self, sizeof(self) - 1);
    std::vector<std::string> candidates;
    if (n > 0) {
        self[n] = '\0';
        std::string dir(self);
        dir = dir.substr(0, dir.rfind('/'));
        candidates = {dir + "/attngen-tune", dir + "/tuner/attngen-tune"};
    }
    std::vector<char *> args{const_cast<char *>("attngen-tune")};
    for (int i = 2; i < argc; i++) args.push_back(argv[i]);
    args.push_back(nullptr);
    for (const auto &path : candidates) {
        if (access(path.c_str(), X_OK) == 0) execv(path.c_str(), args.data());
    }
    execvp("attngen-tune", args.data());
    std::fprintf(stderr,
                 "attngen: error: cannot run attngen-tune (%s); it is built with the "
                 "native build of attngen\n",
                 std::strerror(errno));
    return attngen::cli::kExitFailure;
}

}  // namespace

int main(int argc, char **argv) {
    using namespace attngen::cli;
    if (argc >= 2 && std::string(argv[1]) == "tune") return run_tuner(argc, argv);
    CLI::App app{"attngen: attention kernels generated with Halide"};
    app.require_subcommand(1);
    add_attention_command(app);
    add_mha_command(app);
    add_list_command(app);
    add_demo_command(app);
    // Listed for --help only: main() hands `attngen tune ...` to attngen-tune before parsing.
    app.add_subcommand("tune", "Search schedule parameters on this machine (attngen tune --help)");
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
