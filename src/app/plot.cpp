#include "app/plot.h"

#include <imgui_internal.h>  // ImHashStr, GetItemID

#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

namespace attnlab::plot {
namespace {

enum class Kind { Line, Band, Bars, VLine, Point };

struct Series {
    Kind kind;
    std::string label;
    std::vector<double> x, y, y2;  // y2: the upper edge of a band
    LineStyle style;
    double width = 0.0;  // bar width in x units
    bool hidden = false;
};

// One plot is open at a time, like an ImGui window between Begin and End.
struct OpenPlot {
    ImGuiID id = 0;
    std::string title;
    Axis x, y;
    ImVec2 min, max;
    bool hovered = false;
    std::vector<Series> series;
};
OpenPlot g_plot;

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

void legend_swatch(ImDrawList* dl, const Series& s, ImVec2 a, ImVec2 b) {
    const float mid = (a.y + b.y) * 0.5f;
    const float thick = s.style.thickness * ui_scale();
    switch (s.kind) {
        case Kind::Line:
        case Kind::VLine: polyline(dl, {ImVec2(a.x, mid), ImVec2(b.x, mid)}, s.style.color, thick, s.style.dash); break;
        case Kind::Band: dl->AddRectFilled(ImVec2(a.x, a.y + 2), ImVec2(b.x, b.y - 2), with_alpha(s.style.color, 0.35f)); break;
        case Kind::Bars: dl->AddRectFilled(ImVec2(a.x + 4, a.y + 2), ImVec2(b.x - 4, b.y - 2), s.style.color); break;
        case Kind::Point: dl->AddCircleFilled(ImVec2((a.x + b.x) * 0.5f, mid), 4.0f * ui_scale(), s.style.color); break;
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
        }
    }

    // --- hover read-out --------------------------------------------------------------------
    const ImVec2 mouse = ImGui::GetIO().MousePos;
    const bool in_area = p.hovered && mouse.x >= a.x && mouse.x <= b.x && mouse.y >= a.y && mouse.y <= b.y;
    if (in_area) dl->AddLine(ImVec2(mouse.x, a.y), ImVec2(mouse.x, b.y), IM_COL32(0, 0, 0, 70));
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
            if (s.hidden || s.kind == Kind::VLine || s.label.empty() || !nearest(s, xr, a.x, b.x, mouse.x, i)) continue;
            ImGui::PushStyleColor(ImGuiCol_Text, s.style.color);
            ImGui::Bullet();
            ImGui::PopStyleColor();
            ImGui::SameLine();
            const char* name = s.label.rfind("##", 0) == 0 ? s.label.c_str() + 2 : s.label.c_str();
            if (s.kind == Kind::Band)
                ImGui::Text("%s at x = %s: [%s, %s]", name, format_number(s.x[i], 4).c_str(), format_number(s.y[i], 4).c_str(),
                            format_number(s.y2[i], 4).c_str());
            else
                ImGui::Text("%s at x = %s: %s", name, format_number(s.x[i], 4).c_str(), format_number(s.y[i], 6).c_str());
        }
        ImGui::EndTooltip();
    }
    if (legend_hovered) ImGui::SetMouseCursor(ImGuiMouseCursor_Hand);
    g_plot.series.clear();
}

}  // namespace attnlab::plot
