#include "app/plot/heatmap.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <numbers>
#include <string>
#include <vector>

#include "app/plot/plot.h"

namespace attnlab::heatmap {

namespace {

struct Rgb {
    double r, g, b;
};

// OKLab (Ottosson 2020) to linear sRGB.
Rgb oklab_to_linear_srgb(double L, double a, double b) {
    const double l_ = L + 0.3963377774 * a + 0.2158037573 * b;
    const double m_ = L - 0.1055613458 * a - 0.0638541728 * b;
    const double s_ = L - 0.0894841775 * a - 1.2914855480 * b;
    const double l = l_ * l_ * l_, m = m_ * m_ * m_, s = s_ * s_ * s_;
    return {+4.0767416621 * l - 3.3077115913 * m + 0.2309699292 * s, -1.2684380046 * l + 2.6097574011 * m - 0.3413193965 * s,
            -0.0041960863 * l - 0.7034186147 * m + 1.7076147010 * s};
}

double srgb_encode(double c) {  // linear -> the sRGB transfer curve
    return c <= 0.0031308 ? 12.92 * c : 1.055 * std::pow(c, 1.0 / 2.4) - 0.055;
}

bool in_gamut(const Rgb& c) {
    constexpr double e = 1e-9;
    return c.r >= -e && c.r <= 1 + e && c.g >= -e && c.g <= 1 + e && c.b >= -e && c.b <= 1 + e;
}

// The palette at t: lightness 0.27 -> 0.95, hue 290 deg (blue-violet) -> 105 deg (yellow), the
// chroma the path asks for, reduced (never the lightness or hue) until it fits inside sRGB.
ImU32 compute_color(double t) {
    const double L = 0.27 + 0.68 * t;
    const double hue = (290.0 - 185.0 * t) * std::numbers::pi / 180.0;
    double lo = 0.0, hi = 0.09 + 0.09 * t;
    Rgb rgb = oklab_to_linear_srgb(L, hi * std::cos(hue), hi * std::sin(hue));
    if (!in_gamut(rgb)) {
        for (int it = 0; it < 40; ++it) {  // bisection on chroma; chroma 0 (grey) is always in gamut
            const double mid = 0.5 * (lo + hi);
            (in_gamut(oklab_to_linear_srgb(L, mid * std::cos(hue), mid * std::sin(hue))) ? lo : hi) = mid;
        }
        rgb = oklab_to_linear_srgb(L, lo * std::cos(hue), lo * std::sin(hue));
    }
    const auto byte = [](double c) {
        return static_cast<int>(std::lround(255.0 * std::clamp(srgb_encode(std::clamp(c, 0.0, 1.0)), 0.0, 1.0)));
    };
    return IM_COL32(byte(rgb.r), byte(rgb.g), byte(rgb.b), 255);
}

const std::array<ImU32, 256>& palette() {
    static const std::array<ImU32, 256> table = [] {
        std::array<ImU32, 256> t{};
        for (int i = 0; i < 256; ++i) t[static_cast<size_t>(i)] = compute_color(i / 255.0);
        return t;
    }();
    return table;
}

ImU32 level_color(int level) {  // level in 0..kLevels-1
    return palette()[static_cast<size_t>(std::lround(255.0 * level / (kLevels - 1)))];
}

}  // namespace

ImU32 sequential_color(double t) {
    if (!(t >= 0.0)) t = 0.0;  // also NaN
    return palette()[static_cast<size_t>(std::lround(255.0 * std::min(t, 1.0)))];
}

CellRuns cell_runs(std::span<const float> cells, int rows, int cols, float vmax) {
    CellRuns out;
    out.rows = rows;
    out.cols = cols;
    const float scale = vmax > 0.0f ? (kLevels - 1) / vmax : 0.0f;
    for (int r = 0; r < rows; ++r) {
        const float* row = cells.data() + static_cast<size_t>(r) * cols;
        int c = 0;
        while (c < cols) {
            if (std::isnan(row[c])) {
                ++c;
                continue;
            }
            const int level = std::clamp(static_cast<int>(std::lround(row[c] * scale)), 0, kLevels - 1);
            int end = c + 1;
            while (end < cols && !std::isnan(row[end]) &&
                   std::clamp(static_cast<int>(std::lround(row[end] * scale)), 0, kLevels - 1) == level)
                ++end;
            out.runs.push_back({r, c, end, level_color(level)});
            c = end;
        }
    }
    return out;
}

void draw_runs(ImDrawList* dl, const CellRuns& runs, ImVec2 p0, ImVec2 p1) {
    if (runs.rows == 0 || runs.cols == 0) return;
    const float cw = (p1.x - p0.x) / runs.cols, ch = (p1.y - p0.y) / runs.rows;
    for (const CellRuns::Run& r : runs.runs)
        dl->AddRectFilled(ImVec2(p0.x + r.c0 * cw, p0.y + r.row * ch), ImVec2(p0.x + r.c1 * cw, p0.y + (r.row + 1) * ch), r.color);
}

void draw_upper_hatch(ImDrawList* dl, ImVec2 p0, ImVec2 p1, ImU32 color, float spacing) {
    // Lines parallel to the diagonal, from the top edge to the right edge.
    const float w = p1.x - p0.x, h = p1.y - p0.y;
    if (w <= 0 || h <= 0 || spacing <= 0) return;
    for (float k = spacing; k < w; k += spacing) {
        const float f = k / w;  // fraction of the width from the left
        dl->AddLine(ImVec2(p0.x + k, p0.y), ImVec2(p1.x, p1.y - f * h), color, 1.0f);
    }
}

void draw_color_bar(ImDrawList* dl, ImVec2 p0, ImVec2 p1, double vmax, const char* label) {
    const ImU32 ink = ImGui::GetColorU32(ImGuiCol_Text);
    const float h = p1.y - p0.y;
    constexpr int segments = kLevels;
    for (int i = 0; i < segments; ++i) {
        // Segment i shows level i: the colour a cell of that quantised value gets.
        const float y_bottom = p1.y - h * i / segments, y_top = p1.y - h * (i + 1) / segments;
        dl->AddRectFilled(ImVec2(p0.x, y_top), ImVec2(p1.x, y_bottom + 0.5f), level_color(i * (kLevels - 1) / (segments - 1)));
    }
    dl->AddRect(p0, p1, ink);
    const ImVec2 label_size = ImGui::CalcTextSize(label);
    dl->AddText(ImVec2(p0.x, p0.y - label_size.y - ImGui::GetFontSize() * 0.8f), ink, label);
    if (!(vmax > 0.0)) return;
    const plot::AxisRange axis{0.0, vmax, plot::Scale::Linear};
    std::vector<plot::Tick> ticks = plot::axis_ticks(axis, 5);
    std::erase_if(ticks, [&](const plot::Tick& t) {  // a label there would overlap the "max" label
        return p1.y - static_cast<float>(plot::axis_fraction(axis, t.value)) * h < p0.y + ImGui::GetFontSize();
    });
    plot::draw_axis(dl, axis, ticks, p0, p1, plot::Edge::Right, false);
    const float tick = ImGui::GetFontSize() * 0.3f;
    // The top is the actual maximum, which the nice ticks rarely hit: label it too.
    std::string top = "max ";
    top += plot::format_number(vmax, 3);
    dl->AddLine(ImVec2(p1.x, p0.y), ImVec2(p1.x + 2 * tick, p0.y), ink, 2.0f);
    dl->AddText(ImVec2(p1.x + 2 * tick + 2.0f, p0.y - ImGui::GetFontSize() * 0.5f), ink, top.c_str());
}

void draw_color_bar_across(ImDrawList* dl, ImVec2 p0, ImVec2 p1, double vmax, const char* label) {
    const ImU32 ink = ImGui::GetColorU32(ImGuiCol_Text);
    const float w = p1.x - p0.x, font = ImGui::GetFontSize();
    for (int i = 0; i < kLevels; ++i)
        dl->AddRectFilled(ImVec2(p0.x + w * i / kLevels, p0.y), ImVec2(p0.x + w * (i + 1) / kLevels + 0.5f, p1.y), level_color(i));
    dl->AddRect(p0, p1, ink);
    dl->AddText(ImVec2(p0.x, p0.y - font * 1.2f), ink, label);
    if (!(vmax > 0.0)) return;
    const plot::AxisRange axis{0.0, vmax, plot::Scale::Linear};
    std::vector<plot::Tick> ticks = plot::axis_ticks(axis, 4);
    const std::string top = "max " + plot::format_number(vmax, 3);
    const float top_w = ImGui::CalcTextSize(top.c_str()).x;
    std::erase_if(ticks, [&](const plot::Tick& t) {  // a number there would overlap the "max" label
        return p0.x + static_cast<float>(plot::axis_fraction(axis, t.value)) * w > p1.x - top_w * 0.5f - font;
    });
    plot::draw_axis(dl, axis, ticks, p0, p1, plot::Edge::Bottom, false);
    dl->AddText(ImVec2(p1.x - top_w, p0.y - font * 1.2f), ink, top.c_str());
}

}  // namespace attnlab::heatmap
