#pragma once
// The parts that the analysis panels (Selection distance, Separability, Temperature & gradients)
// draw alike, so that they read and behave alike.
#include <imgui.h>

#include "app/panel_context.h"
#include "app/panels/pane_layout.h"

namespace attnlab {

// Before the first forward pass: "`title` needs a model's attention" and what the panel will
// show (`about`). True when there is a pass, and nothing was drawn.
bool draw_needs_attention(const Session& s, const char* title, const char* about);

// The top-N slider over what the last query can select, as widget `widget`.
void draw_top_n_slider(Session& s, WidgetRects& widgets, const char* widget);

// What a panel that follows the chosen query and its top-N selection (Selection distance,
// Separability) shows: the key, and the N it used (the view's, lowered to what the query can select).
struct TopNQueryView : ChosenQueryView {
    int N_used = 0;
};

// The start of such a panel's update(): false when its numbers are still those of the view's
// query, or when there are none to compute (`v` then says why; `query_zero` is the reason for
// query 0, which sees only itself). Otherwise takes the new key, clears ready, sets N_used and
// hands over the query's slice. The view's eps is the gradient panel's: it is not part of the key.
bool begin_top_n_update(const Session& s, TopNQueryView& v, const char* query_zero, QuerySlice& slice);

// The width of such a panel's controls column, in font sizes.
inline constexpr float kControlsEm = 21.0f;

// The panel's controls column (`id`, the first of `panes`): `theorem`, the chosen head and query,
// and the top-N slider (widget `n_widget`). The caller draws its own controls, then
// end_top_n_controls().
void begin_top_n_controls(const Panes& panes, Session& s, WidgetRects& widgets, const TopNQueryView& v, const char* id, const char* theorem,
                          const char* n_widget);
// Closes the column with `note` (how the numbers were made) in grey; the plots go beside it (or
// below it, stacked).
void end_top_n_controls(const Panes& panes, const char* note);

// Under a separator: why the panel shows nothing (false), or, when the chosen query sees too few
// tokens for the view's N, that N was lowered to N_used (true).
bool draw_why_or_lowered_n(const TopNQueryView& v, const Session& s);

// In place of a summary plot while the all-heads summaries are not complete: a box titled
// `title` with the background progress (and `live_note`), or a way to start them again after a
// cancel.
void draw_summaries_pending(Session& s, const char* id, const char* title, const char* live_note, ImVec2 size);

}  // namespace attnlab
