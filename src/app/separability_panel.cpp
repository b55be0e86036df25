#include "app/separability_panel.h"

#include <imgui.h>

namespace attnlab {

void draw_separability_panel(SeparabilityPanel& panel, PanelContext& ctx) {
    (void)panel;
    (void)ctx;
    ImGui::TextDisabled("Not built yet.");
}

}  // namespace attnlab
