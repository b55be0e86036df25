#pragma once
// One way to time work (a progress line, a panel's "computed in 12 ms"): a steady clock and the
// time since one of its readings. Never an input to a result.
#include <algorithm>
#include <chrono>

namespace attnlab {

using SteadyClock = std::chrono::steady_clock;

inline double ms_since(SteadyClock::time_point start) {
    return std::chrono::duration<double, std::milli>(SteadyClock::now() - start).count();
}

inline double seconds_since(SteadyClock::time_point start) { return std::chrono::duration<double>(SteadyClock::now() - start).count(); }

// The best of `repeats` timed runs of run(), after one that is not timed (it warms caches and
// pages in what the run touches), in seconds. For choosing a kernel and for benchmarks.
template <typename Run>
double best_seconds(int repeats, Run&& run) {
    double best = 1e30;
    for (int r = 0; r <= repeats; ++r) {
        const auto start = SteadyClock::now();
        run();
        if (r > 0) best = std::min(best, seconds_since(start));
    }
    return best;
}

}  // namespace attnlab
