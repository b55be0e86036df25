// libFuzzer target: arbitrary bytes as a tour (and as a view state, which every step holds).
// Besides crashes and sanitizer reports, it traps when the reader breaks its promises: a
// refusal leaves the tour untouched and says why; an accepted tour has 1-64 steps, writes back
// to JSON that reads again to the same tour, whole or compact; and every caption it accepted
// expands without a stray placeholder. A view's attention plan ("plan") that the reader accepts
// must also read against a model's shape without crashing: either a plan whose text
// (attention_spec, relative to the default plan and to a trained one) reads back to the same
// plan, or a refusal that says why. Built and run by scripts/fuzz.sh.
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "app/tour/tour.h"
#include "base/json.h"
#include "model/attention_plan.h"

namespace {

void check(bool ok) {
    if (!ok) __builtin_trap();
}

// What the page does with a link's plan once a model has loaded (session keep_plan_current).
void check_plan(const std::string& spec) {
    std::string error;
    check(attnlab::check_attention_spec(spec, error));
    for (const auto& [layers, heads] : {std::pair{4, 4}, std::pair{12, 12}}) {
        attnlab::AttentionPlan trained(layers, heads);
        check(attnlab::parse_attention_spec("all=ssmax:0.43,0.*=softmax", layers, heads, trained, error));
        for (const attnlab::AttentionPlan& base : {attnlab::AttentionPlan(layers, heads), trained}) {
            attnlab::AttentionPlan plan = base;
            if (!attnlab::parse_attention_spec(spec, layers, heads, plan, error)) {
                check(!error.empty() && plan == base);
                continue;
            }
            attnlab::AttentionPlan back = base;
            check(attnlab::parse_attention_spec(attnlab::attention_spec(plan, base), layers, heads, back, error) && back == plan);
        }
    }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    // An exact-size copy, so AddressSanitizer sees any read one past the end.
    const std::vector<char> bytes(data, data + size);
    const std::string_view text(bytes.data(), bytes.size());
    attnlab::ViewState view;
    std::string error;
    if (!attnlab::parse_view_state(text, view, error)) {
        check(!error.empty() && attnlab::view_state_json(view) == attnlab::view_state_json({}));
    } else {
        attnlab::ViewState back;
        check(attnlab::parse_view_state(attnlab::view_state_json(view), back, error) && back == view);
        check_plan(view.plan);
    }

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
