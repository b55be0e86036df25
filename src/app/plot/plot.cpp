// The plot kit's frame: begin() opens a plot, the series functions buffer into it
// (plot_items.cpp), and end() draws it in stages. Export is in plot_export.cpp.
//
// [SECTION] State
// [SECTION] begin()
// [SECTION] end(), stage 1: fit the axes to the data
// [SECTION] end(), stage 2: lay out the frame, title and axis labels
// [SECTION] end(), stage 3: grid, ticks and tick labels
// [SECTION] end(), stage 4: the series
// [SECTION] end(), stage 5: hover (scatter points under the mouse)
// [SECTION] end(), stage 6: the legend
// [SECTION] end(), stage 7: the read-out tooltip
// [SECTION] Axes for drawings that are not plots
// [SECTION] end()
// [SECTION] Tables of values
#include <imgui_internal.h>  // GetItemID

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <vector>

#include "app/plot/plot_internal.h"

namespace attnlab::plot {

namespace detail {

// [SECTION] State --------------------------------------------------------------------------------

OpenPlot g_plot;
std::vector<std::pair<std::string, int>> g_hovered_points;

}  // namespace detail

using namespace detail;

// [SECTION] begin() -----------------------------------------------------------------------------

bool begin(const char* id, ImVec2 size, const Axis& x, const Axis& y, const char* title) {
    const ImVec2 avail = ImGui::GetContentRegionAvail();
    if (size.x <= 0.0f) size.x = avail.x;
    if (size.y <= 0.0f) size.y = avail.y;
    size.x = std::max(size.x, 160.0f * ui_scale());
    size.y = std::max(size.y, 120.0f * ui_scale());
    g_plot = OpenPlot{};
    g_plot.min = ImGui::GetCursorScreenPos();
    g_plot.max = ImVec2(g_plot.min.x + size.x, g_plot.min.y + size.y);
    ImGui::InvisibleButton(id, size);
    if (!ImGui::IsItemVisible()) return false;
    g_plot.id = ImGui::GetItemID();
    g_plot.hovered = ImGui::IsItemHovered();
    g_plot.label = id;
    // Right-click anywhere on the plot: the export menu (end() draws it: it has the data).
    if (g_export.file_export) {
        ImGui::PushID(static_cast<int>(g_plot.id));
        ImGui::OpenPopupOnItemClick("##plot_export", ImGuiPopupFlags_MouseButtonRight);
        ImGui::PopID();
    }
    g_plot.x = x;
    g_plot.y = y;
    g_plot.title = title ? title : "";
    return true;
}

namespace {

// What end() draws with, from one style for the whole plot.
struct Ink {
    float sc = ui_scale();
    float fs = ImGui::GetFontSize();
    float pad = 6.0f * ui_scale();
    ImU32 text = ImGui::GetColorU32(ImGuiCol_Text);
    ImU32 grid = IM_COL32(0, 0, 0, 28);
    ImU32 axis = IM_COL32(0, 0, 0, 140);
};

// [SECTION] end(), stage 1: fit the axes to the data --------------------------------------------

// The data's ranges, then the caller's fixed ends. A fixed end also bounds the fit of the other
// end: values beyond it are off the plot.
void fit_axes(const OpenPlot& p, AxisRange& xr, AxisRange& yr) {
    std::vector<double> xs, ys;
    for (const Series& s : p.series) fit_values(s, p.y.scale, xs, ys);
    const auto within = [](std::vector<double>& v, const Axis& axis) {
        std::erase_if(v, [&](double x) { return (axis.lo && x < *axis.lo) || (axis.hi && x > *axis.hi); });
    };
    within(xs, p.x);
    within(ys, p.y);
    xr = fit_range(xs, p.x.scale, p.x.scale == Scale::Log ? 0.0 : 0.02, p.x.max_decades);
    yr = fit_range(ys, p.y.scale, 0.05, p.y.max_decades);
    if (p.x.lo) xr.lo = *p.x.lo;
    if (p.x.hi) xr.hi = *p.x.hi;
    if (p.y.lo) yr.lo = *p.y.lo;
    if (p.y.hi) yr.hi = *p.y.hi;
    if (!(xr.hi > xr.lo)) xr = fit_range({}, p.x.scale);
    if (!(yr.hi > yr.lo)) yr = fit_range({}, p.y.scale);
}

// [SECTION] end(), stage 2: lay out the frame, title and axis labels ----------------------------

// Text turned 90 degrees counter-clockwise (reads bottom to top), centred on `center`.
void vertical_text(ImDrawList* dl, ImVec2 center, ImU32 col, const char* text) {
    const ImVec2 size = ImGui::CalcTextSize(text);
    const int first = dl->VtxBuffer.Size;
    // Lay the text out unclipped: the glyphs are culled against the clip rectangle
    // before we turn them, and the horizontal layout may poke outside the window.
    dl->PushClipRectFullScreen();
    dl->AddText(ImVec2(center.x - size.x * 0.5f, center.y - size.y * 0.5f), col, text);
    dl->PopClipRect();
    for (int i = first; i < dl->VtxBuffer.Size; ++i) {
        ImDrawVert& v = dl->VtxBuffer[i];
        const float dx = v.pos.x - center.x, dy = v.pos.y - center.y;
        v.pos = ImVec2(center.x + dy, center.y - dx);
    }
}

// The data area inside the plot's rectangle, leaving room for the title, the axis labels and the
// y tick labels (the widest of `yticks`); draws the frame, the white data area and the title.
void layout(ImDrawList* dl, const OpenPlot& p, const Ink& ink, const std::vector<Tick>& yticks, DataArea& area) {
    float ylabel_w = 0.0f;
    for (const Tick& t : yticks)
        if (t.major) ylabel_w = std::max(ylabel_w, ImGui::CalcTextSize(t.label.c_str()).x);
    const float pad = ink.pad, fs = ink.fs;
    const float left = p.min.x + pad + (*p.y.label ? fs + pad : 0.0f) + ylabel_w + pad;
    const float right = p.max.x - 2.0f * pad;
    // One line centred over the data, unless the window would cut it off (a narrow plot on a
    // phone): then it wraps within the plot, left-aligned.
    const float title_w = ImGui::CalcTextSize(p.title.c_str()).x, title_room = p.max.x - p.min.x - 2.0f * pad;
    const bool wrap = !p.title.empty() && ((left + right - title_w) * 0.5f < dl->GetClipRectMin().x ||
                                           (left + right + title_w) * 0.5f > dl->GetClipRectMax().x);
    const float title_h = wrap ? ImGui::CalcTextSize(p.title.c_str(), nullptr, false, title_room).y : fs;
    const float top = p.min.y + pad + (p.title.empty() ? 0.0f : title_h + pad);
    const float bottom = p.max.y - pad - (*p.x.label ? fs + pad : 0.0f) - fs - pad * 0.5f;
    area.a = ImVec2(left, top);
    area.b = ImVec2(right, bottom);
    dl->AddRectFilled(p.min, p.max, ImGui::GetColorU32(ImGuiCol_FrameBg), ImGui::GetStyle().FrameRounding);
    dl->AddRectFilled(area.a, area.b, IM_COL32(255, 255, 255, 255));
    if (wrap) {
        dl->AddText(ImGui::GetFont(), fs, ImVec2(p.min.x + pad, p.min.y + pad), ink.text, p.title.c_str(), nullptr, title_room);
    } else if (!p.title.empty()) {
        const ImVec2 ts = ImGui::CalcTextSize(p.title.c_str());
        dl->AddText(ImVec2((area.a.x + area.b.x - ts.x) * 0.5f, p.min.y + pad), ink.text, p.title.c_str());
    }
}

// [SECTION] end(), stage 3: grid, ticks and tick labels -----------------------------------------

void draw_grid(ImDrawList* dl, const OpenPlot& p, const Ink& ink, const DataArea& d, const std::vector<Tick>& xticks,
               const std::vector<Tick>& yticks) {
    const ImVec2 a = d.a, b = d.b;
    draw_axis(dl, d.xr, xticks, a, b, Edge::Bottom, true);
    draw_axis(dl, d.yr, yticks, a, b, Edge::Left, true);
    dl->AddRect(a, b, ink.axis);
    if (*p.x.label) {
        const ImVec2 ts = ImGui::CalcTextSize(p.x.label);
        dl->AddText(ImVec2((a.x + b.x - ts.x) * 0.5f, p.max.y - ink.pad - ink.fs), ink.text, p.x.label);
    }
    if (*p.y.label) vertical_text(dl, ImVec2(p.min.x + ink.pad + ink.fs * 0.5f, (a.y + b.y) * 0.5f), ink.text, p.y.label);
}

// [SECTION] end(), stage 4: the series ----------------------------------------------------------

// Inside the data area's clip rectangle, which the caller pushed (hover reads it before it pops).
void draw_all_series(ImDrawList* dl, const OpenPlot& p, const DataArea& d) {
    for (const Series& s : p.series)
        if (!s.hidden) draw_series(dl, s, d);
}

// [SECTION] end(), stage 5: hover (scatter points under the mouse) ------------------------------

// The mouse's column line, and the scatter point under the mouse of each scatter series
// (hovered_point()). True when the mouse is over the data area.
bool hover(ImDrawList* dl, const OpenPlot& p, const Ink& ink, const DataArea& d) {
    const ImVec2 mouse = ImGui::GetIO().MousePos;
    const bool in_area = p.hovered && mouse.x >= d.a.x && mouse.x <= d.b.x && mouse.y >= d.a.y && mouse.y <= d.b.y;
    if (in_area) dl->AddLine(ImVec2(mouse.x, d.a.y), ImVec2(mouse.x, d.b.y), IM_COL32(0, 0, 0, 70));
    g_hovered_points.clear();
    for (const Series& s : p.series) {
        if (s.kind != Kind::Scatter || s.hidden || !in_area) continue;
        int best = -1;
        float best_d2 = (s.size + 4.0f) * ink.sc * (s.size + 4.0f) * ink.sc;
        for (size_t i = 0; i < s.x.size(); ++i) {
            if (!drawable(d.xr, s.x[i]) || !drawable(d.yr, s.y[i])) continue;
            const float dx = d.X(s.x[i]) - mouse.x, dy = d.Y(s.y[i]) - mouse.y;
            if (dx * dx + dy * dy < best_d2) {
                best_d2 = dx * dx + dy * dy;
                best = static_cast<int>(i);
            }
        }
        if (best >= 0) g_hovered_points.emplace_back(s.label, best);
    }
    return in_area;
}

// [SECTION] end(), stage 6: the legend ----------------------------------------------------------

// A series with a label that does not start with "##" has a legend entry.
bool in_legend(const Series& s) { return !s.label.empty() && s.label.rfind("##", 0) != 0; }

// The corner of the data area, `size` px, that covers the fewest data points.
ImVec2 emptiest_corner(const OpenPlot& p, const DataArea& d, float pad, ImVec2 size) {
    const ImVec2 a = d.a, b = d.b;
    const ImVec2 corners[4] = {ImVec2(b.x - pad - size.x, a.y + pad), ImVec2(a.x + pad, a.y + pad),
                               ImVec2(b.x - pad - size.x, b.y - pad - size.y), ImVec2(a.x + pad, b.y - pad - size.y)};
    int best = 0, best_count = 1 << 30;
    for (int c = 0; c < 4; ++c) {
        int count = 0;
        for (const Series& s : p.series)
            for (size_t i = 0; i < s.y.size() && i < s.x.size(); ++i) {
                const float sx = d.X(s.x[i]), sy = d.Y(s.y[i]);
                count += sx >= corners[c].x && sx <= corners[c].x + size.x && sy >= corners[c].y && sy <= corners[c].y + size.y;
            }
        if (count < best_count) {
            best_count = count;
            best = c;
        }
    }
    return corners[best];
}

// In the corner that covers the fewest data points; a click on an entry hides or shows its series
// (on the button's release over it: a finger's swipe that starts there lets go elsewhere). A legend
// that would cover more than a quarter of the data (a phone's plot: it covered half) folds into a
// "Key" row that a click opens and closes (a picture saved as PNG has it whole). True when the
// mouse is over the legend.
bool draw_legend(ImDrawList* dl, const OpenPlot& p, const Ink& ink, const DataArea& d, bool capturing) {
    std::vector<const Series*> entries;
    float legend_w = 0.0f;
    for (const Series& s : p.series) {
        if (!in_legend(s)) continue;
        entries.push_back(&s);
        legend_w = std::max(legend_w, ImGui::CalcTextSize(s.label.c_str()).x);
    }
    if (entries.empty()) return false;
    const float pad = ink.pad, row = ink.fs + 4.0f * ink.sc, swatch = 22.0f * ink.sc;
    const ImVec2 full(legend_w + swatch + 3.0f * pad, row * entries.size() + pad);
    const bool foldable = !capturing && full.x * full.y > 0.25f * (d.b.x - d.a.x) * (d.b.y - d.a.y);  // a PNG has it whole
    ImGuiStorage* storage = ImGui::GetStateStorage();
    const ImGuiID open_id = ImHashStr("##legend_open", 0, p.id);
    const bool open = !foldable || storage->GetBool(open_id, false);
    char key[48];
    std::snprintf(key, sizeof key, open ? "Key: hide" : "Key (%d): show", static_cast<int>(entries.size()));
    const float key_row = foldable ? row : 0.0f;
    ImVec2 size = open ? ImVec2(full.x, full.y + key_row) : ImVec2(ImGui::CalcTextSize(key).x + 2.0f * pad, row + pad);
    size.x = std::max(size.x, foldable ? ImGui::CalcTextSize(key).x + 2.0f * pad : 0.0f);
    const ImVec2 lmin = emptiest_corner(p, d, pad, size);
    if (g_export.widgets) {  // for the phone suite: how much of the data the legend covers
        const std::string name = "plot." + slug(!p.title.empty() ? std::string_view(p.title) : std::string_view(p.label));
        remember_rect(*g_export.widgets, name + ".legend", lmin, ImVec2(lmin.x + size.x, lmin.y + size.y));
        remember_rect(*g_export.widgets, name + ".data", d.a, d.b);
    }
    const ImVec2 mouse = ImGui::GetIO().MousePos;
    const auto over_rect = [&](ImVec2 r0, ImVec2 r1) {
        return p.hovered && mouse.x >= r0.x && mouse.x <= r1.x && mouse.y >= r0.y && mouse.y < r1.y;
    };
    const bool released = ImGui::IsMouseReleased(ImGuiMouseButton_Left);
    bool hovered = false;
    dl->AddRectFilled(lmin, ImVec2(lmin.x + size.x, lmin.y + size.y), IM_COL32(255, 255, 255, 225), 3.0f * ink.sc);
    dl->AddRect(lmin, ImVec2(lmin.x + size.x, lmin.y + size.y), IM_COL32(0, 0, 0, 60), 3.0f * ink.sc);
    if (foldable) {
        const ImVec2 rmin(lmin.x + pad, lmin.y + pad * 0.5f), rmax(lmin.x + size.x - pad, rmin.y + row);
        const bool over = over_rect(rmin, rmax);
        hovered |= over;
        if (over) dl->AddRectFilled(rmin, rmax, IM_COL32(0, 0, 0, 18));
        dl->AddText(ImVec2(rmin.x, rmin.y + 2.0f), ink.text, key);
        if (over && released) storage->SetBool(open_id, !open);
        if (!open) return hovered;
    }
    for (size_t i = 0; i < entries.size(); ++i) {
        const Series& s = *entries[i];
        const ImVec2 rmin(lmin.x + pad, lmin.y + key_row + pad * 0.5f + row * i);
        const ImVec2 rmax(lmin.x + size.x - pad, rmin.y + row);
        const bool over = over_rect(rmin, rmax);
        hovered |= over;
        if (over) dl->AddRectFilled(rmin, rmax, IM_COL32(0, 0, 0, 18));
        draw_swatch(dl, s, ImVec2(rmin.x, rmin.y + 2.0f), ImVec2(rmin.x + swatch, rmax.y - 2.0f));
        dl->AddText(ImVec2(rmin.x + swatch + pad, rmin.y + 2.0f), s.hidden ? ImGui::GetColorU32(ImGuiCol_TextDisabled) : ink.text,
                    s.label.c_str());
        if (over && released) storage->SetBool(ImHashStr(s.label.c_str(), 0, p.id), !s.hidden);
    }
    return hovered;
}

// [SECTION] end(), stage 7: the read-out tooltip ------------------------------------------------

// Data value of series s nearest to screen column `mx`.
bool nearest(const Series& s, const DataArea& d, float mx, size_t& index) {
    float best = 1e30f;
    for (size_t i = 0; i < s.x.size(); ++i) {
        if (!drawable(d.xr, s.x[i])) continue;
        const float dist = std::abs(d.X(s.x[i]) - mx);
        if (dist < best) {
            best = dist;
            index = i;
        }
    }
    return best < 1e29f;
}

// The cursor's place in data units, and each series' value at the nearest x.
void readout(const OpenPlot& p, const DataArea& d) {
    const ImVec2 mouse = ImGui::GetIO().MousePos;
    const double mx = axis_value(d.xr, (mouse.x - d.a.x) / (d.b.x - d.a.x));
    const double my = axis_value(d.yr, (d.b.y - mouse.y) / (d.b.y - d.a.y));
    ImGui::BeginTooltip();
    ImGui::TextDisabled("cursor: x = %s, y = %s", format_number(mx, 4).c_str(), format_number(my, 4).c_str());
    for (const Series& s : p.series) {
        size_t i = 0;
        if (s.hidden || !reads_out(s.kind) || s.label.empty() || !nearest(s, d, mouse.x, i)) continue;
        ImGui::PushStyleColor(ImGuiCol_Text, s.style.color);
        ImGui::Bullet();
        ImGui::PopStyleColor();
        ImGui::SameLine();
        hover_line(s, i, s.label.rfind("##", 0) == 0 ? s.label.c_str() + 2 : s.label.c_str());
    }
    ImGui::EndTooltip();
}

}  // namespace

// [SECTION] Axes for drawings that are not plots ------------------------------------------------

void draw_axis(ImDrawList* dl, const AxisRange& range, const std::vector<Tick>& ticks, ImVec2 a, ImVec2 b, Edge edge, bool grid) {
    const Ink ink;
    const bool bottom = edge == Edge::Bottom;
    for (const Tick& t : ticks) {
        const float at = bottom ? to_screen(range, t.value, a.x, b.x) : to_screen(range, t.value, b.y, a.y);
        if (bottom ? (at < a.x - 0.5f || at > b.x + 0.5f) : (at < a.y - 0.5f || at > b.y + 0.5f)) continue;
        const float tick = (t.major ? 5.0f : 3.0f) * ink.sc;
        if (bottom) {
            if (t.major && grid) dl->AddLine(ImVec2(at, a.y), ImVec2(at, b.y), ink.grid);
            dl->AddLine(ImVec2(at, b.y), ImVec2(at, b.y + tick), ink.axis);
        } else {
            if (t.major && grid) dl->AddLine(ImVec2(a.x, at), ImVec2(b.x, at), ink.grid);
            if (edge == Edge::Left) dl->AddLine(ImVec2(a.x - tick, at), ImVec2(a.x, at), ink.axis);
            else dl->AddLine(ImVec2(b.x, at), ImVec2(b.x + tick, at), ink.axis);
        }
        if (!t.major) continue;
        const ImVec2 ts = ImGui::CalcTextSize(t.label.c_str());
        if (bottom) dl->AddText(ImVec2(at - ts.x * 0.5f, b.y + 6.0f * ink.sc), ink.text, t.label.c_str());
        else if (edge == Edge::Left) dl->AddText(ImVec2(a.x - 7.0f * ink.sc - ts.x, at - ts.y * 0.5f), ink.text, t.label.c_str());
        else dl->AddText(ImVec2(b.x + 7.0f * ink.sc, at - ts.y * 0.5f), ink.text, t.label.c_str());
    }
}

// [SECTION] end() ----------------------------------------------------------------------------------

void end() {
    OpenPlot& p = g_plot;
    // The frame a PNG is taken: no hover line, tooltip or export button in the picture.
    const bool capturing = g_export.capture_id != 0 && g_export.capture_id == p.id;
    if (capturing) p.hovered = false;
    ImDrawList* dl = ImGui::GetWindowDrawList();
    const Ink ink;

    DataArea d;
    fit_axes(p, d.xr, d.yr);
    const std::vector<Tick> xticks = axis_ticks(d.xr, std::max(2, static_cast<int>((p.max.x - p.min.x) / (70.0f * ink.sc))));
    const std::vector<Tick> yticks = axis_ticks(d.yr, std::max(2, static_cast<int>((p.max.y - p.min.y) / (40.0f * ink.sc))));
    layout(dl, p, ink, yticks, d);
    draw_grid(dl, p, ink, d, xticks, yticks);
    dl->PushClipRect(d.a, d.b, true);
    draw_all_series(dl, p, d);
    const bool in_area = hover(dl, p, ink, d);
    dl->PopClipRect();
    const bool legend_hovered = draw_legend(dl, p, ink, d, capturing);
    if (in_area && !legend_hovered) readout(p, d);
    if (legend_hovered) ImGui::SetMouseCursor(ImGuiMouseCursor_Hand);
    export_controls(p, capturing);
    g_plot.series.clear();
}

// [SECTION] Tables of values -----------------------------------------------------------------------

bool begin_values_table(const char* id, ImGuiTableFlags flags) {
    if (!ImGui::BeginTable(id, 2, flags | ImGuiTableFlags_SizingFixedFit)) return false;
    ImGui::TableSetupColumn("name", ImGuiTableColumnFlags_WidthStretch);  // what the value leaves
    ImGui::TableSetupColumn("value", ImGuiTableColumnFlags_WidthFixed);   // its widest value, on one line
    return true;
}

}  // namespace attnlab::plot
