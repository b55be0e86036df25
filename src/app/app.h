#pragma once
// The whole UI: one full-window host with a tab per panel. Panels own their state here.
#include "model/json.h"
#include "app/softmax_playground.h"
#include "app/widget_rects.h"

namespace attnlab {

struct AppState {
    SoftmaxPlayground playground;
    WidgetRects widgets;
    bool show_about = false;
};

void draw_app(AppState& app);

// The app's part of window.attnlab.status(): each panel's numbers and the widgets' places.
void add_app_status(const AppState& app, float pixel_ratio, json::ObjectBuilder& status);

}  // namespace attnlab
