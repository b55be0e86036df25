#pragma once
// Panel 1, Text & tokens: the text box, the tokens as chips, the context counter, generation
// and sample texts.
#include "app/panel_context.h"

namespace attnlab {

struct TextPanel {
    int placeholder = 0;
};

void draw_text_panel(TextPanel& panel, PanelContext& ctx);

}  // namespace attnlab
