#include "app/long_samples.h"

#include <algorithm>

namespace attnlab {

std::string needle_text(std::string_view filler) {
    std::string out;
    out.reserve(filler.size() + 512);
    const auto next_line = [&](size_t from) {
        const size_t nl = filler.find('\n', from);
        return nl == std::string_view::npos ? filler.size() : nl;
    };
    size_t end = next_line(0);
    out.append(filler.substr(0, end));
    out.append(kNeedleFirstHalf).append(kNeedleContinuation);
    const size_t planted = end;
    size_t repeat = 0;
    while (end < filler.size()) {
        const size_t from = end;
        end = next_line(from + 1);
        out.append(filler.substr(from, end - from));
        if (repeat < std::size(kNeedleRepeatBytes) && end - planted >= static_cast<size_t>(kNeedleRepeatBytes[repeat]) &&
            end < filler.size()) {
            out.append(kNeedleFirstHalf);
            // Beyond the filler's length the remaining distances cannot be reached.
            while (repeat < std::size(kNeedleRepeatBytes) && end - planted >= static_cast<size_t>(kNeedleRepeatBytes[repeat])) ++repeat;
        }
    }
    while (!out.empty() && out.back() == '\n') out.pop_back();
    out.append(kNeedleFirstHalf);  // the last words: the model should continue them
    return out;
}

std::vector<NeedleProbe> needle_probes(std::span<const int> tokens, std::span<const int> first_half) {
    std::vector<NeedleProbe> out;
    const size_t n = first_half.size();
    if (n == 0 || tokens.size() < n) return out;
    int key = -1;
    for (size_t i = 0; i + n <= tokens.size(); ++i) {
        if (!std::equal(first_half.begin(), first_half.end(), tokens.begin() + static_cast<std::ptrdiff_t>(i))) continue;
        const int last = static_cast<int>(i + n) - 1;
        if (key < 0) {
            if (last + 1 >= static_cast<int>(tokens.size())) return out;
            key = last + 1;
        } else {
            out.push_back({last, key});
        }
        i += n - 1;
    }
    return out;
}

}  // namespace attnlab
