// Calls a generated kernel through its generic entry point (Halide's <name>_argv), passing every
// argument by the name the generator gave it (<name>_metadata lists them): one calling
// convention for every variant, whatever inputs and outputs it has. An output is known by the
// name of the Func that computes it, which the algorithms give the generator's output name.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "HalideRuntime.h"
#include "attngen/kernel.h"
#include "attngen/status.h"

namespace attngen::detail {

class KernelCall {
  public:
    explicit KernelCall(const Kernel &kernel);

    // Sets the argument of this name; an error if the kernel has none of that name and kind.
    Status buffer(const char *name, halide_buffer_t *buffer);
    Status scalar(const char *name, float value);
    Status scalar(const char *name, int32_t value);
    // Sets an extra input of a user-written modifier, which the caller names: an input buffer
    // that no argument set before has taken. The runtime sets the kernel's own arguments first,
    // so that a caller's input named after one of them (q, out, bias...) is refused rather than
    // passed in its place.
    Status extra_input(const std::string &name, halide_buffer_t *buffer);

    // Runs the kernel with user_context as its context. kInvalidArgument, without running it, if
    // an argument was not set (a call that misses an input the variant declares); otherwise the
    // kernel's return code in *result.
    Status run(void *user_context, int *result);

  private:
    const halide_filter_argument_t *find(const char *name, int32_t kind);

    const Kernel &kernel_;
    const halide_filter_metadata_t *metadata_ = nullptr;
    std::vector<void *> argv_;
    std::vector<halide_scalar_value_t> scalars_;
    void *user_context_ = nullptr;
};

}  // namespace attngen::detail
