// Every schedule that this build of attngen compiled, as benchmark implementations: attention
// shapes through attngen::attention, layer shapes through attngen::MultiHeadAttention.
#pragma once

#include <vector>

#include "implementation.h"

namespace attngen::bench {

// One implementation per name in attngen::available_schedules(), in that order.
std::vector<Implementation> attngen_implementations();

}  // namespace attngen::bench
