#pragma once
// Where named widgets were drawn in the last frame, so that scripts and the browser test
// can aim at them (window.attnlab.status().widgets) the way a person would: by pointing.
#include <map>
#include <string>

namespace attnlab {

struct WidgetRect {
    float x = 0, y = 0, w = 0, h = 0;  // ImGui pixels (backing pixels on the web)
    int frame = -1;                    // ImGui's frame count when it was drawn
};

using WidgetRects = std::map<std::string, WidgetRect, std::less<>>;

// Records the rectangle of the item ImGui drew last under `name`.
void remember_last_item(WidgetRects& rects, const char* name);

// {"name": {"x":..,"y":..,"w":..,"h":..}, ...} in CSS pixels.
std::string widget_rects_json(const WidgetRects& rects, float pixel_ratio);

}  // namespace attnlab
