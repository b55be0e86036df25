#pragma once
// Panel 7, Help: what each panel shows, in plain words, and where AttnLab departs from the paper
// (the facts of docs/science.md, sections 9 and 10).
#include "app/panel_context.h"

namespace attnlab {

struct HelpPanel {
    int placeholder = 0;  // no state: the text is fixed
};

void draw_help_panel(HelpPanel& panel, PanelContext& ctx);

}  // namespace attnlab
