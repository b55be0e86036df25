#pragma once
// Choosing between models: the two shipped with AttnLab, AttnLab tiny (assets/tiny, the page's
// default) and its twin AttnLab tiny-SSMax (assets/tiny-ssmax: the same architecture, data, seed
// and steps, every head trained with SSMax; issue 29), what a share link names each by, and what
// the view keeps when the model changes. Pure data, no ImGui: the tests link it alone.
#include <string>
#include <string_view>

#include "app/view_state.h"
#include "model/attention_plan.h"

namespace attnlab {

enum class BuiltinModel { None, Tiny, TinySsmax };

// What a share link (view.model_url) names the twin by: its address relative to the page, which
// is also where the page fetches it from. AttnLab tiny is named by no model at all ("").
inline constexpr const char* kTwinLinkName = "assets/tiny-ssmax/model.safetensors";

// "AttnLab tiny", "AttnLab tiny-SSMax" (the model menu's entries); "" for None.
const char* builtin_model_label(BuiltinModel m);

// Models on Hugging Face the model menu offers, by repository id (what links and tours name them
// by), with the size of their weights (model.safetensors) for the menu.
struct HubModel {
    const char* id;
    double bytes;
};
inline constexpr HubModel kHubModels[] = {
    {"HuggingFaceTB/SmolLM2-135M", 269060552},
    {"Qwen/Qwen2.5-0.5B", 988097824},
    {"Qwen/Qwen3-0.6B", 1503300328},
    {"openai-community/gpt2", 548105171},
};

// A Hugging Face repository id, ORG/NAME (letters, digits, '-', '_', '.'; no scheme, one '/'),
// as web/model_files.js reads the model bar's field and ?model=.
bool is_hub_repo_id(std::string_view address);

// The twin of a built-in model (tiny <-> tiny-SSMax); None for None.
BuiltinModel other_twin(BuiltinModel m);

// What view.model_url names a loaded model by: kTwinLinkName for the twin, "" for AttnLab tiny
// and for a local file, else its web address (`source`, when it has a scheme) or its Hugging Face
// repository id.
std::string model_link_name(const std::string& source, BuiltinModel which);

// The built-in model a link's model names: TinySsmax for kTwinLinkName; None otherwise (a
// link's "" keeps the model loaded, so it does not name tiny either).
BuiltinModel linked_builtin(std::string_view model_url);

// Whether the view shows its head as `trained` runs it (normalizer and temperature): then, when
// another model comes, the view follows that model's trained setting for the head, so that the
// twin's heads show as SSMax, not as a softmax preview of its scores. A view that asks for
// something else (a what-if, a link's normalizer) keeps it. A plan of another shape: false.
bool view_follows_trained(const ViewState& view, const AttentionPlan& trained);

// The view's normalizer and temperature set to `trained`'s for the view's head (clamped into
// the plan's shape); unchanged when the plan is empty.
void follow_trained(ViewState& view, const AttentionPlan& trained);

}  // namespace attnlab
