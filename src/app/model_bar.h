#pragma once
// The model bar above the panels: which model is loaded, loading one (URL, confirm the size,
// progress with MB and speed, cancel), the cached copy, a local file, and load errors.
#include "app/model_source.h"
#include "app/panel_context.h"

namespace attnlab {

struct ModelBar {
    int placeholder = 0;
};

// `source` may be null (no way to fetch models on this platform).
void draw_model_bar(ModelBar& panel, PanelContext& ctx, ModelSource* source);

}  // namespace attnlab
