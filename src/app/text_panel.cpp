#include "app/text_panel.h"

#include <imgui.h>

namespace attnlab {

void draw_text_panel(TextPanel& panel, PanelContext& ctx) {
    (void)panel;
    (void)ctx;
    ImGui::TextDisabled("Not built yet.");
}

}  // namespace attnlab
