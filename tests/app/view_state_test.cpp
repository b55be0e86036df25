// The share state's JSON: what a link carries must come back exactly, and anything else must
// be refused with a message naming the key, leaving the view as it was.
#include <catch2/catch.hpp>

#include <string>

#include "app/view_state.h"

using namespace attnlab;

namespace {
ViewState sample() {
    ViewState s;
    s.text = "Line one\n\"quoted\" \\ tab\t and \xC3\xA9\xE2\x82\xAC emoji \xF0\x9F\x98\x80";
    s.model_url = "https://example.org/m/model.safetensors?x=1&y=2";
    s.panel = Panel::Separability;
    s.layer = 7;
    s.head = 11;
    s.query = 42;
    s.N = 9;
    s.T = 0.1 + 0.2;  // not a short decimal: the round trip must keep every bit
    s.normalizer = "entmax-1.5";
    s.eps = 1e-7;
    s.plan = "all=sparsemax,1.*=ssmax:0.43@2,0.3=entmax:1.25";
    return s;
}

void require_same(const ViewState& a, const ViewState& b) {
    CHECK(a.text == b.text);
    CHECK(a.model_url == b.model_url);
    CHECK(a.panel == b.panel);
    CHECK(a.layer == b.layer);
    CHECK(a.head == b.head);
    CHECK(a.query == b.query);
    CHECK(a.N == b.N);
    CHECK(a.T == b.T);
    CHECK(a.normalizer == b.normalizer);
    CHECK(a.eps == b.eps);
    CHECK(a.plan == b.plan);
}

// Parses `json` into a copy of sample(); expects failure with `fragment` in the message and
// the state untouched.
void require_refused(const std::string& json, const std::string& fragment) {
    ViewState s = sample();
    std::string error;
    INFO(json);
    CHECK_FALSE(parse_view_state(json, s, error));
    INFO(error);
    CHECK(error.find(fragment) != std::string::npos);
    require_same(s, sample());
}
}  // namespace

TEST_CASE("view state: JSON round trip keeps every field exactly", "[view_state]") {
    const ViewState in = sample();
    const std::string json = view_state_json(in);
    ViewState out;  // defaults, all different from sample()
    std::string error = "stale";
    REQUIRE(parse_view_state(json, out, error));
    CHECK(error.empty());
    require_same(out, in);
    // And the writer's keys are the documented ones (a hand-written link must keep working).
    for (const char* key :
         {"\"v\":1", "\"text\":", "\"model\":", "\"panel\":\"separability\"", "\"layer\":7", "\"head\":11", "\"query\":42", "\"N\":9",
          "\"T\":", "\"normalizer\":\"entmax-1.5\"", "\"eps\":", "\"plan\":\"all=sparsemax,1.*=ssmax:0.43@2,0.3=entmax:1.25\""})
        CHECK(json.find(key) != std::string::npos);
}

TEST_CASE("view state: every panel name round-trips", "[view_state]") {
    for (Panel p : {Panel::Text, Panel::Attention, Panel::Distance, Panel::Separability, Panel::Gradient, Panel::Playground, Panel::Help}) {
        Panel back = p == Panel::Help ? Panel::Text : Panel::Help;
        REQUIRE(parse_panel(panel_name(p), back));
        CHECK(back == p);
    }
    Panel p = Panel::Gradient;
    CHECK_FALSE(parse_panel("Attention", p));  // names are lower case
    CHECK(p == Panel::Gradient);
}

TEST_CASE("view state: a hand-written object, missing keys keep their values", "[view_state]") {
    ViewState s = sample();
    std::string error;
    REQUIRE(parse_view_state(R"({"layer": 3, "T": 2.5, "panel": "attention"})", s, error));
    CHECK(s.layer == 3);
    CHECK(s.T == 2.5);
    CHECK(s.panel == Panel::Attention);
    CHECK(s.head == 11);
    CHECK(s.text == sample().text);

    ViewState empty = sample();
    REQUIRE(parse_view_state("{}", empty, error));
    require_same(empty, sample());

    ViewState defaults;
    REQUIRE(parse_view_state(" { } ", defaults, error));
    require_same(defaults, ViewState{});
}

TEST_CASE("view state: unknown keys are ignored (links from newer versions)", "[view_state]") {
    ViewState s;
    std::string error;
    REQUIRE(parse_view_state(R"({"head": 2, "colour": "red", "future": {"a": [1, 2]}})", s, error));
    CHECK(s.head == 2);
}

TEST_CASE("view state: each bad key is refused by name", "[view_state]") {
    require_refused(R"({"T": -1})", "T must be a number > 0");
    require_refused(R"({"T": -1})", "got -1");
    require_refused(R"({"T": 0})", "T must be");
    require_refused(R"({"T": "1"})", "T must be");
    require_refused(R"({"T": 1e400})", "1e400 is out of range");  // the JSON reader refuses overflow
    require_refused(R"({"T": 1e300})", "T must be");              // finite but absurd
    require_refused(R"({"eps": 0})", "eps must be");
    require_refused(R"({"eps": null})", "eps must be");
    require_refused(R"({"layer": -1})", "layer must be a whole number >= 0, got -1");
    require_refused(R"({"layer": 1.5})", "layer must be");
    require_refused(R"({"layer": 99999999999999999999})", "layer must be");
    require_refused(R"({"head": "3"})", "head must be");
    require_refused(R"({"head": 1e3})", "head must be");  // exponent form is not a whole-number literal
    require_refused(R"({"query": -2})", "query must be");
    require_refused(R"({"N": 0})", "N must be a whole number >= 1");
    require_refused(R"({"N": true})", "N must be");
    require_refused(R"({"panel": "nowhere"})", "panel must be one of");
    require_refused(R"({"panel": 3})", "panel must be");
    require_refused(R"({"normalizer": "softermax"})", "normalizer must be one of softmax");
    // A known normalizer with a bad parameter: the parser's reason, not a list that names it.
    require_refused(R"({"normalizer": "ssmax:5000"})", "ssmax's scale s must be a number from -1000 to 1000, not '5000'");
    require_refused(R"({"normalizer": "entmax:0.5"})", "entmax's alpha must be a number from 1 to");
    require_refused(R"({"text": 5})", "text must be a string");
    require_refused(R"j({"model": "javascript:alert(1)"})j", "model must be");
    require_refused(R"({"model": "a\nb"})", "model must be");
    require_refused(R"({"model": ["x"]})", "model must be");
    require_refused(R"({"v": 2})", "v must be 1");
    // One bad key among good ones: nothing is applied.
    require_refused(R"({"layer": 1, "head": 2, "N": -5})", "N must be");
}

TEST_CASE("view state: huge values are refused, not wrapped", "[view_state]") {
    require_refused(R"({"layer": 2147483648})", "layer must be");
    require_refused(R"({"N": 4294967297})", "N must be");
    require_refused(R"({"text": ")" + std::string((1 << 20) + 1, 'a') + "\"}", "text must be a string of at most 1 MiB");
    require_refused(R"({"model": "https://x/)" + std::string(3000, 'a') + "\"}", "model must be");
    // A long text within the limit is fine.
    ViewState s;
    std::string error;
    const std::string text(100000, 'z');
    REQUIRE(parse_view_state(R"({"text": ")" + text + "\"}", s, error));
    CHECK(s.text == text);
}

TEST_CASE("view state: not JSON, not an object", "[view_state]") {
    require_refused("", "not JSON");
    require_refused("{\"layer\": 1", "not JSON");
    require_refused("s=abc", "not JSON");
    require_refused("{\"a\":1} trailing", "not JSON");
    require_refused("[1, 2]", "must be a JSON object, got an array");
    require_refused("\"text\"", "must be a JSON object, got a string");
    require_refused("null", "must be a JSON object");
    require_refused(std::string(5000, '[') + std::string(5000, ']'), "not JSON");  // depth limit, no stack overflow
}

TEST_CASE("view state: the attention plan travels in a link", "[view_state]") {
    // A link made before plans existed has no "plan": the model as trained, and a plan already
    // in the view is kept (missing keys keep their value).
    ViewState old;
    std::string error;
    REQUIRE(parse_view_state(R"({"v":1,"text":"hi","panel":"attention","layer":1,"head":2,"T":1,"normalizer":"softmax"})", old, error));
    CHECK(old.plan.empty());
    CHECK(old.text == "hi");
    CHECK(old.layer == 1);

    // The model as trained says so: a tour step or link that goes back to it must undo a plan.
    ViewState trained;
    CHECK(view_state_json(trained).find(R"("plan":"")") != std::string::npos);
    ViewState undone;
    undone.plan = "all=sparsemax";
    REQUIRE(parse_view_state(view_state_json(trained), undone, error));
    CHECK(undone.plan.empty());

    // A plan round-trips, and "" comes back as "" over a changed view.
    ViewState changed;
    changed.plan = "2.5=sparsemax@0.5";
    const std::string json = view_state_json(changed);
    CHECK(json.find(R"("plan":"2.5=sparsemax@0.5")") != std::string::npos);
    ViewState back;
    REQUIRE(parse_view_state(json, back, error));
    CHECK(back.plan == "2.5=sparsemax@0.5");
    REQUIRE(parse_view_state(R"({"plan":""})", back, error));
    CHECK(back.plan.empty());

    // Relative to a base (tour steps): only a changed plan is written, and "" is written when
    // the step goes back to the model as trained.
    CHECK(view_state_json(changed, &changed).find("plan") == std::string::npos);
    CHECK(view_state_json(trained, &changed).find(R"("plan":"")") != std::string::npos);
}

TEST_CASE("view state: a bad plan is refused with what is wrong", "[view_state]") {
    require_refused(R"({"plan": 3})", "plan must be the attention plan as text");
    require_refused(R"({"plan": "all=softermax"})", "plan: item 1");
    require_refused(R"({"plan": "all=softermax"})", "softermax");
    require_refused(R"({"plan": "all"})", "no '='");
    require_refused(R"({"plan": "x.1=sparsemax"})", "names no heads");
    require_refused(R"({"plan": "0.1=sparsemax@-1"})", "temperature");
    require_refused(R"({"plan": "all=sparsemax,"})", "item 2 is empty");
    require_refused(R"({"plan": "all=entmax:0.5"})", "plan: item 1");
    // One bad key among good ones: nothing is applied.
    require_refused(R"({"layer": 1, "plan": "all=ssmax:nan"})", "plan: item 1");
}

TEST_CASE("\"compare\" (the twin beside the model) comes back, off included, and must be a boolean", "[app][view_state]") {
    ViewState on;
    on.compare = true;
    ViewState back;
    std::string error;
    REQUIRE(parse_view_state(view_state_json(on), back, error));
    CHECK(back.compare);
    CHECK(view_state_json(on).find("\"compare\":true") != std::string::npos);
    // Off is written too, so that a tour step going back to a view without the twin says so; with
    // a base, only when it differs.
    CHECK(view_state_json(ViewState()).find("\"compare\":false") != std::string::npos);
    CHECK(view_state_json(ViewState(), &on).find("\"compare\":false") != std::string::npos);
    CHECK(view_state_json(on, &on).find("compare") == std::string::npos);
    ViewState off = on;
    REQUIRE(parse_view_state(R"({"v":1,"compare":false})", off, error));
    CHECK_FALSE(off.compare);
    // A link without the key keeps the view's.
    ViewState kept = on;
    REQUIRE(parse_view_state(R"({"v":1,"N":3})", kept, error));
    CHECK(kept.compare);
    ViewState untouched = on;
    CHECK_FALSE(parse_view_state(R"({"v":1,"compare":1})", untouched, error));
    CHECK(error.find("compare") != std::string::npos);
    CHECK(untouched.compare);
}
