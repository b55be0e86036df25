#include "app/help_panel.h"

#include <imgui.h>

namespace attnlab {

void draw_help_panel(HelpPanel& panel, PanelContext& ctx) {
    (void)panel;
    (void)ctx;
    ImGui::TextDisabled("Not built yet.");
}

}  // namespace attnlab
