#pragma once
// The parts that the panels following the view's chosen query (Selection distance and
// Separability) draw alike, so that they read and behave alike.
#include "app/panel_context.h"

namespace attnlab {

// Before the first forward pass: "`title` needs a model's attention" and what the panel will
// show (`about`). True when there is a pass, and nothing was drawn.
bool draw_needs_attention(const Session& s, const char* title, const char* about);

// The top-N slider over what the last query can select, as widget `widget`.
void draw_top_n_slider(Session& s, WidgetRects& widgets, const char* widget);

// Under a separator: why the panel shows nothing (false), or, when the chosen query sees too few
// tokens for the view's N, that N was lowered to `N_used` (true).
bool draw_why_or_lowered_n(const ChosenQueryView& v, int N_used, const Session& s);

}  // namespace attnlab
