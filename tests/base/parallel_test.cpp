// parallel_for: every item runs exactly once, on a valid thread index, through thousands of
// jobs in a row (the pthreads WebAssembly pool hands a job's items out under a lock and must
// not let a late worker run an item of the next job), nested calls, and thread limits.
#include <catch2/catch.hpp>

#include <atomic>
#include <vector>

#include "base/parallel.h"

using namespace attnlab;

TEST_CASE("parallel_for runs every item once, job after job", "[parallel]") {
    const int threads = max_threads();
    INFO(threads << " thread(s)");
    std::vector<std::atomic<int>> runs(257);
    std::atomic<int> bad_index{0};
    for (int job = 0; job < 3000; ++job) {
        const int count = 1 + job % 257;
        parallel_for(count, [&](int i) {
            runs[static_cast<size_t>(i)].fetch_add(1);
            const int t = thread_index();
            if (t < 0 || t >= threads) bad_index.fetch_add(1);
        });
        int wrong = 0;
        for (int i = 0; i < 257; ++i) wrong += runs[static_cast<size_t>(i)].exchange(0) != (i < count ? 1 : 0);
        if (wrong) FAIL("job " << job << ": " << wrong << " items did not run exactly once");
    }
    CHECK(bad_index.load() == 0);
}

TEST_CASE("parallel_for nests, and follows set_max_threads", "[parallel]") {
    std::atomic<int> cells{0};
    parallel_for(7, [&](int) { parallel_for(11, [&](int) { cells.fetch_add(1); }); });
    CHECK(cells.load() == 77);

    const int before = max_threads();
    set_max_threads(1);
    std::atomic<int> not_caller{0};
    parallel_for(100, [&](int) { not_caller.fetch_add(thread_index() != 0); });
    CHECK(not_caller.load() == 0);
    set_max_threads(before);
    CHECK(max_threads() == before);
}
