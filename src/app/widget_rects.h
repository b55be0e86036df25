#pragma once
// Where named widgets were drawn in the last frame, so that scripts and the browser test
// can aim at them (window.attnlab.status().widgets) the way a person would: by pointing.
// And where every window was and how much it held (status().windows), so that a test can tell
// a layout that cuts something off (content wider than its window, a window past the screen's
// edge) from one that scrolls.
#include <map>
#include <string>

struct ImVec2;

namespace attnlab {

struct WidgetRect {
    float x = 0, y = 0, w = 0, h = 0;  // ImGui pixels (backing pixels on the web)
    int frame = -1;                    // ImGui's frame count when it was drawn
    // The part of it that its windows show (they clip it; x1 <= x0 when none), and whether a
    // window around it scrolls vertically, so that the part they do not show can be scrolled to.
    float clip_x0 = 0, clip_y0 = 0, clip_x1 = 0, clip_y1 = 0;
    bool scrolls = false;
};

using WidgetRects = std::map<std::string, WidgetRect, std::less<>>;

// Records the rectangle of the item ImGui drew last under `name`.
void remember_last_item(WidgetRects& rects, const char* name);
// Records [min, max] (ImGui pixels), drawn in the current window, under `name`.
void remember_rect(WidgetRects& rects, const std::string& name, const ImVec2& min, const ImVec2& max);

// {"name": {"x":..,"y":..,"w":..,"h":.., "drawn": true when in the last frame, "visible":
// {"x","y","w","h"}, "scrolls": bool}, ...} in CSS pixels.
std::string widget_rects_json(const WidgetRects& rects, float pixel_ratio);

// The windows drawn in the last frame, in CSS pixels: [{"name", "x", "y", "w", "h", "child",
// "content_w", "content_h" (what it holds: the reach of its layout), "inner_w", "inner_h" (what
// it shows of that), "scrollable_y" (the reader can scroll it)}]; [] without an ImGui context.
std::string drawn_windows_json(float pixel_ratio);

}  // namespace attnlab
