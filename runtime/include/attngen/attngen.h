// The whole public API of the attngen runtime.
#pragma once

#include "attngen/attention.h"
#include "attngen/cuda_limits.h"
#include "attngen/kernels.h"
#include "attngen/mha.h"
#include "attngen/modifiers.h"
#include "attngen/status.h"
#include "attngen/tensor.h"
