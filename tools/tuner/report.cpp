#include "report.h"

#include <cmath>
#include <iomanip>
#include <limits>
#include <sstream>

namespace attngen::tuner {

void print_report(const TuningDatabase &db, std::ostream &out) {
    out << "target:  " << db.target << "\nmachine: " << db.machine << "\ncreated: " << db.created
        << " (budget " << db.budget_seconds << " s, took " << std::fixed << std::setprecision(0)
        << db.elapsed_seconds << " s)\n\n";
    out << std::left << std::setw(30) << "shape" << std::setw(44) << "winner" << std::right
        << std::setw(10) << "tuned ms" << std::setw(12) << "default ms" << std::setw(9) << "speedup"
        << "  " << std::left << std::setw(24) << "best autoscheduler" << std::right << std::setw(10)
        << "vs auto"
        << "\n";
    double log_sum = 0, min_speedup = std::numeric_limits<double>::infinity();
    int count = 0;
    for (const auto &b : db.buckets) {
        for (const auto &s : b.shapes) {
            std::string best_auto = "-";
            double best_auto_ms = 0;
            for (const auto &[name, ms] : s.baselines_ms) {
                if (best_auto_ms == 0 || ms < best_auto_ms) {
                    best_auto_ms = ms;
                    best_auto = name;
                }
            }
            const double speedup = s.time_ms > 0 ? s.default_ms / s.time_ms : 0;
            if (speedup > 0) {
                log_sum += std::log(speedup);
                min_speedup = std::min(min_speedup, speedup);
                count++;
            }
            std::ostringstream auto_text;
            if (best_auto_ms > 0) {
                auto_text << best_auto << " " << std::fixed << std::setprecision(2) << best_auto_ms
                          << " ms";
            } else {
                auto_text << "-";
            }
            out << std::left << std::setw(30) << s.shape.substr(0, 29) << std::setw(44)
                << (b.improves ? b.winner.describe() : "(default kept)").substr(0, 43) << std::right
                << std::fixed << std::setprecision(3) << std::setw(10) << s.time_ms << std::setw(12)
                << s.default_ms << std::setw(8) << std::setprecision(2) << speedup << "x  "
                << std::left << std::setw(24) << auto_text.str() << std::right << std::setw(9);
            if (best_auto_ms > 0 && s.time_ms > 0) {
                out << std::setprecision(1) << best_auto_ms / s.time_ms << "x";
            } else {
                out << "-";
            }
            out << "\n";
        }
    }
    if (count > 0) {
        out << "\ngeometric mean speedup over the defaults: " << std::setprecision(3)
            << std::exp(log_sum / count) << "x over " << count << " shapes (lowest " << min_speedup
            << "x)\n";
    }
}

}  // namespace attngen::tuner
