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
    // Joining retired_ joins every run before it: each worker joined its own predecessor first.
    if (retired_ && retired_->worker.joinable()) retired_->worker.join();
}

void TaskRunner::start(std::unique_ptr<Task> task, std::string label) {
    cancel();
    auto run = std::make_shared<Run>();
    run->task = std::move(task);
    label_ = std::move(label);
    if (threaded()) {
        run->previous = std::move(retired_);
        Run* r = run.get();  // alive until its worker is joined (see Run)
        run->worker = std::thread([r] {
            if (r->previous) {
                if (r->previous->worker.joinable()) r->previous->worker.join();
                r->previous.reset();
            }
            while (!r->stop.load(std::memory_order_relaxed) && r->task->step()) {}
            r->done.store(true, std::memory_order_release);
        });
    }
    run_ = std::move(run);
}

void TaskRunner::cancel() {
    label_.clear();
    if (!run_) return;
    run_->stop.store(true, std::memory_order_relaxed);
    if (run_->worker.joinable()) retired_ = std::move(run_);  // the next start() chains onto it
    run_.reset();
}

bool TaskRunner::pump(Session& session, double budget_ms) {
    if (retired_ && retired_->done.load(std::memory_order_acquire)) {
        retired_->worker.join();  // it has ended: this does not wait
        retired_.reset();
    }
    if (!run_) return false;
    if (!threaded()) {
        const auto start = SteadyClock::now();
        bool more = true;
        do more = run_->task->step();
        while (more && ms_since(start) < budget_ms);
        if (more) return true;
    } else {
        if (!run_->done.load(std::memory_order_acquire)) return true;
        run_->worker.join();
    }
    // finish() may start the next task on this very runner: hand over ownership first.
    std::shared_ptr<Run> finished = std::move(run_);
    label_.clear();
    finished->task->finish(session);
    return busy();
}

}  // namespace attnlab
