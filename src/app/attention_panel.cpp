#include "app/attention_panel.h"

#include <imgui.h>

namespace attnlab {

void draw_attention_panel(AttentionPanel& panel, PanelContext& ctx) {
    (void)panel;
    (void)ctx;
    ImGui::TextDisabled("Not built yet.");
}

}  // namespace attnlab
