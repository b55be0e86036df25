#pragma once
// The model bar above the panels: which model is loaded, loading one (URL, confirm the size,
// progress with MB and speed, cancel), the cached copy, a local file, and load errors.
#include <string>

#include "app/model_source.h"
#include "app/panel_context.h"

namespace attnlab {

inline constexpr const char* kDefaultModelUrl = "https://huggingface.co/openai-community/gpt2/resolve/main/model.safetensors";
// The size of that file (its Content-Length), for the "Load GPT-2 small (523 MB)" button.
inline constexpr double kDefaultModelBytes = 548105171;

struct ModelBar {
    char url[2048] = "";      // the address (web) or path (desktop) field; filled on the first frame
    bool url_filled = false;
    std::string reported_failure;   // url + error of the failure already copied into the session
    std::string shown_notice;       // the source's last notice, already shown
    std::string reported_message;   // the banner text of the last failure (cleared on the next attempt)
    std::string builtin_source;     // the name the built-in model's bytes arrive under ("" = not asked for)
};

// `source` may be null (no way to fetch models on this platform).
void draw_model_bar(ModelBar& panel, PanelContext& ctx, ModelSource* source);

// Loads `url` without asking for confirmation: for addresses the reader chose deliberately (the
// page's ?model= parameter, a shared link's hash). Sets view.model_url; a cached copy is used
// when there is one. Progress and errors then show in the bar as for any load.
void start_model_download(ModelBar& panel, Session& s, ModelSource& source, const std::string& url);

// Loads the model shipped with AttnLab (assets/tiny: a path on the desktop, the site's own
// relative address on the web) without asking: the page's and the window's start-up default.
// Leaves view.model_url alone, so share links made with it name no model ("the default one").
void start_builtin_model(ModelBar& panel, Session& s, ModelSource& source, const std::string& location);

// Makes `model` the session's model: drops the work and results of the previous one.
void install_model(Session& s, std::shared_ptr<const LoadedModel> model);

// window.attnlab.status().model_fetch:
// {"phase","url","total_bytes","done_bytes","bytes_per_second","cached","error","notice"}.
std::string model_fetch_status_json(const ModelSource* source);

}  // namespace attnlab
