#include "search.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <ctime>
#include <fstream>
#include <limits>
#include <map>
#include <nlohmann/json.hpp>
#include <random>
#include <set>
#include <thread>

#include "measurement_cache.h"
#include "schedule.h"
#include "subprocess.h"

namespace attngen::tuner {

bool gpu_target(const std::string &target) {
    return Halide::Target(target).has_gpu_feature();
}

namespace {

using Clock = std::chrono::steady_clock;
using Params = std::map<std::string, int>;

// A candidate may be at most 3% slower than the default on any shape of its bucket.
constexpr double kWorstSlowdown = 1.0 / 0.97;

schedules::Context context_for(const Variant &bucket, const std::string &target) {
    return schedules::make_context(Halide::Target(target), bucket);
}

// Tunes one bucket within a deadline.
class BucketSearch {
  public:
    BucketSearch(const Variant &bucket, std::vector<TuneShape> shapes, const TuneOptions &options,
                 Cache &cache, Clock::time_point deadline, std::mt19937 &rng)
        : bucket_(bucket),
          shapes_(std::move(shapes)),
          options_(options),
          cache_(cache),
          deadline_(deadline),
          rng_(rng),
          ctx_(context_for(bucket, options.target)) {
        for (const auto &name : options.schedules) {
            if (const auto *s = schedules::find_schedule(name)) {
                spaces_[name] = s->attention_search_space(ctx_);
            }
        }
    }

    BucketResult run(const std::function<void(int, double, const std::string &)> &report) {
        report_ = report;
        BucketResult result;
        result.bucket = bucket_;
        result.default_kernel = default_kernel(shapes_.front(), options_.target);
        const auto start = Clock::now();
        // The default schedule with its defaults in this bucket: what a tuned kernel must beat.
        const std::string hand_schedule =
            hand_default(shapes_.front(), options_.target).second.schedule;
        const Candidate fallback{hand_schedule, spaces_.count(hand_schedule)
                                                    ? spaces_[hand_schedule].defaults()
                                                    : Params{}};
        default_ms_.resize(shapes_.size());
        for (std::size_t s = 0; s < shapes_.size(); s++) {
            const auto [built, hand] = hand_default(shapes_[s], options_.target);
            hand_.emplace_back(built, hand);
            const Measurement m = evaluate(shapes_[s], hand, built);
            default_ms_[s] = m.ok() ? m.median_ms : 0;
        }
        std::map<std::string, std::vector<double>> baselines;
        if (options_.autoschedulers) {
            for (const ScheduleInfo &info : schedules::schedule_infos()) {
                if (!info.autoscheduler) continue;
                const std::string &a = info.name;
                for (std::size_t s = 0; s < shapes_.size(); s++) {
                    if (Clock::now() > deadline_) break;
                    const Measurement m = evaluate(shapes_[s], Candidate{a, {}});
                    baselines[a].resize(shapes_.size(), 0);
                    if (m.ok()) baselines[a][s] = m.median_ms;
                }
            }
        }
        score(fallback);
        if (options_.strategy == "grid") {
            grid();
        } else {
            random_then_local();
        }
        remeasure_defaults();

        // The winner is the fastest candidate other than the default (the default measured
        // again would only show the spread between two measurements of one configuration), and
        // it must beat the default by min_speedup (score at most 1 / min_speedup, below 1 for
        // the default 1); otherwise the bucket keeps the default build's kernel.
        Candidate winner = fallback;
        double best = std::numeric_limits<double>::infinity();
        for (const auto &[candidate, value] : scores_) {
            if (!(candidate == fallback) && value < best) {
                best = value;
                winner = candidate;
            }
        }
        const bool fast_enough = options_.min_speedup >= 1.0 ? best < 1.0 / options_.min_speedup
                                                             : best * options_.min_speedup <= 1.0;
        result.improves = !(winner == fallback) && std::isfinite(best) && fast_enough;
        result.winner = winner;
        for (std::size_t s = 0; s < shapes_.size(); s++) {
            ShapeResult r;
            r.shape = shapes_[s].spec();
            r.time_ms = result.improves ? lookup(shapes_[s], winner) : default_ms_[s];
            r.default_ms = default_ms_[s];
            for (const auto &[name, times] : baselines) {
                if (s < times.size() && times[s] > 0) r.baselines_ms[name] = times[s];
            }
            result.shapes.push_back(r);
        }
        result.candidates = measured_;
        result.failed = failed_;
        result.seconds = std::chrono::duration<double>(Clock::now() - start).count();
        return result;
    }

  private:
    std::string key(const TuneShape &shape, const Candidate &c, const Variant &b) const {
        return options_.target + "|" + bucket_key(b) + "|" + shape.spec() + "|" + c.describe();
    }
    std::string key(const TuneShape &shape, const Candidate &c) const {
        return key(shape, c, bucket_);
    }

    Measurement evaluate(const TuneShape &shape, const Candidate &c) {
        return evaluate(shape, c, bucket_);
    }

    Measurement evaluate(const TuneShape &shape, const Candidate &c, const Variant &b) {
        const std::string k = key(shape, c, b);
        if (const Measurement *cached = cache_.find(k)) return *cached;
        measured_++;
        const Measurement m = measure_and_report(shape, c, b, c.describe());
        cache_.add(k, m);
        if (!m.ok()) failed_++;
        return m;
    }

    // One measurement in a child process, past the cache, reported as a progress line.
    Measurement measure_and_report(const TuneShape &shape, const Candidate &c, const Variant &b,
                                   const std::string &label) {
        const Measurement m = measure_in_child(c.in(b), shape, options_.target, options_.measure,
                                               options_.candidate_timeout_seconds);
        report_(measured_, best_speedup(),
                label + " on " + shape.spec() + ": " +
                    (m.ok() ? std::to_string(m.median_ms) + " ms"
                            : std::string(Measurement::outcome_name(m.outcome)) + " (" +
                                  m.detail.substr(0, 120) + ")"));
        return m;
    }

    // Measures each shape's hand default a second time, minutes after the first (and past the
    // cache, which may hold a measurement from an earlier run), keeps the faster of the two and
    // scores every candidate again against it. Every speedup of the bucket is a ratio to its
    // default: one measurement disturbed by another process on the machine (a rerun on
    // 2026-11-30 measured a default at 25.98 ms that takes 14.0-14.4 ms) would otherwise
    // inflate all of them. This runs after the search, one measurement per shape.
    void remeasure_defaults() {
        bool lowered = false;
        for (std::size_t s = 0; s < shapes_.size(); s++) {
            const auto &[built, hand] = hand_[s];
            const Measurement m =
                measure_and_report(shapes_[s], hand, built, "the hand default again");
            if (m.ok() && (default_ms_[s] <= 0 || m.median_ms < default_ms_[s])) {
                default_ms_[s] = m.median_ms;
                lowered = true;
            }
        }
        if (!lowered) return;
        std::vector<Candidate> scored;
        for (const auto &entry : scores_) scored.push_back(entry.first);
        scores_.clear();
        // Scoring again reads the candidates' measurements from the cache.
        for (const auto &c : scored) score(c);
    }

    double lookup(const TuneShape &shape, const Candidate &c) const {
        const Measurement *m = cache_.find(key(shape, c));
        return m != nullptr && m->ok() ? m->median_ms : 0;
    }

    // Geometric mean over the shapes of time / default time; infinity if any shape failed, or
    // ran slower than the default by more than kWorstSlowdown: a tuned kernel replaces the
    // default for every shape of its bucket, so it must not lose badly on any of them.
    double score(const Candidate &c) {
        auto it = scores_.find(c);
        if (it != scores_.end()) return it->second;
        double log_sum = 0;
        for (std::size_t s = 0; s < shapes_.size(); s++) {
            if (Clock::now() > deadline_ && !cache_.find(key(shapes_[s], c))) {
                return std::numeric_limits<double>::infinity();  // Out of time: not scored.
            }
            const Measurement m = evaluate(shapes_[s], c);
            if (!m.ok() || default_ms_[s] <= 0) {
                scores_[c] = std::numeric_limits<double>::infinity();
                return scores_[c];
            }
            // A test that accepts slower winners (min_speedup below 1) accepts their shapes'
            // slowdowns too.
            const double worst = options_.min_speedup > 0
                                     ? std::max(kWorstSlowdown, 1.0 / options_.min_speedup)
                                     : std::numeric_limits<double>::infinity();
            if (m.median_ms / default_ms_[s] > worst) {
                scores_[c] = std::numeric_limits<double>::infinity();
                return scores_[c];
            }
            log_sum += std::log(m.median_ms / default_ms_[s]);
        }
        scores_[c] = std::exp(log_sum / shapes_.size());
        return scores_[c];
    }

    double best_speedup() const {
        double best = std::numeric_limits<double>::infinity();
        for (const auto &[c, s] : scores_) best = std::min(best, s);
        return std::isfinite(best) ? 1.0 / best : 0.0;
    }

    bool valid(const Candidate &c) const {
        auto it = spaces_.find(c.schedule);
        return it != spaces_.end() && it->second.check(c.params, ctx_).empty();
    }

    Candidate random_candidate() {
        // Schedules in the order given; the first (cpu_fused) is sampled most.
        std::vector<std::string> names;
        for (const auto &n : options_.schedules) {
            if (spaces_.count(n)) names.push_back(n);
        }
        for (int attempt = 0; attempt < 200; attempt++) {
            std::uniform_real_distribution<double> pick(0, 1);
            const std::string &name = names.size() == 1 || pick(rng_) < 0.75
                                          ? names[0]
                                          : names[1 + rng_() % (names.size() - 1)];
            Candidate c{name, {}};
            for (const auto &p : spaces_[name].params) {
                c.params[p.name] = p.values[rng_() % p.values.size()];
            }
            c.params = spaces_[name].canonical(c.params);
            if (valid(c)) return c;
        }
        return Candidate{names[0], spaces_[names[0]].defaults()};
    }

    std::vector<Candidate> neighbours(const Candidate &c) {
        std::vector<Candidate> result;
        for (const auto &p : spaces_[c.schedule].params) {
            const auto &values = p.values;
            const auto at = std::find(values.begin(), values.end(), c.params.at(p.name));
            const long index = at - values.begin();
            for (long step : {-1L, 1L}) {
                const long i = index + step;
                if (i < 0 || i >= static_cast<long>(values.size())) continue;
                Candidate n = c;
                n.params[p.name] = values[i];
                n.params = spaces_[c.schedule].canonical(n.params);
                if (!(n == c) && valid(n)) result.push_back(n);
            }
        }
        std::shuffle(result.begin(), result.end(), rng_);
        return result;
    }

    bool time_left() const { return Clock::now() < deadline_; }

    // The schedules' starting points (one per path), random samples until 40% of the time,
    // then first-improvement hill climbing from the best, restarting from the best unexplored
    // sample when stuck.
    void random_then_local() {
        const auto start = Clock::now();
        const auto random_until = start + (deadline_ - start) * 2 / 5;
        std::vector<Candidate> samples;
        for (const auto &[name, space] : spaces_) {
            for (const auto &point : space.starting_points) {
                const Candidate c{name, space.canonical(space.with_defaults(point))};
                if (!time_left()) return;
                if (scores_.count(c) || !valid(c)) continue;
                score(c);
            }
        }
        while (time_left() && Clock::now() < random_until) {
            Candidate c = random_candidate();
            if (scores_.count(c)) continue;
            score(c);
            samples.push_back(c);
        }
        std::set<Candidate> climbed;
        while (time_left()) {
            Candidate current;
            double current_score = std::numeric_limits<double>::infinity();
            for (const auto &[c, s] : scores_) {
                if (s < current_score && !climbed.count(c) && spaces_.count(c.schedule)) {
                    current = c;
                    current_score = s;
                }
            }
            if (!std::isfinite(current_score)) {
                Candidate c = random_candidate();  // Everything explored: sample more.
                if (scores_.count(c)) return;
                score(c);
                continue;
            }
            climbed.insert(current);
            bool improved = true;
            while (improved && time_left()) {
                improved = false;
                for (const Candidate &n : neighbours(current)) {
                    if (!time_left()) break;
                    if (scores_.count(n)) continue;
                    if (score(n) < current_score) {
                        current = n;
                        current_score = scores_[n];
                        climbed.insert(current);
                        improved = true;
                        break;
                    }
                }
            }
        }
    }

    // The first schedule's full grid, in lexicographic order, until time runs out: what a plain
    // sweep finds in the same budget.
    void grid() {
        const std::string name = options_.schedules.front();
        const auto &params = spaces_[name].params;
        std::vector<std::size_t> index(params.size(), 0);
        while (time_left()) {
            Candidate c{name, {}};
            for (std::size_t p = 0; p < params.size(); p++)
                c.params[params[p].name] = params[p].values[index[p]];
            c.params = spaces_[name].canonical(c.params);
            if (valid(c) && !scores_.count(c)) score(c);
            std::size_t p = 0;
            while (p < params.size() && ++index[p] == params[p].values.size()) index[p++] = 0;
            if (p == params.size()) break;
        }
    }

    Variant bucket_;
    std::vector<TuneShape> shapes_;
    const TuneOptions &options_;
    Cache &cache_;
    Clock::time_point deadline_;
    std::mt19937 &rng_;
    schedules::Context ctx_;
    std::map<std::string, schedules::SearchSpace> spaces_;
    std::vector<double> default_ms_;
    // Per shape: the default build's bucket and the hand default's parameters in it.
    std::vector<std::pair<Variant, Candidate>> hand_;
    std::map<Candidate, double> scores_;
    int measured_ = 0, failed_ = 0;
    std::function<void(int, double, const std::string &)> report_;
};

}  // namespace

TuningDatabase tune(const TuneOptions &options, const ProgressFn &progress, std::string *error) {
    TuningDatabase db;
    db.target = options.target;
    db.machine = machine_description();
    db.created = now_utc();
    db.budget_seconds = options.budget_seconds;
    for (const auto &name : options.schedules) {
        if (schedules::find_schedule(name) == nullptr) {
            *error = "unknown schedule '" + name + "'";
            return {};
        }
    }

    // Shapes grouped by the kernel that will serve them.
    std::map<std::string, std::pair<Variant, std::vector<TuneShape>>> buckets;
    for (const auto &s : options.shapes) {
        const Variant bucket = bucket_of(s, options.target);
        if (bucket.schedule.empty() && default_kernel(s, options.target).schedule.empty()) {
            *error = "the build compiles no attention kernel for " + s.spec() +
                     " (kernels/variants.txt), so it has no default to tune against";
            return {};
        }
        auto &entry = buckets[bucket_key(bucket)];
        entry.first = bucket;
        entry.second.push_back(s);
    }

    Cache cache(options.cache_path, options.resume);
    std::mt19937 rng(options.seed);
    const auto start = Clock::now();
    const auto end = start + std::chrono::duration_cast<Clock::duration>(
                                 std::chrono::duration<double>(options.budget_seconds));
    int index = 0;
    for (const auto &named : buckets) {
        const std::string &key = named.first;
        const Variant &bucket = named.second.first;
        const std::vector<TuneShape> &shapes = named.second.second;
        // An equal share of what is left, so that time a bucket does not use goes to the next.
        const auto share = (end - Clock::now()) / static_cast<int>(buckets.size() - index);
        const auto deadline = std::min(end, Clock::now() + std::max(share, Clock::duration(0)));
        BucketSearch search(bucket, shapes, options, cache, deadline, rng);
        const int number = index + 1;
        auto report = [&](int candidates, double speedup, const std::string &last) {
            Progress p;
            p.bucket = number;
            p.buckets = static_cast<int>(buckets.size());
            p.bucket_key = key;
            p.candidates = candidates;
            p.best_speedup = speedup;
            p.seconds_left =
                std::max(0.0, std::chrono::duration<double>(end - Clock::now()).count());
            p.last = last;
            if (progress) progress(p);
        };
        db.buckets.push_back(search.run(report));
        index++;
    }
    db.elapsed_seconds = std::chrono::duration<double>(Clock::now() - start).count();
    return db;
}

std::pair<Variant, Candidate> hand_default(const TuneShape &shape, const std::string &target) {
    const Variant built = default_kernel(shape, target);
    Variant bucket = built;
    bucket.schedule.clear();
    bucket.tuning.clear();
    Candidate hand{built.schedule, {}};
    if (const schedules::Schedule *s = schedules::find_schedule(built.schedule)) {
        hand.params = s->attention_search_space(context_for(bucket, target)).defaults();
    }
    for (const auto &[name, value] : built.tuning) hand.params[name] = value;
    return {bucket, hand};
}

}  // namespace attngen::tuner
