#include "app/panels/attention_map_view.h"

#include <imgui.h>

#include <algorithm>
#include <cmath>
#include <cstdio>

#include "app/panels/pane_layout.h"
#include "app/plot/heatmap.h"
#include "app/plot/plot.h"
#include "app/token_chip.h"

namespace attnlab {

// ---- the numbers ---------------------------------------------------------------------------

void keep_attention_map_view(AttentionMapView& v, Session& s, int layer, int head) {
    const int L = s.forward ? s.forward->capture.length() : 0;
    if (v.window_L != L) {
        v.window = {0, L, 0, L};
        v.window_L = L;
    }
    HeadMapRequest r;
    r.pass = s.forward;
    r.layer = layer;
    r.head = head;
    r.normalizer = s.view.normalizer;
    r.T = s.view.T;
    r.window = v.window;
    r.max_blocks = v.max_blocks;
    r.how = v.how;
    keep_head_map(v.work, s, r);
}

namespace {

std::string fit_text(std::string text, float width) {
    while (!text.empty() && ImGui::CalcTextSize(text.c_str()).x > width) text.pop_back();
    return text;
}

// Blocks a side for a map `side` pixels wide: a power of two, so that resizing the window by a
// few pixels computes nothing.
int blocks_for(float side) {
    int n = 16;
    while (n * 2 <= std::min(side, 512.0f)) n *= 2;
    return n;
}

// "queries 120..135" or "query 120".
std::string range_words(const char* one, const char* many, int a, int b) {
    char buf[64];
    if (b - a <= 1) std::snprintf(buf, sizeof buf, "%s %d", one, a);
    else std::snprintf(buf, sizeof buf, "%s %d..%d", many, a, b - 1);
    return buf;
}

void draw_map_controls(AttentionMapView& v, PanelContext& ctx) {
    const Session& s = ctx.session;
    const int L = v.window_L;
    ImGui::TextUnformatted("Blocks:");
    ImGui::SameLine();
    if (ImGui::RadioButton("max", v.how == BlockAggregation::Max)) v.how = BlockAggregation::Max;
    remember_last_item(ctx.widgets, "attention.map_max");
    if (ImGui::IsItemHovered()) ImGui::SetTooltip("Each block shows the largest weight among its cells: a single sharp key stays visible.");
    ImGui::SameLine();
    if (ImGui::RadioButton("sum", v.how == BlockAggregation::Sum)) v.how = BlockAggregation::Sum;
    remember_last_item(ctx.widgets, "attention.map_sum");
    if (ImGui::IsItemHovered())
        ImGui::SetTooltip("Each block shows the sum of its cells' weights: how much a block of queries puts on a block of keys.");
    const int query = std::clamp(chosen_query(s), 0, std::max(L - 1, 0));
    same_line_if_fits(button_width("Zoom in"));
    if (ImGui::SmallButton("Zoom in")) v.window = zoomed(v.window, L, 0.25, query + 0.5, query + 0.5);
    remember_last_item(ctx.widgets, "attention.zoom_in");
    same_line_if_fits(button_width("Zoom out"));
    if (ImGui::SmallButton("Zoom out")) v.window = zoomed(v.window, L, 4.0, query + 0.5, query + 0.5);
    remember_last_item(ctx.widgets, "attention.zoom_out");
    same_line_if_fits(button_width("Reset view"));
    ImGui::BeginDisabled(v.window == MapWindow{0, L, 0, L});
    if (ImGui::SmallButton("Reset view")) v.window = {0, L, 0, L};
    ImGui::EndDisabled();
    remember_last_item(ctx.widgets, "attention.reset_view");
}

// The mouse over the map: the wheel zooms at the pointer (not on a narrow screen, where it scrolls
// the page), a right or middle drag or Shift and a left drag pans (applied when let go; the
// picture follows meanwhile), a click or a left drag chooses the row.
void handle_map_mouse(AttentionMapView& v, Session& s, ImVec2 p0, float side, bool narrow, bool hovered, bool active, bool released) {
    const ImGuiIO& io = ImGui::GetIO();
    const MapWindow& w = v.window;
    const float cell = side / std::max(w.queries(), 1);
    const double at_q = w.q0 + (io.MousePos.y - p0.y) / cell, at_k = w.k0 + (io.MousePos.x - p0.x) / cell;
    if (hovered && !narrow && io.MouseWheel != 0.0f) {
        v.window = zoomed(w, v.window_L, std::pow(0.8, io.MouseWheel), at_q, at_k);
        return;
    }
    const auto pressed_on_map = [&](int button) {
        const ImVec2 at = io.MouseClickedPos[button];
        return ImGui::IsMouseDragging(button) && at.x >= p0.x && at.x < p0.x + side && at.y >= p0.y && at.y < p0.y + side;
    };
    const int button = pressed_on_map(ImGuiMouseButton_Right)                                   ? ImGuiMouseButton_Right
                       : pressed_on_map(ImGuiMouseButton_Middle)                                ? ImGuiMouseButton_Middle
                       : io.KeyShift && active && ImGui::IsMouseDragging(ImGuiMouseButton_Left) ? ImGuiMouseButton_Left
                                                                                                : -1;
    if (button >= 0) {
        v.pan_button = button;
        v.pan_x = io.MousePos.x - io.MouseClickedPos[button].x;
        v.pan_y = io.MousePos.y - io.MouseClickedPos[button].y;
        return;
    }
    if (v.pan_button >= 0) {  // let go: the window moves, and the map is computed for it
        // From where the button was let go: a release that comes with the last move in one frame
        // would otherwise lose that move (a 6-cell drag panned 5 in the map suite).
        if (io.MouseReleased[v.pan_button]) {
            v.pan_x = io.MousePos.x - io.MouseClickedPos[v.pan_button].x;
            v.pan_y = io.MousePos.y - io.MouseClickedPos[v.pan_button].y;
        }
        v.window = panned(w, v.window_L, -v.pan_y / cell, -v.pan_x / cell);
        v.pan_x = v.pan_y = 0.0f;
        v.pan_button = -1;
        return;
    }
    const bool choosing = !io.KeyShift && (released || (active && ImGui::IsMouseDragging(ImGuiMouseButton_Left)));
    if (choosing && at_q >= w.q0 && at_q < w.q1) s.view.query = static_cast<int>(at_q);
}

// Two fingers that start over the map zoom it about their midpoint (a finger's swipe scrolls the
// page, and the wheel's zoom needs a mouse): the picture follows their spread, and the window
// zooms by it when they lift, down to single cells.
void follow_map_pinch(AttentionMapView& v, Pinch& pinch, ImVec2 p0, float side) {
    if (pinch.scale > 0.0f && pinch.taker == Pinch::Taker::None && pinch.x >= p0.x && pinch.x < p0.x + side && pinch.y >= p0.y &&
        pinch.y < p0.y + side) {
        pinch.taker = Pinch::Taker::Map;
        v.pinch_x = pinch.x - p0.x;
        v.pinch_y = pinch.y - p0.y;
    }
    if (pinch.taker == Pinch::Taker::Map && pinch.scale > 0.0f) {
        v.pinch_scale = pinch.scale;
        return;
    }
    if (v.pinch_scale > 0.0f) {  // lifted
        const MapWindow& w = v.window;
        const float cell = side / std::max(w.queries(), 1);
        v.window = zoomed(w, v.window_L, 1.0 / v.pinch_scale, w.q0 + v.pinch_y / cell, w.k0 + v.pinch_x / cell);
        v.pinch_scale = 0.0f;
    }
}

// The axes in token positions (cell j centred on j), or the tokens themselves where a cell has
// room for them.
void draw_map_axes(const AttentionMapView& v, const Session& s, ImDrawList* dl, ImVec2 p0, ImVec2 p1, float label_w) {
    const float font = ImGui::GetFontSize(), side = p1.x - p0.x;
    const ImU32 ink = ImGui::GetColorU32(ImGuiCol_Text), faint = ImGui::GetColorU32(ImGuiCol_TextDisabled);
    const MapWindow& w = v.window;
    const float cell = side / std::max(w.queries(), 1);
    const int query = chosen_query(s);
    const plot::AxisRange keys{w.k0 - 0.5, w.k1 - 0.5, plot::Scale::Linear}, rows{w.q1 - 0.5, w.q0 - 0.5, plot::Scale::Linear};
    const std::vector<plot::Tick> ticks = plot::axis_ticks(keys, std::max(2, static_cast<int>(side / (font * 4))));
    const std::vector<plot::Tick> row_ticks = plot::axis_ticks(rows, std::max(2, static_cast<int>(side / (font * 4))));
    if (cell >= font * 2.5f) {
        for (int j = w.k0; j < w.k1; ++j) {
            const std::string label = fit_text(short_token_label(s, j), cell - 2.0f);
            const float tw = ImGui::CalcTextSize(label.c_str()).x;
            dl->AddText(ImVec2(p0.x + (j - w.k0 + 0.5f) * cell - tw * 0.5f, p1.y + font * 0.35f), ink, label.c_str());
        }
    } else {
        plot::draw_axis(dl, keys, ticks, p0, p1, plot::Edge::Bottom, false);
    }
    if (cell >= ImGui::GetTextLineHeight()) {
        for (int i = w.q0; i < w.q1; ++i) {
            const std::string label = fit_text(short_token_label(s, i), label_w - font * 0.5f);
            const float tw = ImGui::CalcTextSize(label.c_str()).x;
            dl->AddText(ImVec2(p0.x - tw - font * 0.3f, p0.y + (i - w.q0 + 0.5f) * cell - font * 0.5f), i == query ? ink : faint,
                        label.c_str());
        }
    } else {
        plot::draw_axis(dl, rows, row_ticks, p0, p1, plot::Edge::Left, false);
    }
    const char* x_title = "key position →";
    dl->AddText(ImVec2(p0.x + side * 0.5f - ImGui::CalcTextSize(x_title).x * 0.5f, p1.y + font * 1.4f), ink, x_title);
    dl->AddText(ImVec2(p0.x - label_w, p0.y - font * 1.3f), ink, "query position ↓");
}

// The block under the pointer, in v.hover, and its tooltip.
void hover_block(AttentionMapView& v, const HeadMap& m, const Session& s, ImVec2 p0, float side) {
    const MapWindow& w = m.request.window;
    const ImVec2 mouse = ImGui::GetIO().MousePos;
    const float cell = side / std::max(w.queries(), 1);
    const int q = w.q0 + static_cast<int>((mouse.y - p0.y) / cell), k = w.k0 + static_cast<int>((mouse.x - p0.x) / cell);
    const int r = m.blocks.block_row(q), c = m.blocks.block_col(k);
    if (r < 0 || c < 0) return;
    auto& h = v.hover;
    h.on = true;
    h.q0 = m.blocks.row_edges[static_cast<size_t>(r)];
    h.q1 = m.blocks.row_edges[static_cast<size_t>(r) + 1];
    h.k0 = m.blocks.col_edges[static_cast<size_t>(c)];
    h.k1 = m.blocks.col_edges[static_cast<size_t>(c) + 1];
    h.value = m.blocks.at(r, c);
    ImGui::BeginTooltip();
    if (h.q1 - h.q0 == 1 && h.k1 - h.k0 == 1) {
        if (h.k0 <= h.q0)
            ImGui::Text("query %d ('%s') → key %d ('%s'): %.4g", h.q0, short_token_label(s, h.q0).c_str(), h.k0,
                        short_token_label(s, h.k0).c_str(), h.value);
        else ImGui::Text("query %d ('%s') cannot see key %d: it comes later (causal mask)", h.q0, short_token_label(s, h.q0).c_str(), h.k0);
    } else if (std::isnan(h.value)) {
        ImGui::Text("%s → %s: no key here is visible (causal mask)", range_words("query", "queries", h.q0, h.q1).c_str(),
                    range_words("key", "keys", h.k0, h.k1).c_str());
    } else {
        ImGui::Text("%s → %s: %s %.4g", range_words("query", "queries", h.q0, h.q1).c_str(), range_words("key", "keys", h.k0, h.k1).c_str(),
                    m.blocks.aggregation == BlockAggregation::Max ? "largest weight" : "sum of the weights", h.value);
    }
    ImGui::TextDisabled("Click a row to choose that query.");
    ImGui::EndTooltip();
}

// What the map shows, in words: the aggregation and the block size, or single cells.
void draw_map_caption(const AttentionMapView& v, const HeadMap& m) {
    const BlockMap& b = m.blocks;
    const MapWindow& w = b.window;
    const std::string view = range_words("query", "queries", w.q0, w.q1) + " x " + range_words("key", "keys", w.k0, w.k1);
    if (b.exact()) {
        ImGui::TextDisabled("%s of %d: every cell its own weight.", view.c_str(), v.window_L);
        return;
    }
    const int bq = (w.queries() + b.rows() - 1) / b.rows(), bk = (w.keys() + b.cols() - 1) / b.cols();
    ImGui::TextDisabled("%s of %d in %d x %d blocks of up to %d x %d tokens: each block the %s of its weights.", view.c_str(), v.window_L,
                        b.rows(), b.cols(), bq, bk, b.aggregation == BlockAggregation::Max ? "largest (max)" : "sum");
}

}  // namespace

std::string short_token_label(const Session& s, int position) {
    const std::vector<int>& t = s.forward->tokens;
    if (position < 0 || position >= static_cast<int>(t.size())) return "";
    std::string label = chip_label(s.tokenizer.token_bytes(t[static_cast<size_t>(position)]));
    if (label.size() > 14) label = label.substr(0, 12) + "..";
    return label;
}

void draw_attention_map_view(AttentionMapView& v, PanelContext& ctx, ImVec2 size, const std::string& note) {
    Session& s = ctx.session;
    ImGui::BeginChild("##map", size, false, ImGuiWindowFlags_NoScrollbar | ImGuiWindowFlags_NoScrollWithMouse);
    const std::shared_ptr<const HeadMap> m = v.work.done;
    if (m) {
        const HeadMapRequest& r = m->request;
        ImGui::Text("Layer %d, head %d: %s, T = %.3g", r.layer, r.head, r.normalizer.c_str(), r.T);
        if (!note.empty()) {
            ImGui::SameLine();
            ImGui::TextDisabled("%s", note.c_str());
        }
    }
    draw_map_controls(v, ctx);
    if (v.work.computing()) {
        ImGui::SameLine();
        ImGui::TextDisabled("computing the map: %.0f%%", 100.0 * v.work.progress());
    }
    if (m && !m->error.empty()) {
        ImGui::PushStyleColor(ImGuiCol_Text, plot::colors::vermillion);
        ImGui::TextWrapped("%s", m->error.c_str());
        ImGui::PopStyleColor();
        ImGui::EndChild();
        return;
    }
    const float font = ImGui::GetFontSize();
    const ImVec2 avail = ImGui::GetContentRegionAvail();
    // On a narrow screen (a phone, a tablet) the row labels give way and the colour bar lies under
    // the map, so that the map takes the width.
    const bool narrow = avail.x < font * 45.0f;
    const float label_w = narrow ? font * 3.0f : font * 6.0f;
    const float bar_w = font * 1.1f, bar_labels = font * 5.0f, bar_under = narrow ? font * 3.6f : 0.0f;
    const float top = font * 1.6f, bottom = font * 4.0f;
    const float beside = narrow ? font * 0.5f : bar_w + bar_labels + font;
    const float side = std::max(font * 4.0f, std::min(avail.x - label_w - beside, avail.y - top - bottom - bar_under));
    v.max_blocks = blocks_for(side * ImGui::GetIO().DisplayFramebufferScale.x);
    const ImVec2 origin = ImGui::GetCursorScreenPos();
    const ImVec2 p0(origin.x + label_w, origin.y + top), p1(p0.x + side, p0.y + side);
    ImGui::SetCursorScreenPos(p0);
    // A click chooses the row where the button is let go over it (a finger's tap). A swipe that
    // starts here lets go away from the map (src/platform/touch_gestures.h): the page scrolls.
    const bool released_here = ImGui::InvisibleButton("##heatmap", ImVec2(side, side));
    remember_last_item(ctx.widgets, "attention.heatmap");
    const bool hovered = ImGui::IsItemHovered(), active = ImGui::IsItemActive();
    handle_map_mouse(v, s, p0, side, narrow, hovered, active, released_here);
    follow_map_pinch(v, ctx.pinch, p0, side);
    v.hover = {};
    ImDrawList* dl = ImGui::GetWindowDrawList();
    const ImU32 ink = ImGui::GetColorU32(ImGuiCol_Text);
    dl->AddRectFilled(p0, p1, IM_COL32(242, 242, 242, 255));
    if (m) {
        // The picture of the map computed last, where its window lies in the window shown (the
        // same while nothing moves; a pan drag in flight moves it with the pointer, a pinch scales
        // it about the fingers' midpoint).
        const MapWindow& mw = m->request.window;
        const float zoom = v.pinch_scale > 0.0f ? v.pinch_scale : 1.0f, cell = side / std::max(v.window.queries(), 1) * zoom;
        const ImVec2 mid(p0.x + v.pinch_x, p0.y + v.pinch_y);
        const ImVec2 a(mid.x + (p0.x - mid.x) * zoom + (mw.k0 - v.window.k0) * cell + v.pan_x,
                       mid.y + (p0.y - mid.y) * zoom + (mw.q0 - v.window.q0) * cell + v.pan_y);
        const ImVec2 b(a.x + mw.keys() * cell, a.y + mw.queries() * cell);
        dl->PushClipRect(p0, p1, true);
        // The keys a causal query cannot see: hatched where the window holds the diagonal's corner
        // triangle, blank elsewhere (they are not weight 0, they are absent).
        if (mw.q0 == mw.k0 && mw.q1 == mw.k1)
            heatmap::draw_upper_hatch(dl, a, b, IM_COL32(200, 200, 200, 255), std::max(6.0f, font * 0.5f));
        heatmap::draw_runs(dl, m->runs, a, b);
        const int query = chosen_query(s);
        dl->AddRect(ImVec2(p0.x - 2, a.y + (query - mw.q0) * cell - 1), ImVec2(p1.x + 2, a.y + (query - mw.q0 + 1) * cell + 1),
                    plot::colors::vermillion, 0.0f, 0, 2.0f);
        dl->PopClipRect();
        if ((hovered || active) && v.pan_x == 0.0f && v.pan_y == 0.0f && zoom == 1.0f && mw == v.window) hover_block(v, *m, s, p0, side);
    }
    dl->AddRect(p0, p1, ink);
    draw_map_axes(v, s, dl, p0, p1, label_w);
    const double vmax = m ? m->blocks.max : 0.0;
    const char* bar_label =
        m && m->blocks.aggregation == BlockAggregation::Sum && !m->blocks.exact() ? "sum of weights" : "attention weight";
    if (narrow)
        heatmap::draw_color_bar_across(dl, ImVec2(p0.x, p1.y + bottom + font * 1.4f), ImVec2(p1.x, p1.y + bottom + font * 2.2f), vmax,
                                       bar_label);
    else heatmap::draw_color_bar(dl, ImVec2(p1.x + font, p0.y), ImVec2(p1.x + font + bar_w, p1.y), vmax, bar_label);
    ImGui::SetCursorScreenPos(ImVec2(origin.x, p1.y + bottom * 0.6f + bar_under));
    // Wrapped: a line wider than the child would make it scroll sideways, and a finger's swipe that
    // starts on the map would then scroll the child instead of the page (the touch layer's rule).
    ImGui::PushTextWrapPos(0.0f);
    if (m) draw_map_caption(v, *m);
    if (!narrow) ImGui::TextDisabled("Wheel: zoom. Right-drag or Shift+drag: pan.");
    else ImGui::TextDisabled("Two fingers on the map: zoom.");
    // Past kExactCaptureTokens the pass keeps Q, K and V at 16 bits (display_storage): say so.
    if (s.forward->capture.storage() == CaptureStorage::f16)
        ImGui::TextDisabled(
            "Queries, keys and values kept at 16 bits past %d tokens: each score within about 0.1%% of |q| |k| / sqrt(d) "
            "(the CLI's are exact).",
            kExactCaptureTokens);
    ImGui::PopTextWrapPos();
    ImGui::EndChild();
}

std::string attention_map_status_json(const AttentionMapView& v) {
    json::ObjectBuilder o;
    o.add("aggregation", aggregation_name(v.how));
    const MapWindow& w = v.window;
    o.add_raw("window", json::ArrayBuilder().add(w.q0).add(w.q1).add(w.k0).add(w.k1).str());
    o.add("computing", v.work.computing()).add("progress", v.work.progress()).add("pinch", static_cast<double>(v.pinch_scale));
    const std::shared_ptr<const HeadMap> m = v.work.done;
    // What the map on screen shows: its own request (the window shown until a new one is done).
    // Current only when it is for the window and aggregation the view asks for now: a click on
    // Zoom, Reset view or Sum changes them after that frame's request was made, and until the next
    // frame makes the new one the last map still matched `wanted` (the map suite read the old,
    // exact map as the reset whole one twice: in 1 of 5 full runs and 1 of 14 runs alone).
    const bool current = m && same_request(m->request, v.work.wanted) && m->request.window == v.window && m->request.how == v.how;
    o.add("current", current);
    if (m) {
        const BlockMap& b = m->blocks;
        const MapWindow& mw = m->request.window;
        o.add_raw("shown_window", json::ArrayBuilder().add(mw.q0).add(mw.q1).add(mw.k0).add(mw.k1).str());
        o.add("shown_aggregation", aggregation_name(m->request.how)).add("layer", m->request.layer).add("head", m->request.head);
        o.add("block_rows", b.rows()).add("block_cols", b.cols()).add("exact", b.exact());
        o.add("block_queries", b.rows() > 0 ? (mw.queries() + b.rows() - 1) / b.rows() : 0)
            .add("block_keys", b.cols() > 0 ? (mw.keys() + b.cols() - 1) / b.cols() : 0);
        o.add("max", static_cast<double>(b.max)).add("ms", m->ms).add("error", m->error);
    }
    if (v.hover.on) {
        json::ObjectBuilder h;
        h.add("q0", v.hover.q0).add("q1", v.hover.q1).add("k0", v.hover.k0).add("k1", v.hover.k1).add("value", v.hover.value);
        o.add_raw("hover", h.str());
    } else {
        o.add_raw("hover", "null");
    }
    return o.str();
}

}  // namespace attnlab
