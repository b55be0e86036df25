#pragma once
// Long work (a forward pass, generation, the all-heads summaries) without freezing the page.
// A Task does its work in bounded steps. Where the build has threads (native, and the
// cross-origin-isolated web build) a worker thread runs the steps; otherwise the UI thread runs
// them from its frame loop for a bounded time per frame, so the page repaints at least every
// 100 ms. Either way results reach the UI thread only through finish().
// Each runner steps all its tasks on one thread of its own, made by its first start() and kept
// until the runner ends: the page's threads then number the runners plus parallel_for's pool,
// which the threaded build's worker pool holds from the start (CMakeLists.txt,
// PTHREAD_POOL_SIZE). A thread per task made more threads than that whenever a task was cancelled
// mid-step, and Emscripten then made a worker while the app ran.
#include <atomic>
#include <condition_variable>
#include <memory>
#include <mutex>
#include <string>
#include <thread>

namespace attnlab {

struct Session;

class Task {
public:
    virtual ~Task() = default;
    // Does a bounded piece of the work (about 5-50 ms) and returns false when nothing is left.
    // May run on a worker thread: touch nothing the UI thread uses; report progress instead.
    // A cancelled task may still be inside a step after cancel() returns, so a task owns its
    // inputs (by value or shared_ptr), never a reference into the Session.
    virtual bool step() = 0;
    // On the UI thread, after the last step (never after a cancel): hand the results over.
    virtual void finish(Session& session) = 0;

    double progress() const { return progress_.load(std::memory_order_relaxed); }  // 0..1

protected:
    void report_progress(double fraction) { progress_.store(fraction, std::memory_order_relaxed); }

private:
    std::atomic<double> progress_{0.0};
};

class TaskRunner {
public:
    TaskRunner() = default;
    TaskRunner(const TaskRunner&) = delete;
    TaskRunner& operator=(const TaskRunner&) = delete;
    ~TaskRunner();

    // Whether steps run on a worker thread in this build.
    static bool threaded();

    // Starts `task`, cancelling whatever this runner was doing. `label` names it in the UI.
    // The new task's first step waits until a cancelled one's step in flight has ended.
    void start(std::unique_ptr<Task> task, std::string label);
    // Drops the running task; its results are never delivered. Returns at once: with threads,
    // the step in flight ends on its worker (up to a second for a chunk of a forward pass),
    // which the UI thread must not wait for.
    void cancel();

    // Call once per frame on the UI thread. Without threads, runs steps for up to budget_ms.
    // Hands a finished task's results over. Returns true while work remains.
    bool pump(Session& session, double budget_ms);

    bool busy() const { return run_ != nullptr; }
    // With threads: every step has run, and the next pump() hands the results over.
    bool finished() const { return run_ && run_->done.load(std::memory_order_acquire); }
    double progress() const { return run_ ? run_->task->progress() : 0.0; }
    const std::string& label() const { return label_; }

private:
    // One started task. A cancelled run stays alive until the worker has left its step.
    struct Run {
        std::unique_ptr<Task> task;
        std::atomic<bool> stop{false}, done{false};
    };
    // The worker's loop: steps each run handed over in next_ until it stops or ends.
    void serve();

    std::shared_ptr<Run> run_;  // the task whose results are wanted
    std::string label_;
    std::thread worker_;  // with threads, from the first start() on
    std::mutex mutex_;
    std::condition_variable wake_;
    std::shared_ptr<Run> next_;  // under mutex_: the run the worker takes next
    bool quit_ = false;          // under mutex_
};

}  // namespace attnlab
