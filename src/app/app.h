#pragma once
// The whole UI: one full-window host with a tab per panel. Panels own their state here.
#include "app/softmax_playground.h"

namespace attnlab {

struct AppState {
    SoftmaxPlayground playground;
    bool show_about = false;
};

void draw_app(AppState& app);

}  // namespace attnlab
