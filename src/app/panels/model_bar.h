#pragma once
// The model bar above the panels: which model is loaded, loading one (URL, confirm the size,
// progress with MB and speed, cancel), the cached copy, a local file, and load errors.
#include <string>

#include "app/model_source.h"
#include "app/panel_context.h"
#include "app/work/model_loading.h"

namespace attnlab {

inline constexpr const char* kDefaultModelUrl = "https://huggingface.co/openai-community/gpt2/resolve/main/model.safetensors";
// The size of that file (its Content-Length), for the "Load GPT-2 small (523 MB)" button.
inline constexpr double kDefaultModelBytes = 548105171;

struct ModelBar {
    char url[2048] = "";                // the address (web) or path (desktop) field: the loaded model's, or the one asked for
    const void* shown_model = nullptr;  // the loaded model whose address the field last took
    std::string shown_request;          // the ModelLoading::requested_url last copied into the field
    bool unfolded = false;              // on a short screen: the model's shape and the address row shown
    // The built-in model chosen in the model menu this frame, for the app to load (it knows where
    // the built-in models are); None when none was.
    BuiltinModel chosen = BuiltinModel::None;
    // Or the Hugging Face model chosen there (a repository id, kHubModels); "" when none was.
    std::string chosen_hub;
};

// Draws the bar and takes its clicks (loading moves along in keep_model_loading). `source` may be
// null (no way to fetch models on this platform).
void draw_model_bar(ModelBar& bar, ModelLoading& loading, PanelContext& ctx, ModelSource* source);

// window.attnlab.status().model_bar: {"line": the loaded-model line as drawn before it is cut to
// the width ("Model: …", "Loading the model…", "No model loaded…"), "url": the address field}.
std::string model_bar_status_json(const ModelBar& bar, const Session& s, const ModelSource* source);

// window.attnlab.status().model_fetch:
// {"phase","url","total_bytes","done_bytes","bytes_per_second","cached","error","notice"}.
std::string model_fetch_status_json(const ModelSource* source);

}  // namespace attnlab
