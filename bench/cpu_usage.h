// How many cores this process kept busy over an interval, and how many other processes took.
//
// The second number is what makes results from a shared machine usable: a benchmark that shares
// its two cores with a compile job runs at half speed and cannot tell from its own timings.
// make_results.py leaves out the rounds in which other processes took a noticeable share.
#pragma once

namespace attngen::bench {

class CpuUsage {
  public:
    // Starts measuring.
    CpuUsage();

    struct Cores {
        double own = 0;     // CPU time of every thread of this process / real time.
        double others = 0;  // CPU time of everything else on the machine, steal time of the
                            // hypervisor included / real time.
    };
    // Average cores busy since construction.
    Cores since_start() const;

  private:
    double real_start_, own_start_, machine_start_;
};

}  // namespace attngen::bench
