// ColumnRuns (model/column_runs.h), the share of a product's columns between threads: every unit
// handed out exactly once under any interleaving of the threads' calls, a thread's own pieces in
// order from its run's front, the others' from their backs, the pieces' sizes, the piece to
// fetch ahead, and real threads.
#include <catch2/catch.hpp>

#include <atomic>
#include <vector>

#include "base/parallel.h"
#include "base/random.h"
#include "model/column_runs.h"

using namespace attnlab;

namespace {

using Piece = ColumnRuns::Piece;

std::vector<int> pieces_of(ColumnRuns& runs, int own, int calls) {
    std::vector<int> got;
    for (int c = 0; c < calls; ++c) {
        const Piece p = runs.next(own);
        got.push_back(p.first);
        got.push_back(p.end);
    }
    return got;
}

}  // namespace

TEST_CASE("ColumnRuns: one thread alone takes panels in order", "[parallel]") {
    ColumnRuns runs(10, 1, 4);
    REQUIRE(runs.runs() == 1);
    const Piece a = runs.next(0);
    CHECK((a.first == 0 && a.end == 4 && a.next_first == 4 && a.next_end == 8));
    const Piece b = runs.next(0);
    CHECK((b.first == 4 && b.end == 8 && b.next_first == 8 && b.next_end == 10));
    const Piece c = runs.next(0);
    CHECK((c.first == 8 && c.end == 10 && c.next_first == c.next_end));
    CHECK(runs.next(0).empty());
}

TEST_CASE("ColumnRuns: a run's last pieces shrink, and a thread done takes the others' from the back", "[parallel]") {
    // 15 units, 2 threads: runs [0, 7) and [7, 15). Written out by hand.
    ColumnRuns runs(15, 2, 4);
    REQUIRE(runs.runs() == 2);
    // Thread 0 alone: its own run front first (4, then half of 3 = 2, then 1), then thread 1's from
    // the back (half of 8 = 4, then 2, 1, 1).
    CHECK(pieces_of(runs, 0, 4) == std::vector<int>{0, 4, 4, 6, 6, 7, 11, 15});
    // Thread 1 comes: its run's front, [7, 11) left; half of 4 = 2.
    CHECK(pieces_of(runs, 1, 1) == std::vector<int>{7, 9});
    CHECK(pieces_of(runs, 0, 1) == std::vector<int>{10, 11});  // half of [9, 11), from the back
    CHECK(pieces_of(runs, 1, 1) == std::vector<int>{9, 10});
    CHECK(runs.next(0).empty());
    CHECK(runs.next(1).empty());
    // More threads than units: one run a unit.
    ColumnRuns few(3, 8, 4);
    CHECK(few.runs() == 3);
}

TEST_CASE("ColumnRuns: every unit once, whatever order the threads call in", "[parallel]") {
    SplitMix64 rng(5);
    int schedules = 0;
    for (int units : {1, 2, 7, 15, 30, 48, 101})
        for (int threads : {1, 2, 3, 7})
            for (int panel : {1, 4})
                for (int seed = 0; seed < 20; ++seed, ++schedules) {
                    ColumnRuns runs(units, threads, panel);
                    const int n = runs.runs();
                    std::vector<int> taken(static_cast<size_t>(units), 0), last_own_end(static_cast<size_t>(n), -1);
                    std::vector<char> done(static_cast<size_t>(n), 0);
                    std::vector<Piece> hint(static_cast<size_t>(n));
                    int active = n, bad = 0;
                    while (active > 0) {
                        const int own = static_cast<int>(rng.next() % static_cast<std::uint64_t>(n));
                        if (done[static_cast<size_t>(own)]) continue;
                        const Piece p = runs.next(own);
                        if (p.empty()) {
                            done[static_cast<size_t>(own)] = 1;
                            --active;
                            continue;
                        }
                        bad += p.first < 0 || p.end > units || p.end - p.first > panel;
                        for (int u = p.first; u < p.end; ++u) ++taken[static_cast<size_t>(u)];
                        const int run_first = units * own / n, run_end = units * (own + 1) / n;
                        if (p.first >= run_first && p.end <= run_end) {  // its own run: from the front, in order
                            const int expected =
                                last_own_end[static_cast<size_t>(own)] < 0 ? run_first : last_own_end[static_cast<size_t>(own)];
                            bad += p.first != expected;
                            last_own_end[static_cast<size_t>(own)] = p.end;
                        }
                    }
                    int wrong = 0;
                    for (int t : taken) wrong += t != 1;
                    INFO(units << " units, " << threads << " threads, panel " << panel << ", schedule " << seed);
                    REQUIRE(wrong == 0);
                    REQUIRE(bad == 0);
                }
    CHECK(schedules == 7 * 4 * 2 * 20);
}

TEST_CASE("ColumnRuns: every unit once under real threads, job after job", "[parallel]") {
    const int threads = max_threads();
    INFO(threads << " thread(s)");
    std::vector<std::atomic<int>> taken(300);
    for (int job = 0; job < 2000; ++job) {
        const int units = 1 + job % 300;
        ColumnRuns runs(units, threads, 1 + job % 5);
        parallel_for(runs.runs(), [&](int own) {
            for (Piece p = runs.next(own); !p.empty(); p = runs.next(own))
                for (int u = p.first; u < p.end; ++u) taken[static_cast<size_t>(u)].fetch_add(1);
        });
        int wrong = 0;
        for (int u = 0; u < 300; ++u) wrong += taken[static_cast<size_t>(u)].exchange(0) != (u < units ? 1 : 0);
        if (wrong) FAIL("job " << job << ": " << wrong << " units not taken exactly once");
    }
}
