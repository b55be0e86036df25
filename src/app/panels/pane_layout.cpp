#include "app/panels/pane_layout.h"

#include <imgui.h>

#include <algorithm>

namespace attnlab {

namespace {

// Below this many font sizes of height, panes side by side would each be too short to read (a
// phone held sideways has about 11): they stack and scroll instead. A desktop at 1280 x 800 has
// about 44 at 100% and 26 at 150%.
constexpr float kMinPanelLines = 20.0f;
// The room a stacked pane leaves right of its sliders and fields for their labels, in font sizes.
constexpr float kLabelEm = 8.0f;

}  // namespace

Panes begin_panes(const char* id, float side_em, float main_em) {
    const float font = ImGui::GetFontSize();
    const ImVec2 avail = ImGui::GetContentRegionAvail();
    Panes panes;
    panes.stacked = avail.x < (side_em + main_em) * font || avail.y < kMinPanelLines * font;
    panes.view_h = avail.y;
    // Always the scrollbar: its width does not come and go with the content's height, and on a
    // phone it says that the panel goes on below.
    if (panes.stacked) ImGui::BeginChild(id, ImVec2(0, 0), false, ImGuiWindowFlags_AlwaysVerticalScrollbar);
    return panes;
}

void end_panes(const Panes& panes) {
    if (panes.stacked) ImGui::EndChild();
}

void begin_pane(const Panes& panes, const char* id, float width, bool border) {
    if (!panes.stacked) {
        ImGui::BeginChild(id, ImVec2(width, 0), border);
        return;
    }
    ImGui::PushID(id);
    ImGui::BeginGroup();
    // A line of text longer than a phone is wide wraps at the window's edge (in window space: 0
    // would mean each table column's edge, and a table sized to fit its text would shrink to
    // one letter a line).
    ImGui::PushTextWrapPos(ImGui::GetContentRegionMax().x);
    // Sliders and fields leave room for their labels (ImGui's default, 65% of the width, leaves
    // a phone too little for "temperature T").
    ImGui::PushItemWidth(-ImGui::GetFontSize() * kLabelEm);
}

void end_pane(const Panes& panes) {
    if (!panes.stacked) {
        ImGui::EndChild();
        return;
    }
    ImGui::PopItemWidth();
    ImGui::PopTextWrapPos();
    ImGui::EndGroup();
    ImGui::PopID();
}

void beside(const Panes& panes) {
    if (!panes.stacked) {
        ImGui::SameLine();
        return;
    }
    ImGui::Spacing();
    ImGui::Separator();
    ImGui::Spacing();
}

float stacked_plot_height(const Panes& panes, float width, float aspect) {
    const float lines = ImGui::GetTextLineHeightWithSpacing();
    return std::max(std::min(width * aspect, std::max(panes.view_h * 0.9f, lines * 8.0f)), lines * 6.0f);
}

PlotPair plot_pair(float avail_w, float min_em) {
    const float gap = ImGui::GetStyle().ItemSpacing.x;
    PlotPair pair;
    pair.side_by_side = avail_w >= 2.0f * min_em * ImGui::GetFontSize() + gap;
    pair.w = pair.side_by_side ? (avail_w - gap) * 0.5f : avail_w;
    return pair;
}

void same_line_if_fits(float width) {
    const float right = ImGui::GetWindowPos().x + ImGui::GetWindowContentRegionMax().x;
    if (ImGui::GetItemRectMax().x + ImGui::GetStyle().ItemSpacing.x + width <= right) ImGui::SameLine();
}

float labelled_width(float frame_w, const char* label) {
    const float text = ImGui::CalcTextSize(label, nullptr, true).x;
    return text > 0.0f ? frame_w + ImGui::GetStyle().ItemInnerSpacing.x + text : frame_w;
}

float button_width(const char* label) { return ImGui::CalcTextSize(label, nullptr, true).x + 2.0f * ImGui::GetStyle().FramePadding.x; }

}  // namespace attnlab
