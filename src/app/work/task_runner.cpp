#include "app/work/task_runner.h"
#include "base/timing.h"

namespace attnlab {

bool TaskRunner::threaded() {
#if defined(__EMSCRIPTEN__) && !defined(__EMSCRIPTEN_PTHREADS__)
    return false;
#else
    return true;
#endif
}

TaskRunner::~TaskRunner() {
    cancel();
    if (!worker_.joinable()) return;
    {
        std::lock_guard<std::mutex> guard(mutex_);
        quit_ = true;
    }
    wake_.notify_one();
    worker_.join();  // after the step in flight, if a cancelled task is in one
}

void TaskRunner::start(std::unique_ptr<Task> task, std::string label) {
    cancel();
    auto run = std::make_shared<Run>();
    run->task = std::move(task);
    label_ = std::move(label);
    if (threaded()) {
        if (!worker_.joinable()) worker_ = std::thread([this] { serve(); });
        {
            std::lock_guard<std::mutex> guard(mutex_);
            next_ = run;  // replaces a queued run that never started (it was cancelled)
        }
        wake_.notify_one();
    }
    run_ = std::move(run);
}

void TaskRunner::serve() {
    for (;;) {
        std::shared_ptr<Run> run;
        {
            std::unique_lock<std::mutex> guard(mutex_);
            wake_.wait(guard, [&] { return quit_ || next_; });
            if (quit_) return;
            run = std::move(next_);
        }
        while (!run->stop.load(std::memory_order_relaxed) && run->task->step()) {}
        run->done.store(true, std::memory_order_release);
    }
}

void TaskRunner::cancel() {
    label_.clear();
    if (!run_) return;
    run_->stop.store(true, std::memory_order_relaxed);  // the worker holds the run until its step ends
    run_.reset();
}

bool TaskRunner::pump(Session& session, double budget_ms) {
    if (!run_) return false;
    if (!threaded()) {
        const auto start = SteadyClock::now();
        bool more = true;
        do more = run_->task->step();
        while (more && ms_since(start) < budget_ms);
        if (more) return true;
    } else if (!run_->done.load(std::memory_order_acquire)) {
        return true;
    }
    // finish() may start the next task on this very runner: hand over ownership first.
    std::shared_ptr<Run> finished = std::move(run_);
    label_.clear();
    finished->task->finish(session);
    return busy();
}

}  // namespace attnlab
