#include "compare.h"

#include <cfloat>
#include <cmath>
#include <sstream>

namespace attngen::reference {

Comparison compare(const float *actual, const double *expected, const float *naive, int64_t n,
                   double factor, double ulps) {
    Comparison c;
    for (int64_t i = 0; i < n; i++) {
        if (std::isfinite(expected[i])) {
            c.max_reference = std::max(c.max_reference, std::fabs(expected[i]));
            if (std::isfinite(naive[i])) {
                c.naive_error = std::max(c.naive_error, std::fabs(naive[i] - expected[i]));
            }
        }
    }
    c.tolerance = factor * c.naive_error + ulps * FLT_EPSILON * c.max_reference;
    for (int64_t i = 0; i < n; i++) {
        const double a = actual[i], e = expected[i];
        if (std::isnan(a) != std::isnan(e)) {
            c.ok = false;
            c.worst = i;
            c.problem = std::isnan(a) ? "NaN where the reference is a number"
                                      : "a number where the reference is NaN";
            return c;
        }
        if (std::isinf(e) || std::isinf(a)) {
            if (a != e) {
                c.ok = false;
                c.worst = i;
                c.problem = "an infinity that differs from the reference";
                return c;
            }
            continue;
        }
        if (std::isnan(e)) continue;
        const double err = std::fabs(a - e);
        if (err > c.max_error) {
            c.max_error = err;
            c.worst = i;
        }
    }
    if (c.max_error > c.tolerance) {
        c.ok = false;
        c.problem = "error above tolerance";
    }
    return c;
}

std::string describe(const Comparison &c) {
    std::ostringstream s;
    s << (c.ok ? "ok" : "MISMATCH") << ": max error " << c.max_error << " (naive float32 "
      << c.naive_error << ", tolerance " << c.tolerance << ", |reference| up to " << c.max_reference
      << ")";
    if (!c.problem.empty())
        s << "; " << c.problem << " at index " << c.worst;
    else if (c.worst >= 0)
        s << " at index " << c.worst;
    return s.str();
}

}  // namespace attngen::reference
