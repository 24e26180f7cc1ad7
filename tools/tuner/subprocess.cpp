#include "subprocess.h"

#include <poll.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstring>
#include <sstream>

namespace attngen::tuner {

namespace {

// One line: "<outcome index> <median_ms> <compile_s> <runs> <detail...>".
std::string serialize(const Measurement &m) {
    std::ostringstream s;
    s << static_cast<int>(m.outcome) << ' ' << m.median_ms << ' ' << m.compile_s << ' ' << m.runs
      << ' ';
    for (char c : m.detail) s << (c == '\n' ? ' ' : c);
    s << '\n';
    return s.str();
}

Measurement deserialize(const std::string &line) {
    Measurement m;
    std::istringstream s(line);
    int outcome = 0;
    s >> outcome >> m.median_ms >> m.compile_s >> m.runs;
    m.outcome = static_cast<Measurement::Outcome>(outcome);
    std::getline(s >> std::ws, m.detail);
    return m;
}

Measurement failure(Measurement::Outcome outcome, const std::string &detail) {
    Measurement m;
    m.outcome = outcome;
    m.detail = detail;
    return m;
}

}  // namespace

Measurement measure_in_child(const Variant &kernel, const TuneShape &shape,
                             const std::string &target, const MeasureOptions &options,
                             double timeout_seconds) {
    int fds[2];
    if (pipe(fds) != 0) return failure(Measurement::Outcome::kCrashed, "pipe() failed");
    std::fflush(nullptr);
    const pid_t pid = fork();
    if (pid < 0) {
        close(fds[0]);
        close(fds[1]);
        return failure(Measurement::Outcome::kCrashed, "fork() failed");
    }
    if (pid == 0) {
        close(fds[0]);
        Measurement m;
        try {
            m = measure(kernel, shape, target, options);
        } catch (const std::exception &e) {
            m = failure(Measurement::Outcome::kCompileFailed, e.what());
        }
        const std::string line = serialize(m);
        ssize_t written = write(fds[1], line.data(), line.size());
        (void)written;
        close(fds[1]);
        _exit(0);
    }
    close(fds[1]);
    std::string output;
    const auto start = std::chrono::steady_clock::now();
    bool timed_out = false;
    while (true) {
        const double elapsed =
            std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
        const int remaining_ms = static_cast<int>((timeout_seconds - elapsed) * 1000);
        if (remaining_ms <= 0) {
            timed_out = true;
            break;
        }
        pollfd p{fds[0], POLLIN, 0};
        const int ready = poll(&p, 1, remaining_ms);
        if (ready < 0 && errno == EINTR) continue;
        if (ready <= 0) {
            timed_out = ready == 0;
            break;
        }
        char buffer[4096];
        const ssize_t n = read(fds[0], buffer, sizeof(buffer));
        if (n <= 0) break;  // The child closed the pipe (done or dead).
        output.append(buffer, static_cast<std::size_t>(n));
    }
    close(fds[0]);
    if (timed_out) kill(pid, SIGKILL);
    int status = 0;
    waitpid(pid, &status, 0);
    if (timed_out) {
        return failure(Measurement::Outcome::kTimeout,
                       "stopped after " + std::to_string(static_cast<int>(timeout_seconds)) + " s");
    }
    if (WIFSIGNALED(status)) {
        return failure(Measurement::Outcome::kCrashed,
                       std::string("killed by signal ") + strsignal(WTERMSIG(status)));
    }
    if (output.empty()) return failure(Measurement::Outcome::kCrashed, "no result from the child");
    return deserialize(output);
}

}  // namespace attngen::tuner
