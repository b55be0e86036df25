#pragma once
// Panel 5, Temperature & gradients (Lemma 2).
#include "app/panel_context.h"

namespace attnlab {

struct GradientPanel {
    int placeholder = 0;
};

void draw_gradient_panel(GradientPanel& panel, PanelContext& ctx);

}  // namespace attnlab
