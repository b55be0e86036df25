#pragma once
// How the threads share a product's columns (linear.cpp): each thread owns one run of units of
// columns and takes pieces of it from the front, panel by panel, so that it reads W in order and
// can fetch the next panel ahead; a thread with nothing left of its own takes pieces of another's
// run from the back, until every run is empty. Pieces are at most a panel and at most half of
// what is left of the run, so that near a run's end two threads can still share it.
//
// Why not the fixed runs alone: the two halves of a product ended 0.1-1 ms apart on the 2-core
// Zen 3 (one thread was the slower for a while, whichever), and the other waited: about a tenth
// of the linear maps' time in a 2-thread prefill. Why not pieces handed out in order as threads come free: they
// alternate between the threads, which was 8-16% slower on the Zen 5 (bench/RESULTS.md). Whoever
// computes a piece, every column's bits are the same: they depend only on the column.
//
// One 64-bit word a run (front and back), changed by compare-and-swap: each unit is handed out
// exactly once, whatever the interleaving.
#include <algorithm>
#include <array>
#include <atomic>
#include <cstdint>

namespace attnlab {

class ColumnRuns {
public:
    static constexpr int kMostRuns = 64;

    struct Piece {
        int first = 0, end = 0;            // units [first, end); empty when nothing is left anywhere
        int next_first = 0, next_end = 0;  // what this thread will likely take next (to fetch ahead)
        bool empty() const { return first >= end; }
    };

    // units split into runs of nearly equal length, at most kMostRuns and at most one a unit;
    // a piece of one's own run is at most panel units.
    ColumnRuns(int units, int threads, int panel) : runs_(std::clamp(std::min(threads, units), 1, kMostRuns)), panel_(panel) {
        for (int r = 0; r < runs_; ++r) run_[static_cast<size_t>(r)].store(pack(units * r / runs_, units * (r + 1) / runs_));
    }

    int runs() const { return runs_; }

    // The next piece for the thread that owns run `own`: from its own run's front, then from the
    // back of the others'.
    Piece next(int own) {
        Piece p = take(own, true);
        for (int o = 1; o < runs_ && p.empty(); ++o) p = take((own + o) % runs_, false);
        return p;
    }

private:
    static std::uint64_t pack(int front, int back) { return (std::uint64_t(std::uint32_t(front)) << 32) | std::uint32_t(back); }

    // At most a panel, and with other threads about at most half of what is left (at least 1).
    int piece(int left) const { return std::min(panel_, runs_ == 1 ? left : (left + 1) / 2); }

    Piece take(int r, bool front_side) {
        std::atomic<std::uint64_t>& run = run_[static_cast<size_t>(r)];
        std::uint64_t seen = run.load(std::memory_order_relaxed);
        for (;;) {
            const int front = static_cast<int>(seen >> 32), back = static_cast<int>(std::uint32_t(seen));
            if (back <= front) return {};
            if (front_side) {
                const int end = front + piece(back - front);
                if (run.compare_exchange_weak(seen, pack(end, back), std::memory_order_relaxed))
                    return {front, end, end, end < back ? end + piece(back - end) : end};
            } else {
                const int first = back - piece(back - front);
                if (run.compare_exchange_weak(seen, pack(front, first), std::memory_order_relaxed))
                    return {first, back, first > front ? first - piece(first - front) : first, first};
            }
        }
    }

    int runs_, panel_;
    std::array<std::atomic<std::uint64_t>, kMostRuns> run_;
};

}  // namespace attnlab
