#include "app/gradient_panel.h"

#include <imgui.h>

namespace attnlab {

void draw_gradient_panel(GradientPanel& panel, PanelContext& ctx) {
    (void)panel;
    (void)ctx;
    ImGui::TextDisabled("Not built yet.");
}

}  // namespace attnlab
