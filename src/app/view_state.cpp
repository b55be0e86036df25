#include "app/view_state.h"

#include "model/json.h"

namespace attnlab {

namespace {
constexpr struct {
    Panel panel;
    const char* name;
} kPanels[] = {{Panel::Text, "text"},         {Panel::Attention, "attention"}, {Panel::Distance, "distance"},
               {Panel::Separability, "separability"}, {Panel::Gradient, "gradient"}, {Panel::Playground, "playground"},
               {Panel::Help, "help"}};
}  // namespace

const char* panel_name(Panel p) {
    for (const auto& e : kPanels)
        if (e.panel == p) return e.name;
    return "text";
}

bool parse_panel(std::string_view name, Panel& out) {
    for (const auto& e : kPanels)
        if (name == e.name) {
            out = e.panel;
            return true;
        }
    return false;
}

// TODO(helper D): the JSON round trip.
std::string view_state_json(const ViewState& s) {
    json::ObjectBuilder o;
    o.add("panel", panel_name(s.panel));
    return o.str();
}

bool parse_view_state(std::string_view json_text, ViewState& out, std::string& error) {
    (void)json_text;
    (void)out;
    error = "not implemented";
    return false;
}

}  // namespace attnlab
