#pragma once
// Panel 3, Selection distance (Theorem 1).
#include "app/panel_context.h"

namespace attnlab {

struct DistancePanel {
    int placeholder = 0;
};

void draw_distance_panel(DistancePanel& panel, PanelContext& ctx);

}  // namespace attnlab
