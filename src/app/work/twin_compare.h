#pragma once
// "Compare with the twin" (issue 29): AttnLab tiny and AttnLab tiny-SSMax are trained alike but
// for the normalizer. While view.compare is on and the model is one of them, the other is fetched
// once (assets/tiny-ssmax from the site, or the model's own twin) and held beside it as
// Session::twin, and run on the same tokens under the same model changes (view.plan) as the
// model (Session::twin_forward). keep_twin_current
// moves that along once a frame, with the other keep_* steps.
#include <string>

#include "app/model_source.h"
#include "app/session.h"
#include "app/work/model_loading.h"

namespace attnlab {

// Where this build keeps the two built-in models (AppState::builtin_model, AppState::twin_model).
struct BuiltinLocations {
    std::string tiny, tiny_ssmax;
    const std::string& of(BuiltinModel m) const { return m == BuiltinModel::TinySsmax ? tiny_ssmax : tiny; }
};

// Why the comparison cannot be shown with the model loaded ("" = it can): only the two built-in
// twins have a twin.
std::string twin_unavailable_reason(const Session& s);

// Once a frame: with view.compare on, fetches the model's twin when it is not held (unless a load
// is in flight, or the last attempt failed: twin_error says why until compare is turned off),
// and runs it over the tokens when its pass is missing. Off, or with a model that has no twin:
// the twin's work stops and its error is forgotten (the twin itself is kept for the next time).
void keep_twin_current(ModelLoading& loading, Session& s, ModelSource* source, const BuiltinLocations& where);

// The twin's pass is over the model's tokens and under the view's model changes (read against
// the twin: Session::twin_plan).
bool twin_pass_current(const Session& s);

// What the comparison is doing, for the page and status(): "off", "unavailable", "loading",
// "computing", "ready", "failed".
const char* twin_phase(const Session& s);

}  // namespace attnlab
