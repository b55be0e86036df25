#pragma once
// A tour: a list of live views, each with a title and a caption, that a teacher records and a
// class steps through from one link (#t=, web/share_state.js) or a JSON file. Pure data and
// JSON, no ImGui: the tests link it alone. The schema is in docs/tours.md.
#include <string>
#include <string_view>
#include <vector>

#include "app/view_state.h"

namespace attnlab {

namespace json {
class Value;
}

struct TourStep {
    std::string title;
    std::string caption;          // may hold {status.path} placeholders, filled in live (expand_caption)
    std::string highlight;        // the widget to outline (a name in status().widgets); "" = none
    bool strongest_head = false;  // show the model's strongest learned head instead of view.layer/head
    ViewState view;
};

struct Tour {
    std::string title;
    double scale = 0;  // the UI scale the tour asks for (1 = 100%); 0 = leave it as it is
    std::vector<TourStep> steps;
};

inline constexpr int kMaxTourSteps = 64;
inline constexpr double kMinUiScale = 1.0, kMaxUiScale = 2.5;

// {"v":1,"kind":"attnlab-tour","title":..,"scale":..,"steps":[{"title":..,"caption":..,
//  "highlight":..,"strongest_head":..,"view":{..}}]}. compact: each step's view holds only
// what differs from the step before (links and files); otherwise every view is whole
// (window.attnlab.tour()).
std::string tour_json(const Tour& tour, bool compact);

// Reads what tour_json writes, strictly: a wrong type, a value out of range, an unknown key or a
// malformed caption placeholder is an error naming the step and the key, and leaves `out`
// untouched. A view's missing keys take the step before's value; the first step's, base's.
bool parse_tour(std::string_view json_text, const ViewState& base, Tour& out, std::string& error);

// The caption with each {path} replaced by the value at that path of `status` (the object
// window.attnlab.status() returns): "{distance.N_star}", "{attention.previous_token.best.weight}".
// Numbers show 3 significant digits ({path:5} for 5), whole and larger numbers in full; a path that is
// missing or null (not computed yet) shows as an ellipsis. "{{" and "}}" are literal braces.
std::string expand_caption(std::string_view caption, const json::Value& status);

// "" when every placeholder of the caption is well formed; otherwise why not.
std::string check_caption(std::string_view caption);

// The top-level keys of status that the caption's placeholders read ("distance" for
// {distance.N_star}), each once, in the order of their first use; none for a malformed caption.
std::vector<std::string> caption_keys(std::string_view caption);

// The built-in tour, "What softmax can and cannot select", as JSON (src/app/tour/builtin_tour.cpp).
const char* builtin_tour_json();
// Its number of steps, read from the tour itself (Help quotes it, so it cannot drift).
size_t builtin_tour_steps();

}  // namespace attnlab
