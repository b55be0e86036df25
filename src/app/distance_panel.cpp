#include "app/distance_panel.h"

#include <imgui.h>

namespace attnlab {

void draw_distance_panel(DistancePanel& panel, PanelContext& ctx) {
    (void)panel;
    (void)ctx;
    ImGui::TextDisabled("Not built yet.");
}

}  // namespace attnlab
