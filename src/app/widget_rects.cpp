#include "app/widget_rects.h"

#include <imgui.h>

#include "base/json.h"

namespace attnlab {

void remember_last_item(WidgetRects& rects, const char* name) {
    const ImVec2 a = ImGui::GetItemRectMin(), b = ImGui::GetItemRectMax();
    rects[name] = {a.x, a.y, b.x - a.x, b.y - a.y, ImGui::GetFrameCount()};
}

std::string widget_rects_json(const WidgetRects& rects, float pixel_ratio) {
    json::ObjectBuilder all;
    for (const auto& [name, r] : rects) {
        json::ObjectBuilder o;
        o.add("x", r.x / pixel_ratio).add("y", r.y / pixel_ratio).add("w", r.w / pixel_ratio).add("h", r.h / pixel_ratio);
        all.add_raw(name, o.str());
    }
    return all.str();
}

}  // namespace attnlab
