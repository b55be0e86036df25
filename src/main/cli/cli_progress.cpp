#include "main/cli/cli_progress.h"

#include <unistd.h>

#include <cstdio>

namespace attnlab {

ProgressBar::ProgressBar(bool quiet) : quiet_(quiet), tty_(isatty(fileno(stderr)) != 0) {}

void ProgressBar::update(long long done, long long total, const std::string& stage) {
    if (quiet_ || total <= 0) return;
    if (stage != stage_) {
        finish_line();
        stage_ = stage;
        start_ = SteadyClock::now();
        last_tenth_ = -1;
    }
    const double f = static_cast<double>(done) / static_cast<double>(total);
    const double elapsed = seconds_since(start_);
    const double eta = f > 0 ? elapsed * (1.0 - f) / f : 0.0;
    const int tenth = static_cast<int>(f * 10.0);
    if (tty_) {
        if (done < total && seconds_since(last_draw_) < 0.1) return;
        last_draw_ = SteadyClock::now();
        const int width = 30, filled = static_cast<int>(f * width);
        std::fprintf(stderr, "\r%-32s [%s%s] %3d%%  %lld/%lld  ETA %3.0f s ", stage.c_str(),
                     std::string(static_cast<size_t>(filled), '#').c_str(), std::string(static_cast<size_t>(width - filled), '.').c_str(),
                     static_cast<int>(f * 100), done, total, eta);
        open_line_ = true;
        if (done == total) finish_line();
    } else if (tenth != last_tenth_) {
        last_tenth_ = tenth;
        std::fprintf(stderr, "%s: %3d%% (%lld/%lld), %.1f s elapsed, ETA %.0f s\n", stage.c_str(), static_cast<int>(f * 100), done, total,
                     elapsed, eta);
    }
}
void ProgressBar::finish_line() {
    if (open_line_) std::fputc('\n', stderr);
    open_line_ = false;
}

}  // namespace attnlab
