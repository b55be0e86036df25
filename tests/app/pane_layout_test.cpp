// The small-screen layout's decisions (app/panels/pane_layout) and the widget records the browser
// test judges them by (app/widget_rects), in a headless ImGui frame: no window, no GL. Expected
// places are worked out here from the screen's size, ImGui's style and the font size, not read
// back from the code under test.
#include <imgui.h>
#include <catch2/catch.hpp>

#include <functional>

#include "app/panels/pane_layout.h"
#include "app/widget_rects.h"

namespace attnlab {
namespace {

// One frame of a screen `w` x `h` px, with `draw` inside a window that fills it (as the app's does).
void frame(float w, float h, const std::function<void()>& draw) {
    ImGuiContext* context = ImGui::CreateContext();
    ImGuiIO& io = ImGui::GetIO();
    io.DisplaySize = ImVec2(w, h);
    io.IniFilename = nullptr;
    unsigned char* pixels = nullptr;
    int tw = 0, th = 0;
    io.Fonts->GetTexDataAsRGBA32(&pixels, &tw, &th);  // builds the atlas: NewFrame needs it
    for (int i = 0; i < 2; ++i) {                     // the second frame knows the first one's content sizes (scrolling)
        ImGui::NewFrame();
        ImGui::SetNextWindowPos(ImVec2(0, 0));
        ImGui::SetNextWindowSize(io.DisplaySize);
        ImGui::Begin("screen", nullptr, ImGuiWindowFlags_NoDecoration | ImGuiWindowFlags_NoSavedSettings);
        draw();
        ImGui::End();
        ImGui::Render();
    }
    ImGui::DestroyContext(context);
}

struct TwoPanes {
    bool stacked = false;
    ImVec2 first, second;  // top-left corners
};

TwoPanes draw_two_panes(float w, float h) {
    TwoPanes got;
    frame(w, h, [&] {
        const Panes panes = begin_panes("##panes", 20.0f, 30.0f);
        got.stacked = panes.stacked;
        begin_pane(panes, "##a", ImGui::GetFontSize() * 20.0f, false);
        got.first = ImGui::GetCursorScreenPos();
        ImGui::Button("a", ImVec2(-1, ImGui::GetFontSize() * 3));
        end_pane(panes);
        beside(panes);
        begin_pane(panes, "##b", 0, false);
        got.second = ImGui::GetCursorScreenPos();
        ImGui::Button("b", ImVec2(-1, ImGui::GetFontSize() * 3));
        end_pane(panes);
        end_panes(panes);
    });
    return got;
}

TEST_CASE("panes sit side by side where 50 font sizes fit across and 20 down, else stack", "[app][layout]") {
    // ImGui's default font is 13 px: 50 of them are 650 px, 20 are 260 px (plus the window's padding).
    const TwoPanes wide = draw_two_panes(1280, 800);
    CHECK_FALSE(wide.stacked);
    CHECK(wide.second.x >= wide.first.x + 13 * 20);  // beside it, past its 20 font sizes
    CHECK(wide.second.y == wide.first.y);

    const TwoPanes narrow = draw_two_panes(390, 844);
    CHECK(narrow.stacked);
    CHECK(narrow.second.x == narrow.first.x);  // under it
    CHECK(narrow.second.y > narrow.first.y + 13 * 3);

    const TwoPanes short_screen = draw_two_panes(844, 200);  // wide enough, too short
    CHECK(short_screen.stacked);
    CHECK(short_screen.second.x == short_screen.first.x);

    CHECK_FALSE(draw_two_panes(700, 800).stacked);  // 650 px + padding fit in 700
    CHECK(draw_two_panes(600, 800).stacked);
}

TEST_CASE("same_line_if_fits keeps items on the line while they fit, then starts the next", "[app][layout]") {
    ImVec2 first, second, third;
    float width = 0.0f, drawn_w = 0.0f, right = 0.0f, spacing = 0.0f;
    frame(300, 300, [&] {
        width = button_width("Button");
        spacing = ImGui::GetStyle().ItemSpacing.x;
        right = ImGui::GetWindowPos().x + ImGui::GetWindowContentRegionMax().x;
        ImGui::Button("Button##1");
        first = ImGui::GetItemRectMin();
        drawn_w = ImGui::GetItemRectSize().x;
        same_line_if_fits(width);
        ImGui::Button("Button##2");
        second = ImGui::GetItemRectMin();
        // A third would end past the window's right edge: it wraps.
        same_line_if_fits(right - second.x);
        ImGui::Button("Button##3");
        third = ImGui::GetItemRectMin();
    });
    CHECK(width == drawn_w);  // button_width() says what ImGui draws
    CHECK(second.y == first.y);
    CHECK(second.x == first.x + width + spacing);
    CHECK(third.x == first.x);
    CHECK(third.y > first.y);
}

TEST_CASE("plot_pair puts two plots side by side when each gets min_em font sizes", "[app][layout]") {
    PlotPair wide, narrow;
    float font = 0.0f, gap = 0.0f;
    frame(400, 300, [&] {
        font = ImGui::GetFontSize();
        gap = ImGui::GetStyle().ItemSpacing.x;
        wide = plot_pair(2 * 22 * font + gap);
        narrow = plot_pair(2 * 22 * font + gap - 1);
    });
    CHECK(wide.side_by_side);
    CHECK(wide.w == 22 * font);
    CHECK_FALSE(narrow.side_by_side);
    CHECK(narrow.w == 2 * 22 * font + gap - 1);
}

TEST_CASE("a widget record says which part its windows show and whether one scrolls", "[app][layout]") {
    WidgetRects rects;
    frame(400, 400, [&] {
        ImGui::BeginChild("##box", ImVec2(200, 100), false);
        ImGui::Button("top", ImVec2(50, 20));
        remember_last_item(rects, "top");
        ImGui::Dummy(ImVec2(10, 200));  // pushes the next one below the box: it must scroll
        ImGui::Button("below", ImVec2(50, 20));
        remember_last_item(rects, "below");
        ImGui::EndChild();
        ImGui::Button("outside", ImVec2(50, 20));
        remember_last_item(rects, "outside");
    });
    const WidgetRect& top = rects.at("top");
    CHECK(top.scrolls);  // its box scrolls (its content is 250 px high in 100)
    CHECK(top.clip_x1 - top.clip_x0 == top.w);
    CHECK(top.clip_y1 - top.clip_y0 == top.h);
    const WidgetRect& below = rects.at("below");
    CHECK(below.scrolls);
    CHECK(below.clip_y1 <= below.clip_y0);  // none of it shown until scrolled to
    const WidgetRect& outside = rects.at("outside");
    CHECK_FALSE(outside.scrolls);  // the screen's window holds all it has
    CHECK(outside.clip_y1 - outside.clip_y0 == outside.h);
}

}  // namespace
}  // namespace attnlab
