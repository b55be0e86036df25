// Tours as data: what a link or a file carries must come back exactly, anything malformed must
// be refused with a message naming the step and the key, and captions fill in live values.
#include <catch2/catch.hpp>

#include <string>

#include "app/tour/tour.h"
#include "base/json.h"

using namespace attnlab;

namespace {
ViewState view(const char* text, Panel panel, int layer, int head, double T) {
    ViewState v;
    v.text = text;
    v.panel = panel;
    v.layer = layer;
    v.head = head;
    v.T = T;
    return v;
}

Tour sample() {
    Tour t;
    t.title = "A \"quoted\" tour \xC3\xA9";
    t.scale = 1.75;
    t.steps.resize(3);
    t.steps[0] = {"First", "Look at {attention.max_weight}.", "attention.heatmap", true,
                  view("In the beginning", Panel::Attention, 0, 2, 1.0)};
    t.steps[1] = {"Second", "Braces {{ like this }}.", "", false, view("In the beginning", Panel::Gradient, 0, 2, 0.1 + 0.2)};
    t.steps[2] = {"Third", "", "gradient.T", false, view("Another text", Panel::Distance, 3, 1, 0.05)};
    t.steps[2].view.model_url = "https://example.org/gpt2/model.safetensors";
    t.steps[2].view.normalizer = "sparsemax";
    t.steps[2].view.N = 17;
    return t;
}

void require_same(const Tour& a, const Tour& b) {
    REQUIRE(a.steps.size() == b.steps.size());
    CHECK(a.title == b.title);
    CHECK(a.scale == b.scale);
    for (size_t i = 0; i < a.steps.size(); ++i) {
        const TourStep& x = a.steps[i];
        const TourStep& y = b.steps[i];
        CHECK(x.title == y.title);
        CHECK(x.caption == y.caption);
        CHECK(x.highlight == y.highlight);
        CHECK(x.strongest_head == y.strongest_head);
        CHECK(view_state_json(x.view) == view_state_json(y.view));
    }
}

size_t count(const std::string& haystack, const std::string& needle) {
    size_t n = 0;
    for (size_t at = haystack.find(needle); at != std::string::npos; at = haystack.find(needle, at + 1)) ++n;
    return n;
}

// Parses `json` into a copy of sample(); expects failure with `fragment` in the message and
// the tour untouched.
void require_refused(const std::string& json, const std::string& fragment) {
    Tour t = sample();
    std::string error;
    INFO(json);
    CHECK_FALSE(parse_tour(json, ViewState(), t, error));
    INFO(error);
    CHECK(error.find(fragment) != std::string::npos);
    require_same(t, sample());
}

const std::string kStep = R"({"title":"t","caption":"c","view":{"panel":"text"}})";
std::string tour_with(const std::string& steps, const std::string& extra = "") {
    return R"({"v":1,"kind":"attnlab-tour","title":"x",)" + extra + R"("steps":[)" + steps + "]}";
}
}  // namespace

TEST_CASE("tour: JSON round trip keeps every field, whole and compact", "[tour]") {
    const Tour t = sample();
    for (const bool compact : {false, true}) {
        Tour back;
        std::string error;
        REQUIRE(parse_tour(tour_json(t, compact), view("base", Panel::Help, 9, 9, 9.0), back, error));
        CHECK(error.empty());
        require_same(back, t);
    }
    // Compact: a step's view holds only what changed, so the shared text is written once.
    const std::string compact = tour_json(t, true), whole = tour_json(t, false);
    CHECK(count(compact, "In the beginning") == 1);
    CHECK(count(whole, "In the beginning") == 2);
    CHECK(compact.size() < whole.size());
}

TEST_CASE("tour: a view's missing keys come from the step before, the first step's from the base", "[tour]") {
    const std::string json = tour_with(R"({"title":"a","caption":"","view":{"panel":"attention","head":3}},
                                          {"title":"b","caption":"","view":{"T":0.5}})");
    Tour t;
    std::string error;
    REQUIRE(parse_tour(json, view("the reader's text", Panel::Text, 1, 0, 2.0), t, error));
    REQUIRE(t.steps.size() == 2);
    CHECK(t.steps[0].view.text == "the reader's text");
    CHECK(t.steps[0].view.panel == Panel::Attention);
    CHECK(t.steps[0].view.layer == 1);
    CHECK(t.steps[0].view.head == 3);
    CHECK(t.steps[0].view.T == 2.0);
    CHECK(t.steps[1].view.panel == Panel::Attention);
    CHECK(t.steps[1].view.head == 3);
    CHECK(t.steps[1].view.T == 0.5);
    CHECK(t.scale == 0);  // no scale: the reader's stays
    CHECK_FALSE(t.steps[0].strongest_head);
}

TEST_CASE("tour: view_state_json with a base writes only what differs", "[tour][view_state]") {
    const ViewState a = view("same text", Panel::Attention, 1, 2, 1.0);
    ViewState b = a;
    b.head = 3;
    CHECK(view_state_json(b, &a) == R"({"v":1,"head":3})");
    CHECK(view_state_json(a, &a) == R"({"v":1})");
}

TEST_CASE("tour: malformed tours are refused by name and leave the tour untouched", "[tour]") {
    require_refused("", "not JSON");
    require_refused("[1,2]", "a JSON object");
    require_refused(R"({"v":1,"steps":[]})", "kind must be \"attnlab-tour\"");
    require_refused(R"({"v":1,"kind":"something-else","steps":[)" + kStep + "]}", "not an AttnLab tour");
    require_refused(R"({"v":2,"kind":"attnlab-tour","steps":[)" + kStep + "]}", "v must be 1");
    require_refused(R"({"kind":"attnlab-tour","steps":[)" + kStep + "]}", "v must be 1");
    require_refused(tour_with(""), "steps must be a list of 1 to 64 steps");
    std::string many;
    for (int i = 0; i < 65; ++i) many += (i ? "," : "") + kStep;
    require_refused(tour_with(many), "steps must be a list of 1 to 64 steps");
    require_refused(tour_with(kStep, R"("colour":"red",)"), "the tour: unknown key \"colour\"");
    require_refused(tour_with(kStep, R"("scale":3,)"), "scale must be a number from 1 to 2.5");
    require_refused(tour_with(kStep, R"("scale":"big",)"), "scale must be a number");
    require_refused(tour_with(kStep + R"(,{"title":"t","view":{},"note":1})"), "step 2: unknown key \"note\"");
    require_refused(tour_with(R"({"title":5,"view":{}})"), "step 1: title must be a string");
    require_refused(tour_with(R"({"title":")" + std::string(201, 'x') + R"(","view":{}})"), "at most 200 bytes");
    require_refused(tour_with(R"({"caption":"see {distance.N_star","view":{}})"), "step 1: caption: the '{' at byte 4");
    require_refused(tour_with(R"({"caption":"see {}","view":{}})"), "does not start a placeholder");
    require_refused(tour_with(R"({"caption":"x {a..b} y","view":{}})"), "does not start a placeholder");
    require_refused(tour_with(R"({"caption":"x {a:0} y","view":{}})"), "does not start a placeholder");
    require_refused(tour_with(R"({"caption":"a } b","view":{}})"), "the '}' at byte 2 closes no placeholder");
    require_refused(tour_with(R"({"highlight":"two words","view":{}})"), "highlight must be a widget name");
    require_refused(tour_with(R"({"strongest_head":"yes","view":{}})"), "strongest_head must be true or false");
    require_refused(tour_with(R"({"title":"no view"})"), "step 1: view must be an object");
    require_refused(tour_with(kStep + R"(,{"view":{"layer":-1}})"), "step 2's view: layer must be a whole number >= 0");
    require_refused(tour_with(R"({"view":{"panel":"kitchen"}})"), "step 1's view: panel must be one of");
}

TEST_CASE("tour: captions fill in values from the status, formatted", "[tour]") {
    const auto status = json::parse(R"({"a":{"b":0.123456,"n":7,"s":"text","t":true,"z":null,"arr":[1.5,2e-7],"big":12345.5}})");
    REQUIRE(status.value);
    const json::Value& st = *status.value;
    CHECK(expand_caption("w = {a.b}", st) == "w = 0.123");
    CHECK(expand_caption("w = {a.b:5}", st) == "w = 0.12346");
    CHECK(expand_caption("{a.n} heads", st) == "7 heads");
    CHECK(expand_caption("{a.s}/{a.t}", st) == "text/yes");
    CHECK(expand_caption("{a.arr.0} {a.arr.1}", st) == "1.5 2e-07");
    CHECK(expand_caption("{a.big}", st) == "12346");  // past the digits asked for: no exponent
    // Not computed yet, or not there at all: an ellipsis, never a made-up number.
    CHECK(expand_caption("[{a.z}] [{a.missing}] [{a.arr.7}] [{a.b.c}]", st) ==
          "[\xE2\x80\xA6] [\xE2\x80\xA6] [\xE2\x80\xA6] [\xE2\x80\xA6]");
    CHECK(expand_caption("min{{1/(4T), sqrt 2}}", st) == "min{1/(4T), sqrt 2}");
    CHECK(expand_caption("no placeholders", st) == "no placeholders");
    CHECK(check_caption("fine {a.b:2} and {{braces}}") == "");
}

TEST_CASE("tour: the built-in tour reads, in the paper's order, with live numbers only", "[tour]") {
    Tour t;
    std::string error;
    REQUIRE(parse_tour(builtin_tour_json(), ViewState(), t, error));
    CHECK(t.title == "What softmax can and cannot select");
    REQUIRE(t.steps.size() >= 6);
    REQUIRE(t.steps.size() <= 10);
    // Lemma 1, Theorem 1, the critical N, Theorem 2, Lemma 2, the normalizers, after a selecting
    // head; then a normalizer inside the model, and the model trained with SSMax beside its twin.
    const Panel order[] = {Panel::Attention, Panel::Playground, Panel::Distance,   Panel::Distance,  Panel::Separability,
                           Panel::Gradient,  Panel::Gradient,   Panel::Playground, Panel::Attention, Panel::Attention};
    REQUIRE(t.steps.size() == std::size(order));
    for (size_t i = 0; i < t.steps.size(); ++i) {
        INFO("step " << i + 1);
        CHECK(t.steps[i].view.panel == order[i]);
        // Plays on the reader's text, but for the last (its own text: the retrieval it measures
        // needs a token that occurred once, far back).
        if (i + 1 < t.steps.size()) CHECK(t.steps[i].view.text.empty());
        CHECK(t.steps[i].view.model_url.empty());  // and model
        CHECK(t.steps[i].caption.find("Try:") != std::string::npos);
        // The caption's figures are read live.
        CHECK(t.steps[i].caption.find('{') != std::string::npos);
    }
    CHECK(t.steps[0].strongest_head);
    CHECK(t.steps[6].view.T < 0.1);
    // Every step but the ninth runs the model as trained; the ninth swaps every head to
    // sparsemax, and its caption compares the next token and the perplexity before and after.
    const TourStep& swap = t.steps[8];
    for (size_t i = 0; i < t.steps.size(); ++i)
        if (i != 8) CHECK(t.steps[i].view.plan.empty());
    CHECK(swap.view.plan == "all=sparsemax");
    for (const char* key : {"{attention.baseline_top10.0.token}", "{attention.top10.0.token}",
                            "{model_changes.perplexity_before.perplexity}", "{model_changes.perplexity_after.perplexity}"})
        CHECK(swap.caption.find(key) != std::string::npos);
    // The last: the model trained with SSMax beside its twin, the only step that compares, on a text
    // whose last token ("Gen") occurred once, at its start (docs/science.md §14's needle probe),
    // with each model's retrieval in layers 1 and 2 read live.
    const TourStep& remedy = t.steps.back();
    CHECK(remedy.title == "The remedy: a model trained with SSMax");
    for (size_t i = 0; i + 1 < t.steps.size(); ++i) CHECK_FALSE(t.steps[i].view.compare);
    CHECK(remedy.view.compare);
    CHECK(remedy.view.text.starts_with("Genesis 8\n"));
    CHECK(remedy.view.text.ends_with("\nGen"));
    CHECK(remedy.view.text.find("Gen", 1) == remedy.view.text.size() - 3);  // no other "Gen" between
    for (const char* key :
         {"{twin.retrieval.layers.1.model.weight}", "{twin.retrieval.layers.1.twin.weight}", "{twin.retrieval.layers.2.model.weight}",
          "{twin.retrieval.layers.2.twin.weight}", "{twin.last.uniform}", "{twin.twin.label}"})
        CHECK(remedy.caption.find(key) != std::string::npos);
}
