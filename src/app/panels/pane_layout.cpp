#include "app/panels/pane_layout.h"

#include <imgui.h>

#include <algorithm>
#include <cstdarg>
#include <cstdio>
#include <string_view>

namespace attnlab {

namespace {

// Below this many font sizes of height, panes side by side would each be too short to read (a
// phone held sideways has about 11): they stack and scroll instead. A desktop at 1280 x 800 has
// about 44 at 100% and 26 at 150%.
constexpr float kMinPanelLines = 20.0f;
// The room a stacked pane leaves right of its sliders and fields for their labels, in font sizes.
constexpr float kLabelEm = 8.0f;
// The page scrolls below this many font sizes across (the widest panel's panes, 20 + 30, do not
// fit side by side) or down (the header's dozen lines and kMinPanelLines do not fit). A desktop
// at 1280 x 800 has 85 x 53 at 100% and 57 x 36 at 150%; a phone 21 x 45 at 125%.
constexpr float kPageScrollEm = 50.0f, kPageScrollLines = 34.0f;

PageScroll g_page;

}  // namespace

bool page_scrolls_for(float width, float height, float font) { return width < kPageScrollEm * font || height < kPageScrollLines * font; }
void set_page_scroll(const PageScroll& page) { g_page = page; }
const PageScroll& page_scroll() { return g_page; }

Panes begin_panes(const char* id, float side_em, float main_em) {
    const float font = ImGui::GetFontSize();
    const ImVec2 avail = ImGui::GetContentRegionAvail();
    Panes panes;
    if (g_page.on) {  // stacked in the page, which scrolls
        panes.stacked = true;
        panes.view_h = g_page.view_h;
        return panes;
    }
    panes.stacked = avail.x < (side_em + main_em) * font || avail.y < kMinPanelLines * font;
    panes.view_h = avail.y;
    // Always the scrollbar: its width does not come and go with the content's height, and on a
    // phone it says that the panel goes on below.
    panes.in_child = panes.stacked;
    if (panes.in_child) ImGui::BeginChild(id, ImVec2(0, 0), false, ImGuiWindowFlags_AlwaysVerticalScrollbar);
    return panes;
}

void end_panes(const Panes& panes) {
    if (panes.in_child) ImGui::EndChild();
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

void text_wrapped(const char* fmt, ...) {
    char buf[2048];
    va_list args;
    va_start(args, fmt);
    std::vsnprintf(buf, sizeof buf, fmt, args);
    va_end(args);
    const std::string_view text(buf);
    const float width = std::max(ImGui::GetContentRegionAvail().x, ImGui::GetFontSize() * 4.0f);
    const auto word_end = [&](size_t from) { return std::min(text.find_first_of(" \n", from), text.size()); };
    ImGui::PushTextWrapPos(-1.0f);
    for (size_t begin = 0;;) {
        size_t end = word_end(begin);  // the line text[begin, end): at least one word, then as many as fit
        while (end < text.size() && text[end] == ' ') {
            const size_t next = word_end(end + 1);
            if (ImGui::CalcTextSize(text.data() + begin, text.data() + next).x > width) break;
            end = next;
        }
        ImGui::TextUnformatted(text.data() + begin, text.data() + end);
        if (end >= text.size()) break;
        begin = end + 1;  // past the space or the newline
    }
    ImGui::PopTextWrapPos();
}

float button_width(const char* label) { return ImGui::CalcTextSize(label, nullptr, true).x + 2.0f * ImGui::GetStyle().FramePadding.x; }

}  // namespace attnlab
