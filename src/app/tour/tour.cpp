#include "app/tour/tour.h"

#include <algorithm>
#include <cmath>
#include <cstdio>

#include "app/token_chip.h"
#include "base/json.h"

namespace attnlab {

namespace {

constexpr std::size_t kMaxTitleBytes = 200;
constexpr std::size_t kMaxCaptionBytes = 4000;
constexpr std::size_t kMaxHighlightBytes = 100;
constexpr const char* kKind = "attnlab-tour";

bool path_char(char c) {
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' || c == '-' || c == '.';
}

// One "{path}" or "{path:D}" at caption[at] == '{': its path and digits, and where it ends.
// False, with `why`, when it is not well formed.
bool read_placeholder(std::string_view caption, std::size_t at, std::string_view& path, int& digits, std::size_t& end, std::string& why) {
    std::size_t i = at + 1;
    while (i < caption.size() && path_char(caption[i])) ++i;
    path = caption.substr(at + 1, i - at - 1);
    digits = 3;
    if (i < caption.size() && caption[i] == ':') {
        if (i + 1 < caption.size() && caption[i + 1] >= '1' && caption[i + 1] <= '9') {
            digits = caption[i + 1] - '0';
            i += 2;
        } else {
            i = caption.size();  // reported below
        }
    }
    const bool well_formed = !path.empty() && path.front() != '.' && path.back() != '.' && path.find("..") == std::string_view::npos &&
                             i < caption.size() && caption[i] == '}';
    if (!well_formed) {
        why = "the '{' at byte " + std::to_string(at) +
              " does not start a placeholder such as {distance.N_star} or {gradient.T:2} (write {{ for a brace)";
        return false;
    }
    end = i + 1;
    return true;
}

// Walks the status object along a dotted path; numeric parts index arrays.
const json::Value* at_path(const json::Value& root, std::string_view path) {
    const json::Value* v = &root;
    while (v && !path.empty()) {
        const std::size_t dot = path.find('.');
        const std::string_view part = path.substr(0, dot);
        path = dot == std::string_view::npos ? std::string_view() : path.substr(dot + 1);
        if (v->is_object()) {
            v = v->find(part);
        } else if (v->is_array()) {
            std::size_t index = 0;
            for (char c : part) {
                if (c < '0' || c > '9' || index > 1000000) return nullptr;
                index = index * 10 + static_cast<std::size_t>(c - '0');
            }
            v = index < v->items().size() ? &v->items()[index] : nullptr;
        } else {
            return nullptr;
        }
    }
    return v;
}

std::string shown_value(const json::Value* v, int digits) {
    if (!v || v->is_null()) return "\xE2\x80\xA6";  // not computed (yet)
    switch (v->type()) {
        case json::Value::Type::Number: {
            const double x = v->as_number();
            char buf[48];
            const bool whole = x == std::round(x) || std::fabs(x) >= std::pow(10.0, digits);
            if (std::isfinite(x) && whole && std::fabs(x) < 1e15) std::snprintf(buf, sizeof buf, "%.0f", x);
            else std::snprintf(buf, sizeof buf, "%.*g", digits, x);
            return buf;
        }
        case json::Value::Type::String: return v->as_string();
        case json::Value::Type::Bool: return v->as_bool() ? "yes" : "no";
        default: return "\xE2\x80\xA6";
    }
}

// --- reading --------------------------------------------------------------------------------

struct Reader {
    std::string where;  // "the tour", "step 3"
    std::string& error;

    bool fail(std::string_view key, std::string_view wants, const json::Value* got) {
        error = where + ": " + std::string(key) + " must be " + std::string(wants);
        if (got) error += std::string(", got ") + json::Value::type_name(got->type());
        return false;
    }
    bool only_keys(const json::Value& obj, std::initializer_list<std::string_view> keys) {
        for (const auto& [key, value] : obj.members()) {
            bool known = false;
            for (std::string_view k : keys) known = known || key == k;
            if (!known) {
                std::string list;
                for (std::string_view k : keys) list.append(list.empty() ? "" : ", ").append(k);
                error = where + ": unknown key \"" + key + "\" (a " + (where == "the tour" ? "tour" : "step") + " has " + list + ")";
                return false;
            }
        }
        return true;
    }
    bool text(const json::Value& obj, std::string_view key, std::size_t max_bytes, std::string& out) {
        const json::Value* v = obj.find(key);
        if (!v) return true;
        if (!v->is_string() || v->as_string().size() > max_bytes)
            return fail(key, "a string of at most " + std::to_string(max_bytes) + " bytes", v->is_string() ? nullptr : v);
        out = v->as_string();
        return true;
    }
};

bool read_step(const json::Value& obj, int index, const ViewState& before, TourStep& step, std::string& error) {
    Reader r{"step " + std::to_string(index + 1), error};
    if (!obj.is_object()) return r.fail("the step", "an object", &obj);
    if (!r.only_keys(obj, {"title", "caption", "highlight", "strongest_head", "view"})) return false;
    if (!r.text(obj, "title", kMaxTitleBytes, step.title) || !r.text(obj, "caption", kMaxCaptionBytes, step.caption) ||
        !r.text(obj, "highlight", kMaxHighlightBytes, step.highlight))
        return false;
    for (char c : step.highlight)
        if (!path_char(c)) return r.fail("highlight", "a widget name such as \"gradient.T\" (letters, digits, . _ -)", nullptr);
    if (const std::string why = check_caption(step.caption); !why.empty()) {
        error = r.where + ": caption: " + why;
        return false;
    }
    if (const json::Value* v = obj.find("strongest_head")) {
        if (!v->is_bool()) return r.fail("strongest_head", "true or false", v);
        step.strongest_head = v->as_bool();
    }
    const json::Value* view = obj.find("view");
    if (!view || !view->is_object()) return r.fail("view", "an object (a view state, as window.attnlab.state() gives)", view);
    step.view = before;
    std::string why;
    if (!read_view_state(*view, step.view, why)) {
        error = r.where + "'s view: " + why;
        return false;
    }
    return true;
}

// Walks a caption: each literal character (with {{ and }} read as braces) to `text`, each
// placeholder's path and digits to `placeholder`. "" when it is well formed, else why not.
template <typename Text, typename Placeholder>
std::string walk_caption(std::string_view caption, Text&& text, Placeholder&& placeholder) {
    for (std::size_t i = 0; i < caption.size(); ++i) {
        const char c = caption[i];
        if ((c == '{' || c == '}') && i + 1 < caption.size() && caption[i + 1] == c) {
            text(c);
            ++i;
        } else if (c == '}') {
            return "the '}' at byte " + std::to_string(i) + " closes no placeholder (write }} for a brace)";
        } else if (c != '{') {
            text(c);
        } else {
            std::string_view path;
            int digits = 0;
            std::size_t end = 0;
            std::string why;
            if (!read_placeholder(caption, i, path, digits, end, why)) return why;
            placeholder(path, digits);
            i = end - 1;
        }
    }
    return "";
}

}  // namespace

std::string check_caption(std::string_view caption) {
    return walk_caption(
        caption, [](char) {}, [](std::string_view, int) {});
}

std::vector<std::string> caption_keys(std::string_view caption) {
    std::vector<std::string> keys;
    const std::string why = walk_caption(
        caption, [](char) {},
        [&](std::string_view path, int) {
            const std::string key(path.substr(0, path.find('.')));
            if (std::find(keys.begin(), keys.end(), key) == keys.end()) keys.push_back(key);
        });
    if (!why.empty()) keys.clear();
    return keys;
}

std::string expand_caption(std::string_view caption, const json::Value& status) {
    std::string out;
    out.reserve(caption.size());
    const std::string why = walk_caption(
        caption, [&](char c) { out += c; },
        [&](std::string_view path, int digits) {
            // A token reads as in the tables ("was↵", "·the"), not as its raw bytes.
            const json::Value* v = at_path(status, path);
            if (path.ends_with(".token") && v && v->type() == json::Value::Type::String) out += chip_label(v->as_string());
            else out += shown_value(v, digits);
        });
    return why.empty() ? out : std::string(caption);  // parse_tour refuses such captions; shown as written
}

std::string tour_json(const Tour& tour, bool compact) {
    json::ObjectBuilder o;
    o.add("v", 1).add("kind", kKind).add("title", tour.title);
    if (tour.scale > 0) o.add("scale", tour.scale);
    json::ArrayBuilder steps;
    const ViewState* before = nullptr;
    for (const TourStep& step : tour.steps) {
        json::ObjectBuilder s;
        s.add("title", step.title).add("caption", step.caption);
        if (!step.highlight.empty()) s.add("highlight", step.highlight);
        if (step.strongest_head) s.add("strongest_head", true);
        s.add_raw("view", view_state_json(step.view, compact ? before : nullptr));
        steps.add_raw(s.str());
        before = &step.view;
    }
    o.add_raw("steps", steps.str());
    return o.str();
}

bool parse_tour(std::string_view json_text, const ViewState& base, Tour& out, std::string& error) {
    const json::ParseResult parsed = json::parse(json_text, 16);
    if (!parsed.value) {
        error = "the tour is not JSON (" + parsed.error + ")";
        return false;
    }
    const json::Value& obj = *parsed.value;
    Reader r{"the tour", error};
    if (!obj.is_object()) return r.fail("the tour", "a JSON object", &obj);
    if (!r.only_keys(obj, {"v", "kind", "title", "scale", "steps"})) return false;
    const json::Value* kind = obj.find("kind");
    if (!kind || !kind->is_string() || kind->as_string() != kKind)
        return r.fail("kind", "\"attnlab-tour\" (this is not an AttnLab tour)", kind && !kind->is_string() ? kind : nullptr);
    const json::Value* v = obj.find("v");
    if (!v || v->as_int(1, 1) != 1) return r.fail("v", "1 (the tour format this AttnLab reads)", nullptr);
    Tour tour;
    if (!r.text(obj, "title", kMaxTitleBytes, tour.title)) return false;
    if (const json::Value* scale = obj.find("scale")) {
        if (!scale->is_number() || !(scale->as_number() >= kMinUiScale && scale->as_number() <= kMaxUiScale))
            return r.fail("scale", "a number from 1 to 2.5 (100% to 250%)", scale->is_number() ? nullptr : scale);
        tour.scale = scale->as_number();
    }
    const json::Value* steps = obj.find("steps");
    if (!steps || !steps->is_array() || steps->items().empty() || steps->items().size() > kMaxTourSteps)
        return r.fail("steps", "a list of 1 to " + std::to_string(kMaxTourSteps) + " steps", steps && !steps->is_array() ? steps : nullptr);
    tour.steps.resize(steps->items().size());
    for (std::size_t i = 0; i < tour.steps.size(); ++i)
        if (!read_step(steps->items()[i], static_cast<int>(i), i == 0 ? base : tour.steps[i - 1].view, tour.steps[i], error)) return false;
    out = std::move(tour);
    error.clear();
    return true;
}

size_t builtin_tour_steps() {
    static const size_t steps = [] {
        Tour tour;
        std::string error;
        return parse_tour(builtin_tour_json(), ViewState{}, tour, error) ? tour.steps.size() : 0;
    }();
    return steps;
}

}  // namespace attnlab
