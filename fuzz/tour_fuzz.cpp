// libFuzzer target: arbitrary bytes as a tour (and as a view state, which every step holds).
// Besides crashes and sanitizer reports, it traps when the reader breaks its promises: a
// refusal leaves the tour untouched and says why; an accepted tour has 1-64 steps, writes back
// to JSON that reads again to the same tour, whole or compact; and every caption it accepted
// expands without a stray placeholder. Built and run by scripts/fuzz.sh.
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "app/tour/tour.h"
#include "base/json.h"

namespace {

void check(bool ok) {
    if (!ok) __builtin_trap();
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    // An exact-size copy, so AddressSanitizer sees any read one past the end.
    const std::vector<char> bytes(data, data + size);
    const std::string_view text(bytes.data(), bytes.size());
    attnlab::ViewState view;
    std::string error;
    if (!attnlab::parse_view_state(text, view, error)) check(!error.empty() && attnlab::view_state_json(view) == attnlab::view_state_json({}));

    attnlab::Tour tour;
    tour.title = "untouched";
    if (!attnlab::parse_tour(text, attnlab::ViewState(), tour, error)) {
        check(!error.empty() && tour.title == "untouched" && tour.steps.empty());
        return 0;
    }
    check(error.empty() && !tour.steps.empty() && tour.steps.size() <= attnlab::kMaxTourSteps);
    const auto status = attnlab::json::parse(R"({"a":{"b":1.5,"s":"x"},"n":null})");
    for (const bool compact : {false, true}) {
        attnlab::Tour back;
        check(attnlab::parse_tour(attnlab::tour_json(tour, compact), attnlab::ViewState(), back, error));
        check(attnlab::tour_json(back, false) == attnlab::tour_json(tour, false));
    }
    for (const attnlab::TourStep& step : tour.steps) {
        check(attnlab::check_caption(step.caption).empty());
        (void)attnlab::expand_caption(step.caption, *status.value);
    }
    return 0;
}
