// The plot kit's series kinds. Each has a section with its ingest (the public function that
// buffers it), its draw and its legend swatch; draw_series() and draw_swatch() dispatch on the kind.
//
// [SECTION] Shared renderers
// [SECTION] Buffering
// [SECTION] Line
// [SECTION] Band
// [SECTION] Bars
// [SECTION] Vertical line
// [SECTION] Point
// [SECTION] Scatter
// [SECTION] Circle
// [SECTION] Boxes
// [SECTION] Dispatch: fit, draw, swatch, hover read-out, CSV kind
#include <imgui_internal.h>  // ImHashStr

#include <algorithm>
#include <cmath>
#include <numbers>

#include "app/plot/plot_internal.h"

namespace attnlab::plot {

namespace detail {

// [SECTION] Shared renderers --------------------------------------------------------------------

float ui_scale() { return ImGui::GetFontSize() / 15.0f; }

ImU32 with_alpha(ImU32 color, float alpha) {
    ImVec4 c = ImGui::ColorConvertU32ToFloat4(color);
    c.w *= alpha;
    return ImGui::ColorConvertFloat4ToU32(c);
}

float to_screen(const AxisRange& axis, double v, float a, float b) {
    double f = axis_fraction(axis, v);
    if (std::isnan(f)) f = 0.0;
    f = std::clamp(f, -4.0, 5.0);
    return a + static_cast<float>(f) * (b - a);
}

float DataArea::X(double v) const { return to_screen(xr, v, a.x, b.x); }
float DataArea::Y(double v) const { return to_screen(yr, v, b.y, a.y); }

bool drawable(const AxisRange& axis, double v) { return std::isfinite(v) && (axis.scale == Scale::Linear || v > 0.0); }

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

namespace {

void marker_shape(ImDrawList* dl, ImVec2 c, float r, Marker m, ImU32 col) {
    switch (m) {
        case Marker::Circle: dl->AddCircleFilled(c, r, col, 12); break;
        case Marker::Square:
            dl->AddRectFilled(ImVec2(c.x - r * 0.85f, c.y - r * 0.85f), ImVec2(c.x + r * 0.85f, c.y + r * 0.85f), col);
            break;
        case Marker::Triangle:
            dl->AddTriangleFilled(ImVec2(c.x, c.y - r * 1.15f), ImVec2(c.x - r, c.y + r * 0.75f), ImVec2(c.x + r, c.y + r * 0.75f), col);
            break;
        case Marker::Diamond:
            dl->AddQuadFilled(ImVec2(c.x, c.y - r * 1.3f), ImVec2(c.x + r, c.y), ImVec2(c.x, c.y + r * 1.3f), ImVec2(c.x - r, c.y), col);
            break;
        case Marker::Cross: {
            const float t = std::max(1.5f, r * 0.45f);
            dl->AddLine(ImVec2(c.x - r, c.y - r), ImVec2(c.x + r, c.y + r), col, t);
            dl->AddLine(ImVec2(c.x - r, c.y + r), ImVec2(c.x + r, c.y - r), col, t);
            break;
        }
    }
}

// A swatch's middle row, for the kinds whose swatch is a line or a dot.
float mid_row(ImVec2 a, ImVec2 b) { return (a.y + b.y) * 0.5f; }

}  // namespace

// [SECTION] Buffering ---------------------------------------------------------------------------

Series& add_series(Kind kind, const char* label, LineStyle style) {
    Series& s = g_plot.series.emplace_back();
    s.kind = kind;
    s.label = label ? label : "";
    s.style = style;
    const ImGuiID key = ImHashStr(s.label.c_str(), 0, g_plot.id);
    s.hidden = ImGui::GetStateStorage()->GetBool(key, false);
    return s;
}

namespace {

// x and y, cut to the shorter.
void take_xy(Series& s, std::span<const double> x, std::span<const double> y) {
    const size_t n = std::min(x.size(), y.size());
    s.x.assign(x.begin(), x.begin() + n);
    s.y.assign(y.begin(), y.begin() + n);
}

// x with a lower and an upper value each (a band's edges, a box's whiskers), cut to the shortest.
void take_x_lo_hi(Series& s, std::span<const double> x, std::span<const double> lo, std::span<const double> hi, size_t n) {
    s.x.assign(x.begin(), x.begin() + n);
    s.y.assign(lo.begin(), lo.begin() + n);
    s.y2.assign(hi.begin(), hi.begin() + n);
}

// [SECTION] Line ---------------------------------------------------------------------------------

void draw_line(ImDrawList* dl, const Series& s, const DataArea& d) {
    const float thick = s.style.thickness * ui_scale();
    std::vector<ImVec2> pts;
    for (size_t i = 0; i <= s.x.size(); ++i) {
        const bool ok = i < s.x.size() && drawable(d.xr, s.x[i]) && drawable(d.yr, s.y[i]);
        if (ok) pts.emplace_back(d.X(s.x[i]), d.Y(s.y[i]));
        if (!ok || i == s.x.size()) {  // a gap (or the end) closes the current run
            polyline(dl, pts, s.style.color, thick, s.style.dash);
            pts.clear();
        }
    }
    if (s.style.markers)
        for (size_t i = 0; i < s.x.size(); ++i)
            if (drawable(d.xr, s.x[i]) && drawable(d.yr, s.y[i]))
                dl->AddCircleFilled(ImVec2(d.X(s.x[i]), d.Y(s.y[i])), thick * 1.6f, s.style.color);
}

void swatch_line(ImDrawList* dl, const Series& s, ImVec2 a, ImVec2 b) {
    const float mid = mid_row(a, b);
    polyline(dl, {ImVec2(a.x, mid), ImVec2(b.x, mid)}, s.style.color, s.style.thickness * ui_scale(), s.style.dash);
}

// [SECTION] Band ---------------------------------------------------------------------------------

void draw_band(ImDrawList* dl, const Series& s, const DataArea& d) {
    // Adjacent quads with anti-aliased edges would leave faint seams between them.
    const ImDrawListFlags saved = dl->Flags;
    dl->Flags &= ~ImDrawListFlags_AntiAliasedFill;
    for (size_t i = 1; i < s.x.size(); ++i) {
        if (!drawable(d.xr, s.x[i - 1]) || !drawable(d.xr, s.x[i])) continue;
        const float x0 = d.X(s.x[i - 1]), x1 = d.X(s.x[i]);
        // NaN edges are skipped; 0 or inf edges run off the plot.
        if (std::isnan(s.y[i - 1]) || std::isnan(s.y[i]) || std::isnan(s.y2[i - 1]) || std::isnan(s.y2[i])) continue;
        const ImVec2 quad[4] = {ImVec2(x0, d.Y(s.y[i - 1])), ImVec2(x1, d.Y(s.y[i])), ImVec2(x1, d.Y(s.y2[i])),
                                ImVec2(x0, d.Y(s.y2[i - 1]))};
        dl->AddConvexPolyFilled(quad, 4, with_alpha(s.style.color, 0.30f));
    }
    dl->Flags = saved;
}

void swatch_band(ImDrawList* dl, const Series& s, ImVec2 a, ImVec2 b) {
    dl->AddRectFilled(ImVec2(a.x, a.y + 2), ImVec2(b.x, b.y - 2), with_alpha(s.style.color, 0.35f));
}

// [SECTION] Bars ---------------------------------------------------------------------------------

void draw_bars(ImDrawList* dl, const Series& s, const DataArea& d) {
    const double base = d.yr.scale == Scale::Log ? d.yr.lo : 0.0;
    for (size_t i = 0; i < s.x.size(); ++i) {
        if (!drawable(d.yr, s.y[i])) continue;
        const float x0 = d.X(s.x[i] - s.width * 0.5), x1 = d.X(s.x[i] + s.width * 0.5);
        const float y0 = d.Y(base), y1 = d.Y(s.y[i]);
        dl->AddRectFilled(ImVec2(x0 + 0.5f, std::min(y0, y1)), ImVec2(std::max(x0 + 1.5f, x1 - 0.5f), std::max(y0, y1)), s.style.color);
    }
}

void swatch_bars(ImDrawList* dl, const Series& s, ImVec2 a, ImVec2 b) {
    dl->AddRectFilled(ImVec2(a.x + 4, a.y + 2), ImVec2(b.x - 4, b.y - 2), s.style.color);
}

// [SECTION] Vertical line ----------------------------------------------------------------------

void draw_vline(ImDrawList* dl, const Series& s, const DataArea& d) {
    if (!drawable(d.xr, s.x[0])) return;
    const float sx = d.X(s.x[0]);
    polyline(dl, {ImVec2(sx, d.a.y), ImVec2(sx, d.b.y)}, s.style.color, s.style.thickness * ui_scale(), s.style.dash);
}

// [SECTION] Point --------------------------------------------------------------------------------

void draw_point(ImDrawList* dl, const Series& s, const DataArea& d) {
    if (!drawable(d.xr, s.x[0]) || !drawable(d.yr, s.y[0])) return;
    const float sc = ui_scale();
    const ImVec2 c(d.X(s.x[0]), d.Y(s.y[0]));
    dl->AddCircleFilled(c, 5.0f * sc, s.style.color);
    dl->AddCircle(c, 5.0f * sc, IM_COL32(0, 0, 0, 200), 0, 1.2f * sc);
}

void swatch_point(ImDrawList* dl, const Series& s, ImVec2 a, ImVec2 b) {
    dl->AddCircleFilled(ImVec2((a.x + b.x) * 0.5f, mid_row(a, b)), 4.0f * ui_scale(), s.style.color);
}

// [SECTION] Scatter ------------------------------------------------------------------------------

// A marker, ringed when the series asks for it.
void scatter_marker(ImDrawList* dl, const Series& s, ImVec2 c) {
    const float sc = ui_scale();
    marker_shape(dl, c, s.size * sc, s.marker, s.style.color);
    if (s.ring) dl->AddCircle(c, (s.size + 3.0f) * sc, colors::black, 16, 1.5f * sc);
}

void draw_scatter(ImDrawList* dl, const Series& s, const DataArea& d) {
    for (size_t i = 0; i < s.x.size(); ++i)
        if (drawable(d.xr, s.x[i]) && drawable(d.yr, s.y[i])) scatter_marker(dl, s, ImVec2(d.X(s.x[i]), d.Y(s.y[i])));
}

void swatch_scatter(ImDrawList* dl, const Series& s, ImVec2 a, ImVec2 b) {
    scatter_marker(dl, s, ImVec2((a.x + b.x) * 0.5f, mid_row(a, b)));
}

// [SECTION] Circle -------------------------------------------------------------------------------

void draw_circle(ImDrawList* dl, const Series& s, const DataArea& d) {
    std::vector<ImVec2> pts;
    for (int k = 0; k <= 96; ++k) {
        const double t = 2.0 * std::numbers::pi * k / 96.0;
        pts.emplace_back(d.X(s.x[0] + s.width * std::cos(t)), d.Y(s.y[0] + s.width * std::sin(t)));
    }
    dl->AddConvexPolyFilled(pts.data(), static_cast<int>(pts.size()) - 1, with_alpha(s.style.color, 0.12f));
    dl->AddPolyline(pts.data(), static_cast<int>(pts.size()), s.style.color, ImDrawFlags_None, 1.5f * ui_scale());
}

void swatch_circle(ImDrawList* dl, const Series& s, ImVec2 a, ImVec2 b) {
    const ImVec2 c((a.x + b.x) * 0.5f, mid_row(a, b));
    dl->AddCircleFilled(c, (b.y - a.y) * 0.45f, with_alpha(s.style.color, 0.15f));
    dl->AddCircle(c, (b.y - a.y) * 0.45f, s.style.color, 0, 1.5f * ui_scale());
}

// [SECTION] Boxes --------------------------------------------------------------------------------

// x position of a box's edge: width in x units, or a factor on a log axis.
double box_edge(const AxisRange& xr, double x, double width, int side) {
    if (xr.scale == Scale::Log) return side < 0 ? x / std::sqrt(width) : x * std::sqrt(width);
    return x + side * width * 0.5;
}

void draw_boxes(ImDrawList* dl, const Series& s, const DataArea& d) {
    const float sc = ui_scale();
    const auto Y = [&](double v) { return d.Y(v); };
    for (size_t i = 0; i < s.x.size(); ++i) {
        const double q1 = s.extra[3 * i], med = s.extra[3 * i + 1], q3 = s.extra[3 * i + 2];
        if (!drawable(d.xr, s.x[i]) || !std::isfinite(med)) continue;
        const float x0 = d.X(box_edge(d.xr, s.x[i], s.width, -1)), x1 = d.X(box_edge(d.xr, s.x[i], s.width, 1)), xm = d.X(s.x[i]);
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
}

void swatch_boxes(ImDrawList* dl, const Series& s, ImVec2 a, ImVec2 b) {
    dl->AddRectFilled(ImVec2(a.x + 5, a.y + 2), ImVec2(b.x - 5, b.y - 2), with_alpha(s.style.color, 0.35f));
    dl->AddRect(ImVec2(a.x + 5, a.y + 2), ImVec2(b.x - 5, b.y - 2), s.style.color);
}

}  // namespace

// [SECTION] Dispatch: fit, draw, swatch, hover read-out, CSV kind --------------------------------

void fit_values(const Series& s, Scale y_scale, std::vector<double>& xs, std::vector<double>& ys) {
    xs.insert(xs.end(), s.x.begin(), s.x.end());
    if (s.kind != Kind::VLine) ys.insert(ys.end(), s.y.begin(), s.y.end());
    ys.insert(ys.end(), s.y2.begin(), s.y2.end());
    if (s.kind == Kind::Bars) {
        for (double x : s.x) xs.insert(xs.end(), {x - s.width * 0.5, x + s.width * 0.5});
        if (y_scale == Scale::Linear) ys.push_back(0.0);  // bars stand on 0
    }
    if (s.kind == Kind::Circle) {
        xs.insert(xs.end(), {s.x[0] - s.width, s.x[0] + s.width});
        ys.insert(ys.end(), {s.y[0] - s.width, s.y[0] + s.width});
    }
}

void draw_series(ImDrawList* dl, const Series& s, const DataArea& area) {
    switch (s.kind) {
        case Kind::Line: draw_line(dl, s, area); break;
        case Kind::Band: draw_band(dl, s, area); break;
        case Kind::Bars: draw_bars(dl, s, area); break;
        case Kind::VLine: draw_vline(dl, s, area); break;
        case Kind::Point: draw_point(dl, s, area); break;
        case Kind::Scatter: draw_scatter(dl, s, area); break;
        case Kind::Circle: draw_circle(dl, s, area); break;
        case Kind::Boxes: draw_boxes(dl, s, area); break;
    }
}

void draw_swatch(ImDrawList* dl, const Series& s, ImVec2 a, ImVec2 b) {
    switch (s.kind) {
        case Kind::Line:
        case Kind::VLine: swatch_line(dl, s, a, b); break;
        case Kind::Band: swatch_band(dl, s, a, b); break;
        case Kind::Bars: swatch_bars(dl, s, a, b); break;
        case Kind::Point: swatch_point(dl, s, a, b); break;
        case Kind::Scatter: swatch_scatter(dl, s, a, b); break;
        case Kind::Circle: swatch_circle(dl, s, a, b); break;
        case Kind::Boxes: swatch_boxes(dl, s, a, b); break;
    }
}

bool reads_out(Kind k) { return k != Kind::VLine && k != Kind::Scatter && k != Kind::Circle; }

void hover_line(const Series& s, size_t i, const char* name) {
    if (s.kind == Kind::Boxes)
        ImGui::Text("%s at x = %s: median %s, box [%s, %s], whiskers [%s, %s]", name, format_number(s.x[i], 4).c_str(),
                    format_number(s.extra[3 * i + 1], 4).c_str(), format_number(s.extra[3 * i], 4).c_str(),
                    format_number(s.extra[3 * i + 2], 4).c_str(), format_number(s.y[i], 4).c_str(), format_number(s.y2[i], 4).c_str());
    else if (s.kind == Kind::Band)
        ImGui::Text("%s at x = %s: [%s, %s]", name, format_number(s.x[i], 4).c_str(), format_number(s.y[i], 4).c_str(),
                    format_number(s.y2[i], 4).c_str());
    else ImGui::Text("%s at x = %s: %s", name, format_number(s.x[i], 4).c_str(), format_number(s.y[i], 6).c_str());
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
    }
    return "series";
}

}  // namespace detail

// The public ingest functions, one per kind (plot.h).
using namespace detail;

void line(const char* label, std::span<const double> x, std::span<const double> y, LineStyle style) {
    take_xy(add_series(Kind::Line, label, style), x, y);
}

void band(const char* label, std::span<const double> x, std::span<const double> lo, std::span<const double> hi, ImU32 color) {
    take_x_lo_hi(add_series(Kind::Band, label, {color}), x, lo, hi, std::min({x.size(), lo.size(), hi.size()}));
}

void bars(const char* label, std::span<const double> x, std::span<const double> y, double width, ImU32 color) {
    Series& s = add_series(Kind::Bars, label, {color});
    take_xy(s, x, y);
    s.width = width;
}

void vline(const char* label, double x, LineStyle style) { add_series(Kind::VLine, label, style).x = {x}; }

void point(const char* label, double x, double y, ImU32 color) {
    Series& s = add_series(Kind::Point, label, {color});
    s.x = {x};
    s.y = {y};
}

void scatter(const char* label, std::span<const double> x, std::span<const double> y, ImU32 color, Marker marker, float size, bool ring) {
    Series& s = add_series(Kind::Scatter, label, {color});
    take_xy(s, x, y);
    s.marker = marker;
    s.size = size;
    s.ring = ring;
}

void circle(const char* label, double cx, double cy, double r, ImU32 color) {
    Series& s = add_series(Kind::Circle, label, {color});
    s.x = {cx};
    s.y = {cy};
    s.width = r;
}

void boxes(const char* label, std::span<const double> x, std::span<const double> lo, std::span<const double> q1,
           std::span<const double> median, std::span<const double> q3, std::span<const double> hi, double width, ImU32 color) {
    Series& s = add_series(Kind::Boxes, label, {color});
    const size_t n = std::min({x.size(), lo.size(), q1.size(), median.size(), q3.size(), hi.size()});
    take_x_lo_hi(s, x, lo, hi, n);
    for (size_t i = 0; i < n; ++i) s.extra.insert(s.extra.end(), {q1[i], median[i], q3[i]});
    s.width = width;
}

int hovered_point(const char* label) {
    for (const auto& [name, index] : g_hovered_points)
        if (name == label) return index;
    return -1;
}

}  // namespace attnlab::plot
