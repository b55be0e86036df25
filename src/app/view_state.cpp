#include "app/view_state.h"

#include <cmath>
#include <optional>

#include "analysis/normalizers.h"
#include "base/json.h"
#include "model/attention_plan.h"

namespace attnlab {

namespace {
constexpr struct {
    Panel panel;
    const char* name;
} kPanels[] = {
    {Panel::Text, "text"},         {Panel::Attention, "attention"},   {Panel::Distance, "distance"}, {Panel::Separability, "separability"},
    {Panel::Gradient, "gradient"}, {Panel::Playground, "playground"}, {Panel::Help, "help"},         {Panel::Fading, "fading"}};

// Limits of what a link may carry. Layer/head/query/N are clamped to the model later
// (clamp_view); these only keep absurd values out.
constexpr std::size_t kMaxTextBytes = 1 << 20;  // 1 MiB of text: far beyond GPT-2's 1024 tokens
constexpr std::size_t kMaxUrlBytes = 2047;      // the model bar's address field holds 2047
constexpr std::int64_t kMaxIndex = 1 << 20;
constexpr double kMaxReal = 1e6;  // T and eps: beyond this everything is flat

// "got ..." for messages: the literal JSON of what was there, shortened.
std::string shown(const json::Value& v) {
    switch (v.type()) {
        case json::Value::Type::Number: return v.as_string();
        case json::Value::Type::String: {
            std::string s = v.as_string().size() > 40 ? v.as_string().substr(0, 40) + "..." : v.as_string();
            return json::quote(s);
        }
        case json::Value::Type::Bool: return v.as_bool() ? "true" : "false";
        default: return json::Value::type_name(v.type());
    }
}

std::string bad(std::string_view key, std::string_view wants, const json::Value& v) {
    std::string e(key);
    e.append(" must be ").append(wants).append(", got ").append(shown(v));
    return e;
}

bool read_int(const json::Value& obj, std::string_view key, std::int64_t lo, std::int64_t hi, std::string_view wants, int& out,
              std::string& error) {
    const json::Value* v = obj.find(key);
    if (!v) return true;
    const std::optional<std::int64_t> i = v->as_int(lo, hi);
    if (!i) {
        error = bad(key, wants, *v);
        return false;
    }
    out = static_cast<int>(*i);
    return true;
}

bool read_positive(const json::Value& obj, std::string_view key, double& out, std::string& error) {
    const json::Value* v = obj.find(key);
    if (!v) return true;
    if (!v->is_number() || !std::isfinite(v->as_number()) || v->as_number() <= 0.0 || v->as_number() > kMaxReal) {
        error = bad(key, "a number > 0 and <= 1e6", *v);
        return false;
    }
    out = v->as_number();
    return true;
}
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

std::string view_state_json(const ViewState& s, const ViewState* base) {
    json::ObjectBuilder o;
    o.add("v", 1);
    // With a base, only what differs from it (tour steps after the first); read back with
    // that base, the state is exact.
    auto differs = [&](auto member) { return !base || s.*member != base->*member; };
    if (differs(&ViewState::text)) o.add("text", s.text);
    if (differs(&ViewState::model_url)) o.add("model", s.model_url);
    if (differs(&ViewState::panel)) o.add("panel", panel_name(s.panel));
    if (differs(&ViewState::layer)) o.add("layer", s.layer);
    if (differs(&ViewState::head)) o.add("head", s.head);
    if (differs(&ViewState::query)) o.add("query", s.query);
    if (differs(&ViewState::N)) o.add("N", s.N);
    if (differs(&ViewState::T)) o.add("T", s.T);
    if (differs(&ViewState::normalizer)) o.add("normalizer", s.normalizer);
    if (differs(&ViewState::eps)) o.add("eps", s.eps);
    // Written even when "" (as trained): a tour step going back to the model as trained must say so.
    if (differs(&ViewState::plan)) o.add("plan", s.plan);
    // Written even when false: a tour step that compares no more must say so.
    if (differs(&ViewState::compare)) o.add("compare", s.compare);
    return o.str();
}

bool parse_view_state(std::string_view json_text, ViewState& out, std::string& error) {
    const json::ParseResult parsed = json::parse(json_text, 16);
    if (!parsed.value) {
        error = "the view state is not JSON (" + parsed.error + ")";
        return false;
    }
    return read_view_state(*parsed.value, out, error);
}

bool read_view_state(const json::Value& obj, ViewState& out, std::string& error) {
    if (!obj.is_object()) {
        error = std::string("the view state must be a JSON object, got ") + json::Value::type_name(obj.type());
        return false;
    }
    ViewState s = out;  // filled key by key; `out` changes only if every key is good
    if (const json::Value* v = obj.find("v"); v && v->as_int(1, 1) != 1) {
        error = bad("v", "1 (the link format this AttnLab reads)", *v);
        return false;
    }
    if (const json::Value* v = obj.find("text")) {
        if (!v->is_string() || v->as_string().size() > kMaxTextBytes) {
            error = bad("text", "a string of at most 1 MiB", *v);
            return false;
        }
        s.text = v->as_string();
    }
    if (const json::Value* v = obj.find("model")) {
        bool ok = v->is_string() && v->as_string().size() <= kMaxUrlBytes;
        // An address, not a script: no control characters, no "javascript:" and the like.
        if (ok)
            for (unsigned char c : v->as_string()) ok = ok && c >= 0x20 && c != 0x7f;
        if (ok && v->as_string().find(':') != std::string::npos)
            ok = v->as_string().rfind("http://", 0) == 0 || v->as_string().rfind("https://", 0) == 0;
        if (!ok) {
            error = bad("model", "an http(s) or relative address of at most 2047 bytes, or \"\"", *v);
            return false;
        }
        s.model_url = v->as_string();
    }
    if (const json::Value* v = obj.find("panel")) {
        if (!v->is_string() || !parse_panel(v->as_string(), s.panel)) {
            error = bad("panel", "one of text, attention, distance, separability, gradient, playground, help", *v);
            return false;
        }
    }
    if (!read_int(obj, "layer", 0, kMaxIndex, "a whole number >= 0", s.layer, error)) return false;
    if (!read_int(obj, "head", 0, kMaxIndex, "a whole number >= 0", s.head, error)) return false;
    if (!read_int(obj, "query", -1, kMaxIndex, "a whole number >= -1 (-1 = the last token)", s.query, error)) return false;
    if (!read_int(obj, "N", 1, kMaxIndex, "a whole number >= 1", s.N, error)) return false;
    if (!read_positive(obj, "T", s.T, error)) return false;
    if (const json::Value* v = obj.find("normalizer")) {
        Normalizer n;
        std::string why;
        if (!v->is_string() || !parse_normalizer(v->as_string(), n, why)) {
            // A known name with a bad parameter ("ssmax:5000") gets the parser's reason; anything
            // else the list of names.
            const bool parameter = v->is_string() && v->as_string().find(':') != std::string::npos;
            std::string names;
            for (std::string_view name : kNormalizerNames) names.append(names.empty() ? "" : ", ").append(name);
            error = parameter ? "normalizer " + shown(*v) + ": " + why : bad("normalizer", "one of " + names, *v);
            return false;
        }
        s.normalizer = v->as_string();
    }
    if (!read_positive(obj, "eps", s.eps, error)) return false;
    if (const json::Value* v = obj.find("plan")) {
        std::string why;
        if (!v->is_string()) {
            error = bad("plan", "the attention plan as text, e.g. \"all=sparsemax\" (\"\" = as trained)", *v);
            return false;
        }
        if (!check_attention_spec(v->as_string(), why)) {
            error = "plan: " + why;
            return false;
        }
        s.plan = v->as_string();
    }
    if (const json::Value* v = obj.find("compare")) {
        if (!v->is_bool()) {
            error = bad("compare", "true or false (\"Compare with the twin\")", *v);
            return false;
        }
        s.compare = v->as_bool();
    }
    out = std::move(s);
    error.clear();
    return true;
}

}  // namespace attnlab
