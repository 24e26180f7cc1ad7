#include "thread_pool.h"

#include <pthread.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <climits>
#include <condition_variable>
#include <cstdlib>
#include <mutex>
#include <new>
#include <thread>
#include <vector>

#if defined(__x86_64__) || defined(__i386__)
#include <immintrin.h>
#endif

namespace attngen::detail {

namespace {

// Halide's own pool has the same bound.
constexpr int kMaxThreads = 256;

// Tells the core that this thread is in a spin loop (it yields the pipeline to the sibling
// hyperthread and saves power).
inline void cpu_relax() {
#if defined(__x86_64__) || defined(__i386__)
    _mm_pause();
#elif defined(__aarch64__)
    asm volatile("yield");
#endif
}

int hardware_threads() {
    return std::clamp(static_cast<int>(std::thread::hardware_concurrency()), 1, kMaxThreads);
}

// Halide's default: HL_NUM_THREADS (or its older spelling HL_NUMTHREADS) when set, else one
// thread per core. Kept so that the variable means what Halide's documentation says it means.
int default_threads() {
    for (const char *name : {"HL_NUM_THREADS", "HL_NUMTHREADS"}) {
        const char *value = std::getenv(name);
        if (value == nullptr) continue;
        char *end = nullptr;
        long n = std::strtol(value, &end, 10);
        if (end != value && *end == '\0' && n > 0) {
            return static_cast<int>(std::min<long>(n, kMaxThreads));
        }
    }
    return hardware_threads();
}

// One parallel loop. It lives on the stack of the thread that called do_par_for (its owner),
// which returns only after no other thread can reach it.
struct Job {
    halide_task_t task = nullptr;
    void *user_context = nullptr;
    int min = 0;
    int size = 0;
    uint8_t *closure = nullptr;
    std::atomic<int> next{0};     // The index of the next task to claim.
    std::atomic<int> helpers{0};  // Threads other than the owner inside run_tasks.
    std::atomic<int> result{0};   // The first failure, 0 while none.
};

// Claims and runs up to max_tasks tasks. After a failure the remaining tasks are skipped, as
// Halide's pool does: the kernel is going to report an error, and its outputs are not used.
void run_tasks(Job *job, int max_tasks) {
    for (int n = 0; n < max_tasks; n++) {
        const int i = job->next.fetch_add(1, std::memory_order_relaxed);
        if (i >= job->size) return;
        const int result = job->task(job->user_context, job->min + i, job->closure);
        if (result != 0) {
            int none = 0;
            job->result.compare_exchange_strong(none, result, std::memory_order_relaxed);
            job->next.store(job->size, std::memory_order_relaxed);
            return;
        }
    }
}

class Pool {
  public:
    Pool()
        : cores_(hardware_threads()),
          threads_(default_threads()),
          spin_us_(kDefaultSpinMicroseconds) {}

    // fork() copies only the calling thread. Around it the pool's lock is held, so that no
    // other thread is inside the pool's bookkeeping at the moment of the copy; the child then
    // forgets the workers and the loops of threads it does not have, and starts workers of its
    // own on its first parallel loop. Without this a child ran every loop on one thread, and a
    // fork while a worker held the lock left the child's first loop waiting for it forever.
    void before_fork() { mutex_.lock(); }
    void after_fork_in_parent() { mutex_.unlock(); }
    void after_fork_in_child() {
        // The copied workers are threads that do not exist in the child: their handles can be
        // neither joined nor destroyed (a joinable std::thread ends the process when destroyed),
        // so they are kept, unused, to the end of the process.
        for (std::thread &worker : workers_) not_in_this_process_.push_back(std::move(worker));
        workers_.clear();
        open_.clear();
        sleepers_ = 0;
        // Threads that waited on the condition variables in the parent are not in the child.
        new (&wake_) std::condition_variable();
        new (&park_) std::condition_variable();
        mutex_.unlock();
    }

    int set_threads(int threads) {
        const int wanted = threads <= 0 ? default_threads() : std::min(threads, kMaxThreads);
        int previous;
        {
            std::lock_guard<std::mutex> lock(mutex_);
            previous = threads_.exchange(wanted, std::memory_order_relaxed);
        }
        park_.notify_all();
        return previous;
    }

    int set_spin(int microseconds) {
        return spin_us_.exchange(microseconds < 0 ? kDefaultSpinMicroseconds : microseconds,
                                 std::memory_order_relaxed);
    }

    int par_for(void *user_context, halide_task_t task, int min, int size, uint8_t *closure) {
        if (size <= 0) return 0;
        const int threads = threads_.load(std::memory_order_relaxed);
        if (size == 1 || threads <= 1) {
            for (int i = 0; i < size; i++) {
                const int result = task(user_context, min + i, closure);
                if (result != 0) return result;
            }
            return 0;
        }
        Job job;
        job.task = task;
        job.user_context = user_context;
        job.min = min;
        job.size = size;
        job.closure = closure;
        bool wake = false;
        {
            std::lock_guard<std::mutex> lock(mutex_);
            // Workers start on the first loop that can use them, so that a process that only
            // validates arguments or calls one-thread kernels creates none.
            while (static_cast<int>(workers_.size()) < threads - 1) {
                const int index = static_cast<int>(workers_.size());
                workers_.emplace_back([this, index] { worker_main(index); });
            }
            open_.push_back(&job);
            epoch_.fetch_add(1, std::memory_order_release);
            wake = sleepers_ > 0;
        }
        if (wake) wake_.notify_all();

        run_tasks(&job, INT_MAX);
        {
            std::lock_guard<std::mutex> lock(mutex_);
            open_.erase(std::find(open_.begin(), open_.end(), &job));
        }
        // Every task is claimed; some may still run on other threads, perhaps with nested loops
        // of their own. Run those loops' tasks, one at a time so that this call returns soon
        // after its own last task ends.
        int idle_rounds = 0;
        while (job.helpers.load(std::memory_order_acquire) > 0) {
            if (help_once()) {
                idle_rounds = 0;
            } else if (++idle_rounds < 64) {
                cpu_relax();
            } else {
                // More threads than cores: the thread we wait for may need this core.
                std::this_thread::yield();
            }
        }
        return job.result.load(std::memory_order_relaxed);
    }

  private:
    // The oldest open job with a task left, with helpers already counted; nullptr if none. The
    // oldest is the outermost loop, whose tasks are the largest. Called with mutex_ held.
    Job *take_locked() {
        for (Job *job : open_) {
            if (job->next.load(std::memory_order_relaxed) < job->size) {
                job->helpers.fetch_add(1, std::memory_order_relaxed);
                return job;
            }
        }
        return nullptr;
    }

    bool help_once() {
        Job *job;
        {
            std::lock_guard<std::mutex> lock(mutex_);
            job = take_locked();
        }
        if (job == nullptr) return false;
        run_tasks(job, 1);
        job->helpers.fetch_sub(1, std::memory_order_release);
        return true;
    }

    void worker_main(int index) {
        for (;;) {
            uint64_t seen;
            Job *job;
            {
                std::unique_lock<std::mutex> lock(mutex_);
                // Workers beyond the current thread count wait until it grows again.
                park_.wait(lock,
                           [&] { return index < threads_.load(std::memory_order_relaxed) - 1; });
                job = take_locked();
                seen = epoch_.load(std::memory_order_relaxed);
            }
            if (job != nullptr) {
                run_tasks(job, INT_MAX);
                job->helpers.fetch_sub(1, std::memory_order_release);
                continue;
            }
            if (spin_until_new_job(seen)) continue;
            std::unique_lock<std::mutex> lock(mutex_);
            sleepers_++;
            wake_.wait(lock, [&] { return epoch_.load(std::memory_order_relaxed) != seen; });
            sleepers_--;
        }
    }

    // Spins until a job is published after `seen` (true) or the spin time runs out (false). No
    // spinning while there are more threads than cores: a spinning thread would then take the
    // core of one that has work.
    bool spin_until_new_job(uint64_t seen) {
        const int spin_us = spin_us_.load(std::memory_order_relaxed);
        if (spin_us == 0 || threads_.load(std::memory_order_relaxed) > cores_) {
            return false;
        }
        const auto deadline = std::chrono::steady_clock::now() + std::chrono::microseconds(spin_us);
        for (;;) {
            // Reading the clock costs about as much as a hundred pauses; look at it rarely.
            for (int n = 0; n < 256; n++) {
                if (epoch_.load(std::memory_order_acquire) != seen) return true;
                cpu_relax();
            }
            if (std::chrono::steady_clock::now() >= deadline) return false;
        }
    }

    const int cores_;
    std::mutex mutex_;
    std::condition_variable wake_;  // Idle workers past their spin time.
    std::condition_variable park_;  // Workers beyond the thread count.
    std::vector<Job *> open_;       // Jobs whose owner may still run tasks, oldest first.
    std::vector<std::thread> workers_;
    std::vector<std::thread> not_in_this_process_;  // Workers of the parent of a fork().
    std::atomic<uint64_t> epoch_{0};                // Counts published jobs; workers spin on it.
    int sleepers_ = 0;                              // Workers waiting on wake_.
    std::atomic<int> threads_;
    std::atomic<int> spin_us_;
};

// The pool, once created; fork() handlers read it without waiting for its creation.
std::atomic<Pool *> created_pool{nullptr};
// The pool whose lock before_fork took, for the handlers that run after fork() returns.
Pool *pool_locked_for_fork = nullptr;

void fork_prepare() {
    pool_locked_for_fork = created_pool.load(std::memory_order_acquire);
    if (pool_locked_for_fork != nullptr) pool_locked_for_fork->before_fork();
}
void fork_parent() {
    if (pool_locked_for_fork != nullptr) pool_locked_for_fork->after_fork_in_parent();
}
void fork_child() {
    if (pool_locked_for_fork != nullptr) pool_locked_for_fork->after_fork_in_child();
}

// Never destroyed: its workers run until the process ends, so no static destructor can join a
// thread that another static destructor's kernel call still needs.
Pool &pool() {
    static Pool *const instance = [] {
        pthread_atfork(fork_prepare, fork_parent, fork_child);
        Pool *p = new Pool();
        created_pool.store(p, std::memory_order_release);
        return p;
    }();
    return *instance;
}

}  // namespace

int set_pool_threads(int threads) {
    return pool().set_threads(threads);
}

int set_pool_spin_microseconds(int microseconds) {
    return pool().set_spin(microseconds);
}

int pool_do_par_for(void *user_context, halide_task_t task, int min, int size, uint8_t *closure) {
    return pool().par_for(user_context, task, min, size, closure);
}

}  // namespace attngen::detail
