#include "app/plot/plot.h"

#include <imgui_internal.h>  // ImHashStr, GetItemID

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

namespace attnlab::plot {
namespace {

enum class Kind { Line, Band, Bars, VLine, Point, Scatter, Circle, Boxes, ErrorBars };

struct Series {
    Kind kind;
    std::string label;
    std::vector<double> x, y, y2;  // y2: the upper edge of a band
    LineStyle style;
    double width = 0.0;  // bar width in x units; circle radius; box width
    bool hidden = false;
    std::vector<double> extra;  // boxes: q1, median, q3 per point
    Marker marker = Marker::Circle;
    float size = 4.0f;
    bool ring = false;
};

// Scatter points under the mouse in the plot ended last: (label, index).
std::vector<std::pair<std::string, int>> g_hovered_points;

// One plot is open at a time, like an ImGui window between Begin and End.
struct OpenPlot {
    ImGuiID id = 0;
    std::string label;  // begin()'s id, for file names
    std::string title;
    Axis x, y;
    ImVec2 min, max;
    bool hovered = false;
    std::vector<Series> series;
};
OpenPlot g_plot;

// Where exports go (set by the app every frame), and the plot whose PNG is due this frame.
struct ExportState {
    FileExport* file_export = nullptr;
    WidgetRects* widgets = nullptr;
    ImGuiID capture_id = 0;
    int menu_frame = -1;  // the frame an export menu was last drawn
    bool menu_appearing = false;  // its first frame: sized but not yet placed
};
ExportState g_export;
void append_csv(std::string& csv, const std::vector<Series>& series);
void export_controls(OpenPlot& p, bool capturing);

// Everything scales with the font, which the platform sizes for the screen's pixel ratio.
float ui_scale() { return ImGui::GetFontSize() / 15.0f; }

ImU32 with_alpha(ImU32 color, float alpha) {
    ImVec4 c = ImGui::ColorConvertU32ToFloat4(color);
    c.w *= alpha;
    return ImGui::ColorConvertFloat4ToU32(c);
}

// Screen position of a data value, kept within a few plot sizes of the plot so that
// vanishing or exploding values (0 or inf on a log axis) still draw as off-scale edges.
float to_screen(const AxisRange& axis, double v, float a, float b) {
    double f = axis_fraction(axis, v);
    if (std::isnan(f)) f = 0.0;
    f = std::clamp(f, -4.0, 5.0);
    return a + static_cast<float>(f) * (b - a);
}

bool drawable(const AxisRange& axis, double v) {
    return std::isfinite(v) && (axis.scale == Scale::Linear || v > 0.0);
}

void polyline(ImDrawList* dl, const std::vector<ImVec2>& pts, ImU32 col, float thick, Dash dash) {
    if (pts.size() < 2) return;
    if (dash == Dash::Solid) {
        dl->AddPolyline(pts.data(), static_cast<int>(pts.size()), col, ImDrawFlags_None, thick);
        return;
    }
    const float on = (dash == Dash::Dashed ? 7.0f : 1.5f) * ui_scale();
    const float off = (dash == Dash::Dashed ? 5.0f : 4.0f) * ui_scale();
    float phase = 0.0f;  // distance into the current on+off period
    for (size_t i = 1; i < pts.size(); ++i) {
        ImVec2 p = pts[i - 1];
        const ImVec2 q = pts[i];
        float len = std::hypot(q.x - p.x, q.y - p.y);
        if (len <= 0.0f) continue;
        const ImVec2 dir((q.x - p.x) / len, (q.y - p.y) / len);
        while (len > 0.0f) {
            const bool drawing = phase < on;
            const float step = std::min(len, drawing ? on - phase : on + off - phase);
            const ImVec2 r(p.x + dir.x * step, p.y + dir.y * step);
            if (drawing) dl->AddLine(p, r, col, thick);
            p = r;
            len -= step;
            phase += step;
            if (phase >= on + off) phase = 0.0f;
        }
    }
}

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

void draw_swatch_added(ImDrawList* dl, const Series& s, ImVec2 a, ImVec2 b);
void draw_added(ImDrawList* dl, const Series& s, const AxisRange& xr, const AxisRange& yr, ImVec2 a, ImVec2 b);

void legend_swatch(ImDrawList* dl, const Series& s, ImVec2 a, ImVec2 b) {
    const float mid = (a.y + b.y) * 0.5f;
    const float thick = s.style.thickness * ui_scale();
    switch (s.kind) {
        case Kind::Line:
        case Kind::VLine: polyline(dl, {ImVec2(a.x, mid), ImVec2(b.x, mid)}, s.style.color, thick, s.style.dash); break;
        case Kind::Band: dl->AddRectFilled(ImVec2(a.x, a.y + 2), ImVec2(b.x, b.y - 2), with_alpha(s.style.color, 0.35f)); break;
        case Kind::Bars: dl->AddRectFilled(ImVec2(a.x + 4, a.y + 2), ImVec2(b.x - 4, b.y - 2), s.style.color); break;
        case Kind::Point: dl->AddCircleFilled(ImVec2((a.x + b.x) * 0.5f, mid), 4.0f * ui_scale(), s.style.color); break;
        case Kind::Scatter:
        case Kind::Circle:
        case Kind::Boxes:
        case Kind::ErrorBars: draw_swatch_added(dl, s, a, b); break;
    }
}

// Data value of series s nearest to screen column `mx`, for the hover read-out.
bool nearest(const Series& s, const AxisRange& xr, float x0, float x1, float mx, size_t& index) {
    float best = 1e30f;
    for (size_t i = 0; i < s.x.size(); ++i) {
        if (!drawable(xr, s.x[i])) continue;
        const float d = std::abs(to_screen(xr, s.x[i], x0, x1) - mx);
        if (d < best) { best = d; index = i; }
    }
    return best < 1e29f;
}

Series& add(Kind kind, const char* label, LineStyle style) {
    Series& s = g_plot.series.emplace_back();
    s.kind = kind;
    s.label = label ? label : "";
    s.style = style;
    const ImGuiID key = ImHashStr(s.label.c_str(), 0, g_plot.id);
    s.hidden = ImGui::GetStateStorage()->GetBool(key, false);
    return s;
}

}  // namespace

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

void line(const char* label, std::span<const double> x, std::span<const double> y, LineStyle style) {
    Series& s = add(Kind::Line, label, style);
    const size_t n = std::min(x.size(), y.size());
    s.x.assign(x.begin(), x.begin() + n);
    s.y.assign(y.begin(), y.begin() + n);
}

void band(const char* label, std::span<const double> x, std::span<const double> lo, std::span<const double> hi,
          ImU32 color) {
    Series& s = add(Kind::Band, label, {color});
    const size_t n = std::min({x.size(), lo.size(), hi.size()});
    s.x.assign(x.begin(), x.begin() + n);
    s.y.assign(lo.begin(), lo.begin() + n);
    s.y2.assign(hi.begin(), hi.begin() + n);
}

void bars(const char* label, std::span<const double> x, std::span<const double> y, double width, ImU32 color) {
    Series& s = add(Kind::Bars, label, {color});
    const size_t n = std::min(x.size(), y.size());
    s.x.assign(x.begin(), x.begin() + n);
    s.y.assign(y.begin(), y.begin() + n);
    s.width = width;
}

void vline(const char* label, double x, LineStyle style) {
    Series& s = add(Kind::VLine, label, style);
    s.x = {x};
}

void point(const char* label, double x, double y, ImU32 color) {
    Series& s = add(Kind::Point, label, {color});
    s.x = {x};
    s.y = {y};
}

void end() {
    OpenPlot& p = g_plot;
    // The frame a PNG is taken: no hover line, tooltip or export button in the picture.
    const bool capturing = g_export.capture_id != 0 && g_export.capture_id == p.id;
    if (capturing) p.hovered = false;
    ImDrawList* dl = ImGui::GetWindowDrawList();
    const float sc = ui_scale();
    const float fs = ImGui::GetFontSize();
    const ImGuiStyle& style = ImGui::GetStyle();
    const ImU32 text_col = ImGui::GetColorU32(ImGuiCol_Text);
    const ImU32 grid_col = IM_COL32(0, 0, 0, 28);
    const ImU32 axis_col = IM_COL32(0, 0, 0, 140);

    // --- ranges: fit the data, then apply the caller's fixed ends ----------------------
    std::vector<double> xs, ys;
    for (const Series& s : p.series) {
        for (size_t i = 0; i < s.x.size(); ++i) {
            xs.push_back(s.x[i]);
            if (s.kind == Kind::Bars) {
                xs.push_back(s.x[i] - s.width * 0.5);
                xs.push_back(s.x[i] + s.width * 0.5);
            }
        }
        if (s.kind != Kind::VLine) ys.insert(ys.end(), s.y.begin(), s.y.end());
        ys.insert(ys.end(), s.y2.begin(), s.y2.end());
        if (s.kind == Kind::Bars && p.y.scale == Scale::Linear) ys.push_back(0.0);
        if (s.kind == Kind::Circle) {
            xs.insert(xs.end(), {s.x[0] - s.width, s.x[0] + s.width});
            ys.insert(ys.end(), {s.y[0] - s.width, s.y[0] + s.width});
        }
    }
    // A fixed end also bounds the fit of the other end: values beyond it are off the plot.
    const auto within = [](std::vector<double>& v, const Axis& axis) {
        std::erase_if(v, [&](double x) { return (axis.lo && x < *axis.lo) || (axis.hi && x > *axis.hi); });
    };
    within(xs, p.x);
    within(ys, p.y);
    AxisRange xr = fit_range(xs, p.x.scale, p.x.scale == Scale::Log ? 0.0 : 0.02, p.x.max_decades);
    AxisRange yr = fit_range(ys, p.y.scale, 0.05, p.y.max_decades);
    if (p.x.lo) xr.lo = *p.x.lo;
    if (p.x.hi) xr.hi = *p.x.hi;
    if (p.y.lo) yr.lo = *p.y.lo;
    if (p.y.hi) yr.hi = *p.y.hi;
    if (!(xr.hi > xr.lo)) xr = fit_range({}, p.x.scale);
    if (!(yr.hi > yr.lo)) yr = fit_range({}, p.y.scale);

    const std::vector<Tick> xticks = axis_ticks(xr, std::max(2, static_cast<int>((p.max.x - p.min.x) / (70.0f * sc))));
    const std::vector<Tick> yticks = axis_ticks(yr, std::max(2, static_cast<int>((p.max.y - p.min.y) / (40.0f * sc))));

    // --- layout --------------------------------------------------------------------------
    float ylabel_w = 0.0f;
    for (const Tick& t : yticks)
        if (t.major) ylabel_w = std::max(ylabel_w, ImGui::CalcTextSize(t.label.c_str()).x);
    const float pad = 6.0f * sc;
    const float top = p.min.y + pad + (p.title.empty() ? 0.0f : fs + pad);
    const float left = p.min.x + pad + (*p.y.label ? fs + pad : 0.0f) + ylabel_w + pad;
    const float bottom = p.max.y - pad - (*p.x.label ? fs + pad : 0.0f) - fs - pad * 0.5f;
    const float right = p.max.x - 2.0f * pad;
    const ImVec2 a(left, top), b(right, bottom);

    dl->AddRectFilled(p.min, p.max, ImGui::GetColorU32(ImGuiCol_FrameBg), style.FrameRounding);
    dl->AddRectFilled(a, b, IM_COL32(255, 255, 255, 255));
    if (!p.title.empty()) {
        const ImVec2 ts = ImGui::CalcTextSize(p.title.c_str());
        dl->AddText(ImVec2((a.x + b.x - ts.x) * 0.5f, p.min.y + pad), text_col, p.title.c_str());
    }

    // --- grid, ticks and labels ----------------------------------------------------------
    for (const Tick& t : xticks) {
        const float sx = to_screen(xr, t.value, a.x, b.x);
        if (sx < a.x - 0.5f || sx > b.x + 0.5f) continue;
        if (t.major) dl->AddLine(ImVec2(sx, a.y), ImVec2(sx, b.y), grid_col);
        dl->AddLine(ImVec2(sx, b.y), ImVec2(sx, b.y + (t.major ? 5.0f : 3.0f) * sc), axis_col);
        if (t.major) {
            const ImVec2 ts = ImGui::CalcTextSize(t.label.c_str());
            dl->AddText(ImVec2(sx - ts.x * 0.5f, b.y + 6.0f * sc), text_col, t.label.c_str());
        }
    }
    for (const Tick& t : yticks) {
        const float sy = to_screen(yr, t.value, b.y, a.y);
        if (sy < a.y - 0.5f || sy > b.y + 0.5f) continue;
        if (t.major) dl->AddLine(ImVec2(a.x, sy), ImVec2(b.x, sy), grid_col);
        dl->AddLine(ImVec2(a.x - (t.major ? 5.0f : 3.0f) * sc, sy), ImVec2(a.x, sy), axis_col);
        if (t.major) {
            const ImVec2 ts = ImGui::CalcTextSize(t.label.c_str());
            dl->AddText(ImVec2(a.x - 7.0f * sc - ts.x, sy - ts.y * 0.5f), text_col, t.label.c_str());
        }
    }
    dl->AddRect(a, b, axis_col);
    if (*p.x.label) {
        const ImVec2 ts = ImGui::CalcTextSize(p.x.label);
        dl->AddText(ImVec2((a.x + b.x - ts.x) * 0.5f, p.max.y - pad - fs), text_col, p.x.label);
    }
    if (*p.y.label) vertical_text(dl, ImVec2(p.min.x + pad + fs * 0.5f, (a.y + b.y) * 0.5f), text_col, p.y.label);

    // --- series --------------------------------------------------------------------------
    dl->PushClipRect(a, b, true);
    std::vector<ImVec2> pts;
    for (const Series& s : p.series) {
        if (s.hidden) continue;
        const float thick = s.style.thickness * sc;
        switch (s.kind) {
            case Kind::Band: {
                // Adjacent quads with anti-aliased edges would leave faint seams between them.
                const ImDrawListFlags saved = dl->Flags;
                dl->Flags &= ~ImDrawListFlags_AntiAliasedFill;
                for (size_t i = 1; i < s.x.size(); ++i) {
                    if (!drawable(xr, s.x[i - 1]) || !drawable(xr, s.x[i])) continue;
                    const float x0 = to_screen(xr, s.x[i - 1], a.x, b.x), x1 = to_screen(xr, s.x[i], a.x, b.x);
                    // NaN edges are skipped; 0 or inf edges run off the plot.
                    if (std::isnan(s.y[i - 1]) || std::isnan(s.y[i]) || std::isnan(s.y2[i - 1]) || std::isnan(s.y2[i])) continue;
                    const ImVec2 quad[4] = {
                        ImVec2(x0, to_screen(yr, s.y[i - 1], b.y, a.y)), ImVec2(x1, to_screen(yr, s.y[i], b.y, a.y)),
                        ImVec2(x1, to_screen(yr, s.y2[i], b.y, a.y)), ImVec2(x0, to_screen(yr, s.y2[i - 1], b.y, a.y))};
                    dl->AddConvexPolyFilled(quad, 4, with_alpha(s.style.color, 0.30f));
                }
                dl->Flags = saved;
                break;
            }
            case Kind::Bars: {
                const double base = yr.scale == Scale::Log ? yr.lo : 0.0;
                for (size_t i = 0; i < s.x.size(); ++i) {
                    if (!drawable(yr, s.y[i])) continue;
                    const float x0 = to_screen(xr, s.x[i] - s.width * 0.5, a.x, b.x);
                    const float x1 = to_screen(xr, s.x[i] + s.width * 0.5, a.x, b.x);
                    const float y0 = to_screen(yr, base, b.y, a.y), y1 = to_screen(yr, s.y[i], b.y, a.y);
                    dl->AddRectFilled(ImVec2(x0 + 0.5f, std::min(y0, y1)), ImVec2(std::max(x0 + 1.5f, x1 - 0.5f), std::max(y0, y1)),
                                      s.style.color);
                }
                break;
            }
            case Kind::Line:
                pts.clear();
                for (size_t i = 0; i <= s.x.size(); ++i) {
                    const bool ok = i < s.x.size() && drawable(xr, s.x[i]) && drawable(yr, s.y[i]);
                    if (ok) pts.emplace_back(to_screen(xr, s.x[i], a.x, b.x), to_screen(yr, s.y[i], b.y, a.y));
                    if (!ok || i == s.x.size()) {  // a gap (or the end) closes the current run
                        polyline(dl, pts, s.style.color, thick, s.style.dash);
                        pts.clear();
                    }
                }
                if (s.style.markers)
                    for (size_t i = 0; i < s.x.size(); ++i)
                        if (drawable(xr, s.x[i]) && drawable(yr, s.y[i]))
                            dl->AddCircleFilled(ImVec2(to_screen(xr, s.x[i], a.x, b.x), to_screen(yr, s.y[i], b.y, a.y)),
                                                thick * 1.6f, s.style.color);
                break;
            case Kind::VLine: {
                if (!drawable(xr, s.x[0])) break;
                const float sx = to_screen(xr, s.x[0], a.x, b.x);
                polyline(dl, {ImVec2(sx, a.y), ImVec2(sx, b.y)}, s.style.color, thick, s.style.dash);
                break;
            }
            case Kind::Point: {
                if (!drawable(xr, s.x[0]) || !drawable(yr, s.y[0])) break;
                const ImVec2 c(to_screen(xr, s.x[0], a.x, b.x), to_screen(yr, s.y[0], b.y, a.y));
                dl->AddCircleFilled(c, 5.0f * sc, s.style.color);
                dl->AddCircle(c, 5.0f * sc, IM_COL32(0, 0, 0, 200), 0, 1.2f * sc);
                break;
            }
            case Kind::Scatter:
            case Kind::Circle:
            case Kind::Boxes:
            case Kind::ErrorBars: draw_added(dl, s, xr, yr, a, b); break;
        }
    }

    // --- hover read-out --------------------------------------------------------------------
    const ImVec2 mouse = ImGui::GetIO().MousePos;
    const bool in_area = p.hovered && mouse.x >= a.x && mouse.x <= b.x && mouse.y >= a.y && mouse.y <= b.y;
    if (in_area) dl->AddLine(ImVec2(mouse.x, a.y), ImVec2(mouse.x, b.y), IM_COL32(0, 0, 0, 70));
    g_hovered_points.clear();
    for (const Series& s : p.series) {
        if (s.kind != Kind::Scatter || s.hidden || !in_area) continue;
        int best = -1;
        float best_d2 = (s.size + 4.0f) * sc * (s.size + 4.0f) * sc;
        for (size_t i = 0; i < s.x.size(); ++i) {
            if (!drawable(xr, s.x[i]) || !drawable(yr, s.y[i])) continue;
            const float dx = to_screen(xr, s.x[i], a.x, b.x) - mouse.x, dy = to_screen(yr, s.y[i], b.y, a.y) - mouse.y;
            if (dx * dx + dy * dy < best_d2) {
                best_d2 = dx * dx + dy * dy;
                best = static_cast<int>(i);
            }
        }
        if (best >= 0) g_hovered_points.emplace_back(s.label, best);
    }
    dl->PopClipRect();

    // --- legend: the corner that covers the fewest data points; click to hide a series ----
    std::vector<const Series*> entries;
    float legend_w = 0.0f;
    for (const Series& s : p.series) {
        if (s.label.empty() || s.label.rfind("##", 0) == 0) continue;
        entries.push_back(&s);
        legend_w = std::max(legend_w, ImGui::CalcTextSize(s.label.c_str()).x);
    }
    bool legend_hovered = false;
    if (!entries.empty()) {
        const float row = fs + 4.0f * sc, swatch = 22.0f * sc;
        const ImVec2 size(legend_w + swatch + 3.0f * pad, row * entries.size() + pad);
        const ImVec2 corners[4] = {ImVec2(b.x - pad - size.x, a.y + pad), ImVec2(a.x + pad, a.y + pad),
                                   ImVec2(b.x - pad - size.x, b.y - pad - size.y), ImVec2(a.x + pad, b.y - pad - size.y)};
        int best = 0, best_count = 1 << 30;
        for (int c = 0; c < 4; ++c) {
            int count = 0;
            for (const Series& s : p.series)
                for (size_t i = 0; i < s.y.size() && i < s.x.size(); ++i) {
                    const float sx = to_screen(xr, s.x[i], a.x, b.x), sy = to_screen(yr, s.y[i], b.y, a.y);
                    count += sx >= corners[c].x && sx <= corners[c].x + size.x && sy >= corners[c].y && sy <= corners[c].y + size.y;
                }
            if (count < best_count) { best_count = count; best = c; }
        }
        const ImVec2 lmin = corners[best];
        dl->AddRectFilled(lmin, ImVec2(lmin.x + size.x, lmin.y + size.y), IM_COL32(255, 255, 255, 225), 3.0f * sc);
        dl->AddRect(lmin, ImVec2(lmin.x + size.x, lmin.y + size.y), IM_COL32(0, 0, 0, 60), 3.0f * sc);
        for (size_t i = 0; i < entries.size(); ++i) {
            const Series& s = *entries[i];
            const ImVec2 rmin(lmin.x + pad, lmin.y + pad * 0.5f + row * i);
            const ImVec2 rmax(lmin.x + size.x - pad, rmin.y + row);
            const bool over = p.hovered && mouse.x >= rmin.x && mouse.x <= rmax.x && mouse.y >= rmin.y && mouse.y < rmax.y;
            legend_hovered |= over;
            if (over) dl->AddRectFilled(rmin, rmax, IM_COL32(0, 0, 0, 18));
            legend_swatch(dl, s, ImVec2(rmin.x, rmin.y + 2.0f), ImVec2(rmin.x + swatch, rmax.y - 2.0f));
            dl->AddText(ImVec2(rmin.x + swatch + pad, rmin.y + 2.0f), s.hidden ? ImGui::GetColorU32(ImGuiCol_TextDisabled) : text_col,
                        s.label.c_str());
            if (over && ImGui::IsMouseClicked(ImGuiMouseButton_Left))
                ImGui::GetStateStorage()->SetBool(ImHashStr(s.label.c_str(), 0, p.id), !s.hidden);
        }
    }

    if (in_area && !legend_hovered) {
        const double mx = axis_value(xr, (mouse.x - a.x) / (b.x - a.x));
        const double my = axis_value(yr, (b.y - mouse.y) / (b.y - a.y));
        ImGui::BeginTooltip();
        ImGui::TextDisabled("cursor: x = %s, y = %s", format_number(mx, 4).c_str(), format_number(my, 4).c_str());
        for (const Series& s : p.series) {
            size_t i = 0;
            if (s.hidden || s.kind == Kind::VLine || s.kind == Kind::Scatter || s.kind == Kind::Circle || s.label.empty() ||
                !nearest(s, xr, a.x, b.x, mouse.x, i))
                continue;
            ImGui::PushStyleColor(ImGuiCol_Text, s.style.color);
            ImGui::Bullet();
            ImGui::PopStyleColor();
            ImGui::SameLine();
            const char* name = s.label.rfind("##", 0) == 0 ? s.label.c_str() + 2 : s.label.c_str();
            if (s.kind == Kind::Boxes)
                ImGui::Text("%s at x = %s: median %s, box [%s, %s], whiskers [%s, %s]", name, format_number(s.x[i], 4).c_str(),
                            format_number(s.extra[3 * i + 1], 4).c_str(), format_number(s.extra[3 * i], 4).c_str(),
                            format_number(s.extra[3 * i + 2], 4).c_str(), format_number(s.y[i], 4).c_str(),
                            format_number(s.y2[i], 4).c_str());
            else if (s.kind == Kind::Band || s.kind == Kind::ErrorBars)
                ImGui::Text("%s at x = %s: [%s, %s]", name, format_number(s.x[i], 4).c_str(), format_number(s.y[i], 4).c_str(),
                            format_number(s.y2[i], 4).c_str());
            else
                ImGui::Text("%s at x = %s: %s", name, format_number(s.x[i], 4).c_str(), format_number(s.y[i], 6).c_str());
        }
        ImGui::EndTooltip();
    }
    if (legend_hovered) ImGui::SetMouseCursor(ImGuiMouseCursor_Hand);
    export_controls(p, capturing);
    g_plot.series.clear();
}

// --- more series kinds ---------------------------------------------------------------------

namespace {

void marker_shape(ImDrawList* dl, ImVec2 c, float r, Marker m, ImU32 col) {
    switch (m) {
        case Marker::Circle: dl->AddCircleFilled(c, r, col, 12); break;
        case Marker::Square: dl->AddRectFilled(ImVec2(c.x - r * 0.85f, c.y - r * 0.85f), ImVec2(c.x + r * 0.85f, c.y + r * 0.85f), col); break;
        case Marker::Triangle:
            dl->AddTriangleFilled(ImVec2(c.x, c.y - r * 1.15f), ImVec2(c.x - r, c.y + r * 0.75f), ImVec2(c.x + r, c.y + r * 0.75f), col);
            break;
        case Marker::Diamond: dl->AddQuadFilled(ImVec2(c.x, c.y - r * 1.3f), ImVec2(c.x + r, c.y), ImVec2(c.x, c.y + r * 1.3f), ImVec2(c.x - r, c.y), col); break;
        case Marker::Cross: {
            const float t = std::max(1.5f, r * 0.45f);
            dl->AddLine(ImVec2(c.x - r, c.y - r), ImVec2(c.x + r, c.y + r), col, t);
            dl->AddLine(ImVec2(c.x - r, c.y + r), ImVec2(c.x + r, c.y - r), col, t);
            break;
        }
    }
}

// x position of a box's edge: width in x units, or a factor on a log axis.
double box_edge(const AxisRange& xr, double x, double width, int side) {
    if (xr.scale == Scale::Log) return side < 0 ? x / std::sqrt(width) : x * std::sqrt(width);
    return x + side * width * 0.5;
}

void draw_swatch_added(ImDrawList* dl, const Series& s, ImVec2 a, ImVec2 b) {
    const ImVec2 c((a.x + b.x) * 0.5f, (a.y + b.y) * 0.5f);
    const float sc = ui_scale();
    switch (s.kind) {
        case Kind::Scatter:
            marker_shape(dl, c, s.size * sc, s.marker, s.style.color);
            if (s.ring) dl->AddCircle(c, (s.size + 3.0f) * sc, colors::black, 16, 1.5f * sc);
            break;
        case Kind::Circle:
            dl->AddCircleFilled(c, (b.y - a.y) * 0.45f, with_alpha(s.style.color, 0.15f));
            dl->AddCircle(c, (b.y - a.y) * 0.45f, s.style.color, 0, 1.5f * sc);
            break;
        case Kind::Boxes:
            dl->AddRectFilled(ImVec2(a.x + 5, a.y + 2), ImVec2(b.x - 5, b.y - 2), with_alpha(s.style.color, 0.35f));
            dl->AddRect(ImVec2(a.x + 5, a.y + 2), ImVec2(b.x - 5, b.y - 2), s.style.color);
            break;
        default:
            dl->AddLine(ImVec2(c.x, a.y + 1), ImVec2(c.x, b.y - 1), s.style.color, 1.5f * sc);
            dl->AddLine(ImVec2(c.x - 4 * sc, a.y + 1), ImVec2(c.x + 4 * sc, a.y + 1), s.style.color, 1.5f * sc);
            dl->AddLine(ImVec2(c.x - 4 * sc, b.y - 1), ImVec2(c.x + 4 * sc, b.y - 1), s.style.color, 1.5f * sc);
            break;
    }
}

void draw_added(ImDrawList* dl, const Series& s, const AxisRange& xr, const AxisRange& yr, ImVec2 a, ImVec2 b) {
    const float sc = ui_scale();
    const auto X = [&](double v) { return to_screen(xr, v, a.x, b.x); };
    const auto Y = [&](double v) { return to_screen(yr, v, b.y, a.y); };
    switch (s.kind) {
        case Kind::Scatter:
            for (size_t i = 0; i < s.x.size(); ++i) {
                if (!drawable(xr, s.x[i]) || !drawable(yr, s.y[i])) continue;
                const ImVec2 c(X(s.x[i]), Y(s.y[i]));
                marker_shape(dl, c, s.size * sc, s.marker, s.style.color);
                if (s.ring) dl->AddCircle(c, (s.size + 3.0f) * sc, colors::black, 16, 1.5f * sc);
            }
            break;
        case Kind::Circle: {
            std::vector<ImVec2> pts;
            for (int k = 0; k <= 96; ++k) {
                const double t = 2.0 * 3.14159265358979323846 * k / 96.0;
                pts.emplace_back(X(s.x[0] + s.width * std::cos(t)), Y(s.y[0] + s.width * std::sin(t)));
            }
            dl->AddConvexPolyFilled(pts.data(), static_cast<int>(pts.size()) - 1, with_alpha(s.style.color, 0.12f));
            dl->AddPolyline(pts.data(), static_cast<int>(pts.size()), s.style.color, ImDrawFlags_None, 1.5f * sc);
            break;
        }
        case Kind::Boxes:
            for (size_t i = 0; i < s.x.size(); ++i) {
                const double q1 = s.extra[3 * i], med = s.extra[3 * i + 1], q3 = s.extra[3 * i + 2];
                if (!drawable(xr, s.x[i]) || !std::isfinite(med)) continue;
                const float x0 = X(box_edge(xr, s.x[i], s.width, -1)), x1 = X(box_edge(xr, s.x[i], s.width, 1)), xm = X(s.x[i]);
                const float cap = (x1 - x0) * 0.25f;
                dl->AddLine(ImVec2(xm, Y(s.y[i])), ImVec2(xm, Y(q1)), s.style.color, 1.0f * sc);
                dl->AddLine(ImVec2(xm, Y(q3)), ImVec2(xm, Y(s.y2[i])), s.style.color, 1.0f * sc);
                dl->AddLine(ImVec2(xm - cap, Y(s.y[i])), ImVec2(xm + cap, Y(s.y[i])), s.style.color, 1.0f * sc);
                dl->AddLine(ImVec2(xm - cap, Y(s.y2[i])), ImVec2(xm + cap, Y(s.y2[i])), s.style.color, 1.0f * sc);
                const ImVec2 lo(x0, std::min(Y(q1), Y(q3))), hi(std::max(x0 + 1.0f, x1), std::max(Y(q1), Y(q3)));
                dl->AddRectFilled(lo, hi, with_alpha(s.style.color, 0.35f));
                dl->AddRect(lo, hi, s.style.color, 0.0f, 0, 1.0f * sc);
                dl->AddLine(ImVec2(x0, Y(med)), ImVec2(x1, Y(med)), colors::black, 2.0f * sc);
            }
            break;
        case Kind::ErrorBars:
            for (size_t i = 0; i < s.x.size(); ++i) {
                if (!drawable(xr, s.x[i]) || !drawable(yr, s.y[i]) || !drawable(yr, s.y2[i])) continue;
                const float x = X(s.x[i]), cap = 3.0f * sc;
                dl->AddLine(ImVec2(x, Y(s.y[i])), ImVec2(x, Y(s.y2[i])), s.style.color, 1.5f * sc);
                dl->AddLine(ImVec2(x - cap, Y(s.y[i])), ImVec2(x + cap, Y(s.y[i])), s.style.color, 1.5f * sc);
                dl->AddLine(ImVec2(x - cap, Y(s.y2[i])), ImVec2(x + cap, Y(s.y2[i])), s.style.color, 1.5f * sc);
            }
            break;
        default: break;
    }
}

}  // namespace

void scatter(const char* label, std::span<const double> x, std::span<const double> y, ImU32 color, Marker marker, float size,
             bool ring) {
    Series& s = add(Kind::Scatter, label, {color});
    const size_t n = std::min(x.size(), y.size());
    s.x.assign(x.begin(), x.begin() + n);
    s.y.assign(y.begin(), y.begin() + n);
    s.marker = marker;
    s.size = size;
    s.ring = ring;
}

void circle(const char* label, double cx, double cy, double r, ImU32 color) {
    Series& s = add(Kind::Circle, label, {color});
    s.x = {cx};
    s.y = {cy};
    s.width = r;
}

void boxes(const char* label, std::span<const double> x, std::span<const double> lo, std::span<const double> q1,
           std::span<const double> median, std::span<const double> q3, std::span<const double> hi, double width, ImU32 color) {
    Series& s = add(Kind::Boxes, label, {color});
    const size_t n = std::min({x.size(), lo.size(), q1.size(), median.size(), q3.size(), hi.size()});
    s.x.assign(x.begin(), x.begin() + n);
    s.y.assign(lo.begin(), lo.begin() + n);
    s.y2.assign(hi.begin(), hi.begin() + n);
    for (size_t i = 0; i < n; ++i) s.extra.insert(s.extra.end(), {q1[i], median[i], q3[i]});
    s.width = width;
}

void error_bars(const char* label, std::span<const double> x, std::span<const double> lo, std::span<const double> hi, ImU32 color) {
    Series& s = add(Kind::ErrorBars, label, {color});
    const size_t n = std::min({x.size(), lo.size(), hi.size()});
    s.x.assign(x.begin(), x.begin() + n);
    s.y.assign(lo.begin(), lo.begin() + n);
    s.y2.assign(hi.begin(), hi.begin() + n);
}

int hovered_point(const char* label) {
    for (const auto& [name, index] : g_hovered_points)
        if (name == label) return index;
    return -1;
}

// --- export: PNG of the plot's region, CSV of its buffered series ---------------------------

void set_file_export(FileExport* file_export) { g_export.file_export = file_export; }
void set_widget_rects(WidgetRects* rects) { g_export.widgets = rects; }
bool export_pending() { return g_export.capture_id != 0 || g_export.menu_appearing; }

namespace {

// "attention map" / "##fade" -> "attention-map" / "fade": a file and widget name.
std::string slug(std::string_view text) {
    std::string out;
    for (char c : text) {
        const bool alnum = (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9');
        if (alnum) out += c;
        else if (c >= 'A' && c <= 'Z') out += static_cast<char>(c - 'A' + 'a');
        else if (!out.empty() && out.back() != '-') out += '-';
        if (out.size() >= 48) break;
    }
    while (!out.empty() && out.back() == '-') out.pop_back();
    return out.empty() ? "plot" : out;
}

// Shortest of %.15g / %.17g that reads back exactly; empty for NaN (a gap), as CSV readers expect.
std::string csv_number(double v) {
    if (std::isnan(v)) return "";
    if (std::isinf(v)) return v > 0 ? "inf" : "-inf";
    char buf[32];
    std::snprintf(buf, sizeof buf, "%.15g", v);
    if (std::strtod(buf, nullptr) != v) std::snprintf(buf, sizeof buf, "%.17g", v);
    return buf;
}

std::string csv_field(std::string_view s) {
    if (s.find_first_of(",\"\n\r") == std::string_view::npos) return std::string(s);
    std::string out = "\"";
    for (char c : s) {
        if (c == '"') out += '"';
        out += c;
    }
    return out + "\"";
}

const char* kind_name(Kind k) {
    switch (k) {
        case Kind::Line: return "line";
        case Kind::Band: return "band";
        case Kind::Bars: return "bars";
        case Kind::VLine: return "vline";
        case Kind::Point: return "point";
        case Kind::Scatter: return "scatter";
        case Kind::Circle: return "circle";
        case Kind::Boxes: return "boxes";
        case Kind::ErrorBars: return "error_bars";
    }
    return "series";
}

// Tidy CSV: one row per data point. y2 is a band's or error bar's upper edge, a box's upper
// whisker (y its lower) or a circle's radius; q1, median, q3 only for boxes.
void append_csv(std::string& csv, const std::vector<Series>& series) {
    bool boxes = false;
    for (const Series& s : series) boxes |= s.kind == Kind::Boxes;
    csv += boxes ? "series,kind,x,y,y2,q1,median,q3\n" : "series,kind,x,y,y2\n";
    for (const Series& s : series) {
        const std::string label = csv_field(s.label.rfind("##", 0) == 0 ? s.label.substr(2) : s.label);
        for (size_t i = 0; i < s.x.size(); ++i) {
            csv.append(label).append(",").append(kind_name(s.kind)).append(",").append(csv_number(s.x[i])).append(",");
            if (i < s.y.size()) csv += csv_number(s.y[i]);
            csv += ',';
            if (s.kind == Kind::Circle) csv += csv_number(s.width);
            else if (i < s.y2.size()) csv += csv_number(s.y2[i]);
            if (boxes) {
                for (int k = 0; k < 3; ++k) {
                    csv += ',';
                    if (s.kind == Kind::Boxes && 3 * i + k < s.extra.size()) csv += csv_number(s.extra[3 * i + k]);
                }
            }
            csv += '\n';
        }
    }
}

// The "↓" button in the plot's corner (while hovered) and the export menu it and a right-click
// open. A PNG is taken one frame later, with the menu, tooltip and button out of the picture.
void export_controls(OpenPlot& p, bool capturing) {
    FileExport* fx = g_export.file_export;
    if (!fx) return;
    const std::string name = slug(!p.title.empty() ? std::string_view(p.title) : std::string_view(p.label));
    if (capturing) {
        fx->save_png("attnlab-" + name + ".png", PixelRect{p.min.x, p.min.y, p.max.x - p.min.x, p.max.y - p.min.y});
        g_export.capture_id = 0;
        return;
    }
    const float sc = ui_scale(), bs = ImGui::GetFontSize() * 1.25f;
    const ImVec2 bmin(p.max.x - bs - 3.0f * sc, p.min.y + 3.0f * sc), bmax(bmin.x + bs, bmin.y + bs);
    if (g_export.widgets) (*g_export.widgets)["plot." + name + ".export"] = WidgetRect{bmin.x, bmin.y, bs, bs};
    ImGui::PushID(static_cast<int>(p.id));
    const bool menu_open = ImGui::IsPopupOpen("##plot_export");
    if (p.hovered || menu_open) {
        const ImVec2 mouse = ImGui::GetIO().MousePos;
        const bool over = p.hovered && mouse.x >= bmin.x && mouse.x <= bmax.x && mouse.y >= bmin.y && mouse.y <= bmax.y;
        ImDrawList* dl = ImGui::GetWindowDrawList();
        dl->AddRectFilled(bmin, bmax, over ? IM_COL32(210, 225, 240, 255) : IM_COL32(255, 255, 255, 230), 3.0f * sc);
        dl->AddRect(bmin, bmax, IM_COL32(0, 0, 0, 90), 3.0f * sc);
        // A download sign: an arrow down onto a tray.
        const float cx = (bmin.x + bmax.x) * 0.5f, t = 1.5f * sc;
        const ImU32 ink = IM_COL32(0, 0, 0, 200);
        dl->AddLine(ImVec2(cx, bmin.y + bs * 0.2f), ImVec2(cx, bmin.y + bs * 0.62f), ink, t);
        dl->AddTriangleFilled(ImVec2(cx - bs * 0.2f, bmin.y + bs * 0.5f), ImVec2(cx + bs * 0.2f, bmin.y + bs * 0.5f),
                              ImVec2(cx, bmin.y + bs * 0.72f), ink);
        dl->AddLine(ImVec2(bmin.x + bs * 0.22f, bmin.y + bs * 0.8f), ImVec2(bmax.x - bs * 0.22f, bmin.y + bs * 0.8f), ink, t);
        if (over) {
            ImGui::SetTooltip("Export this plot (PNG picture or CSV data); right-click the plot for the same menu");
            if (ImGui::IsMouseClicked(ImGuiMouseButton_Left)) ImGui::OpenPopup("##plot_export");
        }
    }
    if (ImGui::BeginPopup("##plot_export")) {
        g_export.menu_frame = ImGui::GetFrameCount();
        // On its first frame a popup is measured, then moved to fit the screen: its items'
        // places are final from the second frame on (export_pending() asks for that frame).
        g_export.menu_appearing = ImGui::IsWindowAppearing();
        WidgetRects* rects = g_export.menu_appearing ? nullptr : g_export.widgets;
        ImGui::TextDisabled("%s", name.c_str());
        bool chosen = false;
        if (ImGui::MenuItem("Export PNG")) {
            g_export.capture_id = p.id;
            chosen = true;
        }
        if (rects) remember_last_item(*rects, "plot.export_png");
        if (ImGui::MenuItem("Export CSV")) {
            std::string csv;
            append_csv(csv, p.series);
            fx->save_text("attnlab-" + name + ".csv", "text/csv", csv);
            chosen = true;
        }
        if (rects) remember_last_item(*rects, "plot.export_csv");
        // The menu closes now; scripts must not aim at its items any more.
        if (chosen && g_export.widgets) {
            g_export.widgets->erase("plot.export_png");
            g_export.widgets->erase("plot.export_csv");
        }
        ImGui::EndPopup();
    } else if (g_export.menu_frame != ImGui::GetFrameCount()) {
        // No menu open this frame (so far): scripts must not aim at a closed menu's items.
        g_export.menu_appearing = false;
        if (g_export.widgets) {
            g_export.widgets->erase("plot.export_png");
            g_export.widgets->erase("plot.export_csv");
        }
    }
    ImGui::PopID();
}

}  // namespace

}  // namespace attnlab::plot
