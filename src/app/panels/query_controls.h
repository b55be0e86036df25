#pragma once
// The parts that the analysis panels (Selection distance, Separability, Temperature & gradients)
// draw alike, so that they read and behave alike.
#include <imgui.h>

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

// In place of a summary plot while the all-heads summaries are not complete: a box titled
// `title` with the background progress (and `live_note`), or a way to start them again after a
// cancel.
void draw_summaries_pending(Session& s, const char* id, const char* title, const char* live_note, ImVec2 size);

}  // namespace attnlab
