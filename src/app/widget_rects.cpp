#include "app/widget_rects.h"

#include <imgui.h>
#include <imgui_internal.h>  // the current window's clip rectangle and scroll range

#include <algorithm>

#include "base/json.h"

namespace attnlab {

void remember_rect(WidgetRects& rects, const std::string& name, const ImVec2& a, const ImVec2& b) {
    WidgetRect r{a.x, a.y, b.x - a.x, b.y - a.y, ImGui::GetFrameCount()};
    const ImGuiWindow* window = ImGui::GetCurrentWindowRead();
    const ImRect clip = window->ClipRect;  // already within every window around it
    r.clip_x0 = std::max(a.x, clip.Min.x);
    r.clip_y0 = std::max(a.y, clip.Min.y);
    r.clip_x1 = std::min(b.x, clip.Max.x);
    r.clip_y1 = std::min(b.y, clip.Max.y);
    for (const ImGuiWindow* w = window; w; w = w->ParentWindow) {
        r.scrolls |= w->ScrollMax.y > 0.0f;
        if (!(w->Flags & ImGuiWindowFlags_ChildWindow)) break;
    }
    rects[name] = r;
}

void remember_last_item(WidgetRects& rects, const char* name) {
    remember_rect(rects, name, ImGui::GetItemRectMin(), ImGui::GetItemRectMax());
}

std::string widget_rects_json(const WidgetRects& rects, float pixel_ratio) {
    const int frame = ImGui::GetCurrentContext() ? ImGui::GetFrameCount() : -2;
    const auto box = [pixel_ratio](float x0, float y0, float x1, float y1) {
        json::ObjectBuilder o;
        o.add("x", x0 / pixel_ratio).add("y", y0 / pixel_ratio).add("w", std::max(0.0f, x1 - x0) / pixel_ratio);
        o.add("h", std::max(0.0f, y1 - y0) / pixel_ratio);
        return o;
    };
    json::ObjectBuilder all;
    for (const auto& [name, r] : rects) {
        json::ObjectBuilder o = box(r.x, r.y, r.x + r.w, r.y + r.h);
        o.add("drawn", r.frame == frame);
        o.add_raw("visible", box(r.clip_x0, r.clip_y0, r.clip_x1, r.clip_y1).str());
        o.add("scrolls", r.scrolls);
        all.add_raw(name, o.str());
    }
    return all.str();
}

std::string drawn_windows_json(float pixel_ratio) {
    json::ArrayBuilder all;
    const ImGuiContext* g = ImGui::GetCurrentContext();
    if (!g) return all.str();
    const auto px = [pixel_ratio](float v) { return static_cast<double>(v / pixel_ratio); };
    for (const ImGuiWindow* w : g->Windows) {
        if (!w->Active || w->Hidden) continue;
        const ImVec2 content(w->DC.CursorMaxPos.x - w->DC.CursorStartPos.x, w->DC.CursorMaxPos.y - w->DC.CursorStartPos.y);
        json::ObjectBuilder o;
        o.add("name", w->Name).add("x", px(w->Pos.x)).add("y", px(w->Pos.y)).add("w", px(w->Size.x)).add("h", px(w->Size.y));
        o.add("child", (w->Flags & ImGuiWindowFlags_ChildWindow) != 0);
        o.add("content_w", px(content.x)).add("content_h", px(content.y));
        o.add("inner_w", px(w->ContentRegionRect.GetWidth())).add("inner_h", px(w->ContentRegionRect.GetHeight()));
        const ImGuiWindowFlags fixed = ImGuiWindowFlags_NoScrollbar | ImGuiWindowFlags_NoScrollWithMouse;
        o.add("scrollable_y", (w->Flags & fixed) != fixed);  // a scrollbar or the wheel (and a swipe) moves it
        all.add_raw(o.str());
    }
    return all.str();
}

}  // namespace attnlab
