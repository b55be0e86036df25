#pragma once
// Panes that sit side by side on a wide screen and stack on a narrow or short one (a phone, a
// tablet, a large UI scale), as imgui_demo.cpp lays out its responsive examples: from the room
// the panel has, in font sizes, never from the device's name. A desktop at 1280 x 800 and larger
// at 100% has the room, so its layout is the one it always was.
//
//   const Panes panes = begin_panes("##text_panes", 20.0f, 25.0f);
//   begin_pane(panes, "##text_main", -side_w, false);  ...  end_pane(panes);
//   beside(panes);
//   begin_pane(panes, "##text_side", 0, true);  ...  end_pane(panes);
//   end_panes(panes);
//
// Stacked, the panes follow each other at full width inside one child window that scrolls
// vertically (a swipe, the wheel or its scrollbar), each as tall as its content; a panel gives
// the plots in it a height from their width (stacked_plot_height).

#include <imgui.h>  // IM_FMTARGS

namespace attnlab {

// A phone, a tablet or a short window: the whole page scrolls, the model bar, the tabs and a
// panel's controls with it, so that a swipe up gives the content the screen (the header no longer
// holds two thirds of a phone). Decided by the app once a frame from the window's size in font
// sizes (page_scrolls_for), and set before the panels draw; begin_panes then stacks the panes in
// the page itself, without a scrolling child window of their own.
struct PageScroll {
    bool on = false;
    float view_h = 0.0f;  // the height the page shows at once, px
};
bool page_scrolls_for(float width, float height, float font);
void set_page_scroll(const PageScroll& page);
const PageScroll& page_scroll();

struct Panes {
    bool stacked = false;
    bool in_child = false;  // stacked in a scrolling child window of its own (not in the page)
    float view_h = 0.0f;    // the height of the panel's visible area, px
};

// Side by side when `side_em` + `main_em` font sizes fit across the panel and kMinPanelLines
// lines fit down it; else stacked, in a scrolling child window named `id` (in the page itself when
// the page scrolls).
Panes begin_panes(const char* id, float side_em, float main_em);
void end_panes(const Panes& panes);

// Side by side: a child window `width` px wide (BeginChild's meaning: 0 the rest of the row, a
// negative value the rest less that), filling the height. Stacked: the full width and as tall as
// its content, with `id` scoping the ids inside, and its lines of text wrapped at the edge.
void begin_pane(const Panes& panes, const char* id, float width, bool border);
void end_pane(const Panes& panes);

// Between two panes: on the same row when side by side.
void beside(const Panes& panes);

// A plot's height when stacked: `aspect` times its width, but no more than 90% of the visible
// area (so that one plot is seen whole without scrolling), and never under 6 lines.
float stacked_plot_height(const Panes& panes, float width, float aspect = 0.62f);

// Two plots side by side when each gets at least `min_em` font sizes of width, else one above
// the other: the width each gets, and whether the second goes beside the first.
struct PlotPair {
    bool side_by_side = true;
    float w = 0.0f;
};
PlotPair plot_pair(float avail_w, float min_em = 22.0f);

// ImGui::SameLine() when an item `width` px wide still fits on the current line; else the next
// item starts a new line (imgui_demo.cpp's "manual wrapping"). On a wide screen: SameLine().
void same_line_if_fits(float width);

// The width of an item with a frame `frame_w` px wide and `label` beside it (text after "##"
// is not shown), and of a button.
float labelled_width(float frame_w, const char* label);
float button_width(const char* label);

// ImGui::TextWrapped that breaks lines only at spaces and newlines, at the region's right edge:
// ImGui 1.86 also breaks after '.' and ',', which split "(1.00)" into "(1." and "00)" on a phone.
void text_wrapped(const char* fmt, ...) IM_FMTARGS(1);

}  // namespace attnlab
