// Which processor a measurement ran on, for the benchmark's JSON context and the tuning
// databases' "machine" field.
//
// A virtual machine reports "AMD EPYC" as its model name on a Zen 4 and on a Zen 5 alike, yet
// Zen 4 executes a 512-bit FMA in two halves and Zen 5 in one, which halves or doubles every
// compute-bound number here. The family and model numbers and the widest vector extension tell
// them apart, so both the benchmark and the tuner record them.
#pragma once

#include <istream>
#include <string>

namespace attngen {

// "<model name>, family <f> model <m>, <widest vector extension>" from the text of
// /proc/cpuinfo (an ARM kernel's implementer and part numbers stand in for family and model),
// with the parts it does not find left out, or "unknown" when it finds none.
std::string cpu_identity(std::istream &cpuinfo);

// The same for this machine's /proc/cpuinfo; "unknown" where it cannot be read.
std::string cpu_identity();

}  // namespace attngen
