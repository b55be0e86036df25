#pragma once
// The share state: everything a link restores. The page keeps it in the URL hash (compressed
// JSON, see web/share_state.js); window.attnlab.state() / setState() read and write it.
// Pure data and JSON, no ImGui: the tests link it alone.
#include <string>
#include <string_view>

namespace attnlab {

namespace json {
class Value;
}

enum class Panel { Text, Attention, Distance, Separability, Gradient, Playground, Help, Fading };

// "text", "attention", "distance", "separability", "gradient", "playground", "help".
const char* panel_name(Panel p);
bool parse_panel(std::string_view name, Panel& out);

struct ViewState {
    std::string text;       // the user's text (UTF-8)
    std::string model_url;  // where the model came from; "" when none or a local file
    Panel panel = Panel::Text;
    int layer = 0, head = 0;             // the chosen head
    int query = -1;                      // the chosen query position; -1 = the last token
    int N = 5;                           // top-N selection size
    double T = 1.0;                      // attention temperature of the chosen head
    std::string normalizer = "softmax";  // one of kNormalizerNames
    double eps = 1e-3;                   // Lemma 2's perturbation size
    // The model's attention plan as text (model/attention_plan.h), relative to the model's trained
    // plan: "" = the model as trained. Read before a model has loaded, so only its grammar is
    // checked here (check_attention_spec); the session parses it against the model.
    std::string plan;
    // "Compare with the twin" (the Attention map): the open head of the built-in model beside the
    // same head of its twin (AttnLab tiny and AttnLab tiny-SSMax), both run on the text.
    bool compare = false;

    bool operator==(const ViewState&) const = default;
};

// {"v":1,"text":...,"model":...,"panel":...,"layer":..,"head":..,"query":..,"N":..,"T":..,"normalizer":..,"eps":..,
//  "plan":...,"compare":true}. A link made before plans existed has no "plan": it keeps the view's (a fresh page: as
//  trained). A link without "compare" keeps the view's (a fresh page: off).
// With a base: only the keys whose value differs from base's (and "v").
std::string view_state_json(const ViewState& s, const ViewState* base = nullptr);

// Reads the object view_state_json writes. Missing keys keep their value in `out`; a key of
// the wrong type or out of range, or text that is not JSON, returns false with a message that
// names the key, and leaves `out` untouched. Unknown keys are ignored (newer links).
bool parse_view_state(std::string_view json_text, ViewState& out, std::string& error);
// The same, on an object already parsed (a tour step's "view").
bool read_view_state(const json::Value& obj, ViewState& out, std::string& error);

}  // namespace attnlab
