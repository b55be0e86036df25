#include "app/model_bar.h"

#include <imgui.h>

namespace attnlab {

void draw_model_bar(ModelBar& panel, PanelContext& ctx, ModelSource* source) {
    (void)panel;
    (void)source;
    (void)ctx;
    ImGui::TextDisabled("Not built yet.");
}

}  // namespace attnlab
