#include "cpu_usage.h"

#include <unistd.h>

#include <chrono>
#include <ctime>
#include <fstream>
#include <string>

namespace attngen::bench {

namespace {

double real_seconds() {
    return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch())
        .count();
}

double process_cpu_seconds() {
    timespec now{};
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &now);
    return static_cast<double>(now.tv_sec) + 1e-9 * static_cast<double>(now.tv_nsec);
}

// CPU time that all cores of the machine spent not idle, from the first line of /proc/stat
// ("cpu user nice system idle iowait irq softirq steal ..." in clock ticks). Steal time, when a
// hypervisor runs something else on this machine's cores, counts as busy. Its resolution is one
// tick (10 ms), enough for timed loops of at least 0.2 s. Returns 0 where /proc/stat is missing,
// so that "others" reads as 0 rather than failing the benchmark.
double machine_busy_seconds() {
    std::ifstream stat("/proc/stat");
    std::string cpu;
    double user = 0, nice = 0, system = 0, idle = 0, iowait = 0, irq = 0, softirq = 0, steal = 0;
    if (!(stat >> cpu >> user >> nice >> system >> idle >> iowait >> irq >> softirq >> steal))
        return 0;
    static const double ticks_per_second = static_cast<double>(sysconf(_SC_CLK_TCK));
    return (user + nice + system + irq + softirq + steal) / ticks_per_second;
}

}  // namespace

CpuUsage::CpuUsage()
    : real_start_(real_seconds()),
      own_start_(process_cpu_seconds()),
      machine_start_(machine_busy_seconds()) {}

CpuUsage::Cores CpuUsage::since_start() const {
    const double real = real_seconds() - real_start_;
    const double own = process_cpu_seconds() - own_start_;
    const double machine = machine_busy_seconds() - machine_start_;
    Cores cores;
    if (real <= 0) return cores;
    cores.own = own / real;
    // Tick rounding can make the difference slightly negative on an idle machine.
    cores.others = machine > own ? (machine - own) / real : 0.0;
    return cores;
}

}  // namespace attngen::bench
