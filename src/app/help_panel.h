#pragma once
// Panel 7, Help: what each panel shows and where AttnLab departs from the paper.
#include "app/panel_context.h"

namespace attnlab {

struct HelpPanel {
    int placeholder = 0;
};

void draw_help_panel(HelpPanel& panel, PanelContext& ctx);

}  // namespace attnlab
