#pragma once
// One way to time work (a progress line, a panel's "computed in 12 ms"): a steady clock and the
// time since one of its readings. Never an input to a result.
#include <chrono>

namespace attnlab {

using SteadyClock = std::chrono::steady_clock;

inline double ms_since(SteadyClock::time_point start) {
    return std::chrono::duration<double, std::milli>(SteadyClock::now() - start).count();
}

inline double seconds_since(SteadyClock::time_point start) {
    return std::chrono::duration<double>(SteadyClock::now() - start).count();
}

}  // namespace attnlab
