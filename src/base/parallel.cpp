// The worker pool of the pthreads WebAssembly build (parallel.h). Natively OpenMP does this, and
// the single-threaded build has no threads, so there this file is empty.
#include "base/parallel.h"

#ifdef __EMSCRIPTEN_PTHREADS__
#include <algorithm>
#include <atomic>
#include <condition_variable>
#include <mutex>
#include <thread>
#include <vector>

namespace attnlab {

namespace {

constexpr int kMostThreads = 8;

// One job at a time. The caller publishes it under the lock, wakes the workers, takes items
// itself, and returns once every item has finished and no worker holds the job any more (it
// lives on the caller's stack). Workers are started on the first job and never stopped (the
// page keeps them for its lifetime). A job never waits for a worker to start, which in the page
// needs the browser's main thread: one that has not started simply takes no items.
class WorkerPool {
public:
    static WorkerPool& get() {
        static WorkerPool* pool = new WorkerPool;  // never destroyed: workers may outlive main()
        return *pool;
    }

    int size() const { return limit_.load(); }
    void limit(int n) { limit_.store(std::clamp(n, 1, hardware_)); }

    void run(int count, void (*fn)(void*, int), void* body) {
        std::unique_lock<std::mutex> one_job(job_mutex_, std::try_to_lock);
        if (!one_job.owns_lock() || in_worker_ || limit_.load() == 1) {  // busy, nested, or one thread
            for (int i = 0; i < count; ++i) fn(body, i);
            return;
        }
        start_workers();
        Job job{fn, body, count};
        job.unfinished = count;
        {
            std::lock_guard<std::mutex> guard(mutex_);
            job_ = &job;
            active_ = limit_.load() - 1;
            ++generation_;
        }
        wake_.notify_all();
        work(job);
        std::unique_lock<std::mutex> guard(mutex_);
        done_.wait(guard, [&] { return job.unfinished == 0 && job.holders == 0; });
        job_ = nullptr;
    }

    static thread_local int index_;
    static thread_local bool in_worker_;

private:
    struct Job {
        void (*fn)(void*, int);
        void* body;
        int count;
        std::atomic<int> next{0};
        int unfinished = 0, holders = 0;  // under mutex_
    };

    // hardware_concurrency() is navigator.hardwareConcurrency in the page, the core count under node.
    WorkerPool() : hardware_(std::clamp(static_cast<int>(std::thread::hardware_concurrency()), 1, kMostThreads)), limit_(hardware_) {}

    void start_workers() {
        if (started_) return;
        started_ = true;
        for (int w = 1; w < hardware_; ++w) std::thread([this, w] { loop(w); }).detach();
    }

    // Takes items of the job until none is left.
    void work(Job& job) {
        int finished = 0;
        for (int i; (i = job.next.fetch_add(1)) < job.count; ++finished) job.fn(job.body, i);
        if (!finished) return;
        std::lock_guard<std::mutex> guard(mutex_);
        if ((job.unfinished -= finished) == 0) done_.notify_all();
    }

    void loop(int w) {
        index_ = w;
        in_worker_ = true;
        long long seen = 0;
        for (;;) {
            Job* job = nullptr;
            {
                std::unique_lock<std::mutex> guard(mutex_);
                wake_.wait(guard, [&] { return generation_ != seen; });
                seen = generation_;
                if (!job_ || w > active_) continue;  // finished already, or set_max_threads() left this worker out
                job = job_;
                ++job->holders;
            }
            work(*job);
            std::lock_guard<std::mutex> guard(mutex_);
            if (--job->holders == 0 && job->unfinished == 0) done_.notify_all();
        }
    }

    const int hardware_;
    std::atomic<int> limit_;
    bool started_ = false;
    std::mutex job_mutex_;  // one job at a time
    std::mutex mutex_;      // guards job_, active_, generation_ and every job's counters
    std::condition_variable wake_, done_;
    Job* job_ = nullptr;
    int active_ = 0;
    long long generation_ = 0;
};

thread_local int WorkerPool::index_ = 0;
thread_local bool WorkerPool::in_worker_ = false;

}  // namespace

int max_threads() { return WorkerPool::get().size(); }
int thread_index() { return WorkerPool::index_; }
void set_max_threads(int n) { WorkerPool::get().limit(n); }
void pool_run(int count, void (*run)(void*, int), void* body) { WorkerPool::get().run(count, run, body); }

}  // namespace attnlab
#endif
