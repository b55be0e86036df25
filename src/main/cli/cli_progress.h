#pragma once
// A progress bar with an ETA on stderr for the long CLI commands: redrawn in place on a terminal,
// a line per tenth otherwise (CI logs).
#include <string>

#include "base/timing.h"

namespace attnlab {

class ProgressBar {
public:
    explicit ProgressBar(bool quiet);

    // `done` of `total` units of `stage`; a new stage starts a new bar.
    void update(long long done, long long total, const std::string& stage);
    // Ends a bar left open on a terminal.
    void finish_line();

private:
    bool quiet_, tty_;
    bool open_line_ = false;
    std::string stage_;
    int last_tenth_ = -1;
    SteadyClock::time_point start_ = SteadyClock::now(), last_draw_{};
};

}  // namespace attnlab
