#pragma once
// Panel 4, Separability (Theorem 2).
#include "app/panel_context.h"

namespace attnlab {

struct SeparabilityPanel {
    int placeholder = 0;
};

void draw_separability_panel(SeparabilityPanel& panel, PanelContext& ctx);

}  // namespace attnlab
