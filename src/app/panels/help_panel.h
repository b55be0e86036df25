#pragma once
// Panel 7, Help: what each panel shows, in plain words, and where AttnLab departs from the paper
// (the facts of docs/science.md, sections 9 and 10).
#include <cstddef>

#include "app/panel_context.h"

namespace attnlab {

struct HelpPanel {
    size_t tour_steps = 0;  // the built-in tour's length, which the app sets (panels do not read tours)
};

void draw_help_panel(HelpPanel& panel, PanelContext& ctx);

}  // namespace attnlab
