#pragma once
// Panel 2, Attention map: the layer x head thumbnails, the open head's heatmap, one query's
// weights as bars, the normalizer and temperature controls, and "apply to the model".
#include "app/panel_context.h"

namespace attnlab {

struct AttentionPanel {
    int placeholder = 0;
};

void draw_attention_panel(AttentionPanel& panel, PanelContext& ctx);

}  // namespace attnlab
