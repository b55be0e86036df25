#include "app/task_runner.h"

#include <chrono>

namespace attnlab {

bool TaskRunner::threaded() {
#if defined(__EMSCRIPTEN__) && !defined(__EMSCRIPTEN_PTHREADS__)
    return false;
#else
    return true;
#endif
}

void TaskRunner::start(std::unique_ptr<Task> task, std::string label) {
    cancel();
    task_ = std::move(task);
    label_ = std::move(label);
    stop_ = false;
    done_ = false;
    if (threaded()) {
        Task* t = task_.get();
        worker_ = std::thread([this, t] {
            while (!stop_.load(std::memory_order_relaxed) && t->step()) {}
            done_.store(true, std::memory_order_release);
        });
    }
}

void TaskRunner::cancel() {
    stop_ = true;
    if (worker_.joinable()) worker_.join();
    task_.reset();
    label_.clear();
}

bool TaskRunner::pump(Session& session, double budget_ms) {
    if (!task_) return false;
    if (!threaded()) {
        using clock = std::chrono::steady_clock;
        const auto start = clock::now();
        bool more = true;
        do more = task_->step();
        while (more && std::chrono::duration<double, std::milli>(clock::now() - start).count() < budget_ms);
        if (more) return true;
    } else {
        if (!done_.load(std::memory_order_acquire)) return true;
        worker_.join();
    }
    // finish() may start the next task on this very runner: hand over ownership first.
    std::unique_ptr<Task> finished = std::move(task_);
    label_.clear();
    finished->finish(session);
    return busy();
}

}  // namespace attnlab
