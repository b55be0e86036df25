// TaskRunner: a cancel never waits for the step in flight (in the threaded page the UI thread
// spins while it waits, and a forward pass's step lasts up to a second), a cancelled task never
// delivers, and the next task's steps start only after the cancelled one's step has ended.
#include <catch2/catch.hpp>

#include <atomic>
#include <chrono>
#include <memory>
#include <thread>
#include <vector>

#include "app/session.h"
#include "app/work/task_runner.h"

using namespace attnlab;

namespace {

// What the tasks below saw, shared with the test (the tasks may outlive their runner's hold).
struct Trace {
    std::atomic<bool> in_step{false}, release{false}, released_in_time{false}, finished{false};
    std::atomic<int> steps{0};
    std::atomic<bool> overlapped{false};   // a step of this task ran while `other` was in one
    std::atomic<std::thread::id> where{};  // the thread of the last step
    Trace* other = nullptr;
};

// Steps `count` times; with `hold`, the first step waits until the test sets release (giving
// up after 5 s, which the test then sees as released_in_time == false).
class TracedTask final : public Task {
public:
    TracedTask(std::shared_ptr<Trace> t, int count, bool hold) : t_(std::move(t)), count_(count), hold_(hold) {}
    bool step() override {
        if (t_->other && t_->other->in_step.load()) t_->overlapped = true;
        t_->in_step = true;
        t_->where = std::this_thread::get_id();
        if (hold_ && t_->steps == 0) {
            const auto until = std::chrono::steady_clock::now() + std::chrono::seconds(5);
            while (!t_->release.load() && std::chrono::steady_clock::now() < until)
                std::this_thread::sleep_for(std::chrono::milliseconds(1));
            t_->released_in_time = t_->release.load();
        }
        const bool more = ++t_->steps < count_;
        t_->in_step = false;
        return more;
    }
    void finish(Session&) override { t_->finished = true; }

private:
    std::shared_ptr<Trace> t_;
    int count_;
    bool hold_;
};

// Pumps until the runner is idle (at most 10 s).
bool pump_until_idle(TaskRunner& runner, Session& session) {
    const auto until = std::chrono::steady_clock::now() + std::chrono::seconds(10);
    while (runner.pump(session, 5.0))
        if (std::chrono::steady_clock::now() > until) return false;
    return true;
}

}  // namespace

TEST_CASE("a task runs to the end and delivers its results once", "[task_runner]") {
    Session session;
    auto t = std::make_shared<Trace>();
    {
        TaskRunner runner;
        runner.start(std::make_unique<TracedTask>(t, 7, false), "seven steps");
        CHECK(runner.busy());
        CHECK(runner.label() == "seven steps");
        REQUIRE(pump_until_idle(runner, session));
        CHECK_FALSE(runner.busy());
        CHECK(runner.label().empty());
    }
    CHECK(t->steps == 7);
    CHECK(t->finished);
}

// The threaded page draws a frame when a task's steps have all run (app_progress_shown), so that
// the frame hands its results over at once.
TEST_CASE("finished() is true once a worker has run every step, until pump() delivers", "[task_runner]") {
    Session session;
    auto t = std::make_shared<Trace>();
    TaskRunner runner;
    runner.start(std::make_unique<TracedTask>(t, 3, true), "held");
    CHECK_FALSE(runner.finished());
    if (!TaskRunner::threaded()) {  // the single-threaded page: steps run inside pump(), which delivers
        t->release = true;
        REQUIRE(pump_until_idle(runner, session));
        CHECK_FALSE(runner.finished());
        CHECK(t->finished);
        return;
    }
    const auto until = std::chrono::steady_clock::now() + std::chrono::seconds(5);
    while (!t->in_step && std::chrono::steady_clock::now() < until) std::this_thread::sleep_for(std::chrono::milliseconds(1));
    CHECK_FALSE(runner.finished());  // held inside its first step
    t->release = true;
    while (!runner.finished() && std::chrono::steady_clock::now() < until) std::this_thread::sleep_for(std::chrono::milliseconds(1));
    REQUIRE(runner.finished());
    CHECK(t->steps == 3);
    CHECK(runner.busy());
    CHECK_FALSE(t->finished);  // not handed over yet
    CHECK_FALSE(runner.pump(session, 5.0));
    CHECK(t->finished);
    CHECK_FALSE(runner.finished());
}

TEST_CASE("a cancelled task never delivers, and the next one does", "[task_runner]") {
    Session session;
    auto a = std::make_shared<Trace>(), b = std::make_shared<Trace>();
    {
        TaskRunner runner;
        runner.start(std::make_unique<TracedTask>(a, 1 << 30, false), "long");
        runner.pump(session, 1.0);
        runner.cancel();
        CHECK_FALSE(runner.busy());
        CHECK(runner.label().empty());
        runner.start(std::make_unique<TracedTask>(b, 3, false), "short");
        REQUIRE(pump_until_idle(runner, session));
    }
    CHECK(a->steps < (1 << 30));
    CHECK_FALSE(a->finished);
    CHECK(b->steps == 3);
    CHECK(b->finished);
}

// Where steps run on a worker thread (natively and in the pthreads build; the single-threaded
// page runs them inside pump(), so none can be in flight during cancel()).
#if !defined(__EMSCRIPTEN__) || defined(__EMSCRIPTEN_PTHREADS__)
namespace {
void wait_in_step(const Trace& t) {
    const auto until = std::chrono::steady_clock::now() + std::chrono::seconds(5);
    while (!t.in_step.load() && std::chrono::steady_clock::now() < until) std::this_thread::sleep_for(std::chrono::milliseconds(1));
}
}  // namespace

TEST_CASE("cancel returns while the task is inside a step, and the task never delivers", "[task_runner]") {
    REQUIRE(TaskRunner::threaded());
    Session session;
    auto a = std::make_shared<Trace>(), b = std::make_shared<Trace>();
    b->other = a.get();
    {
        TaskRunner runner;
        runner.start(std::make_unique<TracedTask>(a, 3, true), "held");
        wait_in_step(*a);
        REQUIRE(a->in_step);
        runner.cancel();  // before the fix this joined the worker: the step then gave up after 5 s
        CHECK_FALSE(runner.busy());
        CHECK(a->in_step);  // still in its first step: cancel did not wait for it

        // The next task starts at once, but its first step waits for the cancelled one's.
        runner.start(std::make_unique<TracedTask>(b, 4, false), "next");
        std::this_thread::sleep_for(std::chrono::milliseconds(50));
        CHECK(b->steps == 0);
        a->release = true;
        REQUIRE(pump_until_idle(runner, session));
    }
    CHECK(a->released_in_time);
    CHECK(a->steps == 1);  // stopped after the step in flight
    CHECK_FALSE(a->finished);
    CHECK(b->steps == 4);
    CHECK(b->finished);
    CHECK_FALSE(b->overlapped);
}

TEST_CASE("a runner destroyed with cancelled work in flight waits for it", "[task_runner]") {
    REQUIRE(TaskRunner::threaded());
    auto a = std::make_shared<Trace>(), b = std::make_shared<Trace>();
    {
        TaskRunner runner;
        runner.start(std::make_unique<TracedTask>(a, 100, true), "held");
        wait_in_step(*a);
        runner.start(std::make_unique<TracedTask>(b, 100, false), "queued behind it");
        runner.cancel();
        std::thread releaser([a] {
            std::this_thread::sleep_for(std::chrono::milliseconds(20));
            a->release = true;
        });
        releaser.detach();
    }  // ~TaskRunner waits for its worker to leave the step; a crash or a hang here fails the test
    CHECK(a->released_in_time);
    CHECK(a->steps == 1);
    CHECK(b->steps == 0);  // stopped before its first step: it waited for a's
    CHECK_FALSE(a->finished);
    CHECK_FALSE(b->finished);
}

// The threaded page holds a fixed pool of workers, made before main(): a runner must not make a
// thread per task, or a task cancelled mid-step and the next one hold two (Emscripten then makes
// a worker while the app runs). Failed before: each task ran on a new thread.
TEST_CASE("a runner steps every task on the same one thread, cancelled or not", "[task_runner]") {
    REQUIRE(TaskRunner::threaded());
    Session session;
    std::vector<std::shared_ptr<std::atomic<std::thread::id>>> seen;
    class WhereTask final : public Task {
    public:
        explicit WhereTask(std::shared_ptr<std::atomic<std::thread::id>> where) : where_(std::move(where)) {}
        bool step() override {
            where_->store(std::this_thread::get_id());
            return false;
        }
        void finish(Session&) override {}

    private:
        std::shared_ptr<std::atomic<std::thread::id>> where_;
    };
    auto held = std::make_shared<Trace>();
    {
        TaskRunner runner;
        runner.start(std::make_unique<TracedTask>(held, 2, true), "held");
        wait_in_step(*held);
        for (int k = 0; k < 5; ++k) {  // each start cancels the one before, all while `held` is in its step
            seen.push_back(std::make_shared<std::atomic<std::thread::id>>());
            runner.start(std::make_unique<WhereTask>(seen.back()), "where");
        }
        held->release = true;
        REQUIRE(pump_until_idle(runner, session));
        seen.push_back(std::make_shared<std::atomic<std::thread::id>>());
        runner.start(std::make_unique<WhereTask>(seen.back()), "where, after the others");
        REQUIRE(pump_until_idle(runner, session));
    }
    // Only the last of the five queued ones runs (the others were cancelled before their turn),
    // then the one after: all on the held task's thread, which is not the test's. (A thread per
    // task gave the fifth a thread made while the held one's was still alive, so another id.)
    const std::thread::id none{};
    CHECK(seen[0]->load() == none);
    CHECK(held->where.load() != std::this_thread::get_id());
    CHECK(seen[4]->load() == held->where.load());
    CHECK(seen[5]->load() == held->where.load());
}
#endif
