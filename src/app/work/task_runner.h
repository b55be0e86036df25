#pragma once
// Long work (a forward pass, generation, the all-heads summaries) without freezing the page.
// A Task does its work in bounded steps. Where the build has threads (native, and the
// cross-origin-isolated web build) a worker thread runs the steps; otherwise the UI thread runs
// them from its frame loop for a bounded time per frame, so the page repaints at least every
// 100 ms. Either way results reach the UI thread only through finish().
#include <atomic>
#include <memory>
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
    double progress() const { return run_ ? run_->task->progress() : 0.0; }
    const std::string& label() const { return label_; }

private:
    // One started task and, with threads, the worker that steps it. A cancelled run stays alive
    // until its worker is joined: by the next run's worker before its first step, by pump()
    // once it is done, or by the destructor.
    struct Run {
        std::unique_ptr<Task> task;
        std::thread worker;
        std::shared_ptr<Run> previous;  // a cancelled run, joined by this one's worker
        std::atomic<bool> stop{false}, done{false};
    };

    std::shared_ptr<Run> run_;      // the task whose results are wanted
    std::shared_ptr<Run> retired_;  // the last cancelled run while its worker may still be running
    std::string label_;
};

}  // namespace attnlab
