#pragma once
// Loading a model: the steps between a request (a click in the model bar, a link, the built-in
// model) and an installed model, and the failures and notices they leave for the reader. The
// model bar only draws and asks; keep_model_loading() moves the load along once a frame, with the
// other keep_* steps, between frames.
#include <memory>
#include <string>

#include "app/model_source.h"
#include "app/session.h"

namespace attnlab {

struct ModelLoading {
    std::string reported_failure;  // url + error of the failure already copied into the session
    std::string shown_notice;      // the source's last notice, already shown
    std::string reported_message;  // the banner text of the last failure (cleared on the next attempt)
    std::string builtin_source;    // the name the built-in model's bytes arrive under ("" = not asked for)
    std::string twin_source;       // and its SSMax twin's (assets/tiny-ssmax)
    // The bytes on their way for "Compare with the twin": they go to Session::twin, not the model.
    std::string compare_source;  // the name they arrive under ("" = none asked for)
    BuiltinModel compare_which = BuiltinModel::None;
    std::string requested_url;  // the address the last start_model_download() asked for, for the bar's field
};

// Once a frame: skips the question for a cached copy, retires the last error when a new attempt
// starts, installs a model whose bytes are in (or reports why not), reports a failure or a notice
// once, and keeps view.model_url naming the model shown. `source` may be null.
void keep_model_loading(ModelLoading& loading, Session& s, ModelSource* source);

// Asks for the size of `url` first: the model bar then asks the reader to confirm.
void begin_load(ModelLoading& loading, Session& s, ModelSource& source, const std::string& url);

// Loads `url` without asking for confirmation: for addresses the reader chose deliberately (the
// page's ?model= parameter, a shared link's hash). Sets view.model_url; a cached copy is used
// when there is one. Progress and errors then show in the bar as for any load.
void start_model_download(ModelLoading& loading, Session& s, ModelSource& source, const std::string& url);

// Loads a model shipped with AttnLab (assets/tiny or assets/tiny-ssmax: a path on the desktop,
// the site's own relative address on the web) without asking. AttnLab tiny is the page's and the
// window's start-up default: view.model_url is left alone, so share links made with it name no
// model ("the default one"); the twin sets view.model_url to kTwinLinkName, which links name it by.
void start_builtin_model(ModelLoading& loading, Session& s, ModelSource& source, const std::string& location,
                         BuiltinModel which = BuiltinModel::Tiny);

// Fetches a built-in model (at `location`, as start_builtin_model) to be held beside the model as
// Session::twin for "Compare with the twin": the view, the model and its link stay as they are.
// A failure is reported as for any load, and in Session::twin_error.
void start_twin_download(ModelLoading& loading, ModelSource& source, const std::string& location, BuiltinModel which);

// A new attempt (a file picked, say): the last attempt's error no longer applies.
void forget_failure(ModelLoading& loading, Session& s);

// Makes `model` the session's model: drops the work and results of the previous one. A view that
// showed its head as the old model was trained follows the new one's trained setting (model_choice.h).
void install_model(Session& s, std::shared_ptr<const LoadedModel> model);

// The model menu's choice when it is held already as the comparison's twin (Session::twin): the
// two change places, with no download. False when the twin is not `which`.
bool swap_with_twin(Session& s, BuiltinModel which);

}  // namespace attnlab
