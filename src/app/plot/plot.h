#pragma once
// A small plot kit on ImDrawList: axes with ticks, linear or log scales, lines, bands, bars,
// markers, points, circles and box plots, a legend (click an entry to hide its series), a hover
// read-out, and export (PNG and CSV) from every plot.
//
// [SECTION] Colours
// [SECTION] Axes and styles
// [SECTION] begin() and end()
// [SECTION] Series kinds
// [SECTION] After end(): what the mouse is over
// [SECTION] Axes for drawings that are not plots
// [SECTION] Export
// [SECTION] Tables of values
//
// The contract, as ImGui windows have it:
//
//   if (plot::begin("##fade", size, {"context length L", plot::Scale::Log}, {"weight", plot::Scale::Log})) {
//       plot::band("Lemma 1 band", xs, lo, hi, plot::colors::sky);
//       plot::line("max weight", xs, ys, {plot::colors::blue});
//       plot::end();
//   }
//
// - Call end() only when begin() returned true (false: the plot is clipped away).
// - Series are buffered between begin() and end(), so the axes can fit the data before
//   anything is drawn; the caller's spans only need to live until the call returns.
// - A label starting with "##" has no legend entry; labels also name the series in the CSV.
// - The code: plot.cpp (begin, end in stages), plot_items.cpp (one section per series kind),
//   plot_export.cpp (the export menu), plot_axis.h (the arithmetic, without ImGui).
#include <imgui.h>

#include <optional>
#include <span>
#include <vector>

#include "app/file_export.h"
#include "app/plot/plot_axis.h"
#include "app/widget_rects.h"

namespace attnlab::plot {

// [SECTION] Colours ---------------------------------------------------------------------------

// Okabe-Ito: distinguishable under the common colour-vision deficiencies.
namespace colors {
inline constexpr ImU32 black = IM_COL32(0, 0, 0, 255);
inline constexpr ImU32 orange = IM_COL32(230, 159, 0, 255);
inline constexpr ImU32 sky = IM_COL32(86, 180, 233, 255);
inline constexpr ImU32 green = IM_COL32(0, 158, 115, 255);
inline constexpr ImU32 yellow = IM_COL32(240, 228, 66, 255);
inline constexpr ImU32 blue = IM_COL32(0, 114, 178, 255);
inline constexpr ImU32 vermillion = IM_COL32(213, 94, 0, 255);
inline constexpr ImU32 purple = IM_COL32(204, 121, 167, 255);
inline constexpr ImU32 grey = IM_COL32(120, 120, 120, 255);
}  // namespace colors

// [SECTION] Axes and styles -------------------------------------------------------------------

struct Axis {
    const char* label = "";
    Scale scale = Scale::Linear;
    std::optional<double> lo = {};  // fixed ends; unset ends fit the data
    std::optional<double> hi = {};
    double max_decades = 12.0;  // log axes: how far below the top the fitted range may reach
};

enum class Dash { Solid, Dashed, Dotted };

struct LineStyle {
    ImU32 color = colors::blue;
    Dash dash = Dash::Solid;
    float thickness = 2.0f;  // in unscaled pixels; multiplied by the UI scale
    bool markers = false;
};

enum class Marker { Circle, Square, Triangle, Diamond, Cross };

// [SECTION] begin() and end() ------------------------------------------------------------------

// Starts a plot filling `size` (0 = available width/height). Returns false when clipped away;
// call end() only when it returned true.
bool begin(const char* id, ImVec2 size, const Axis& x, const Axis& y, const char* title = nullptr);
// Draws everything buffered since begin().
void end();

// [SECTION] Series kinds -----------------------------------------------------------------------

void line(const char* label, std::span<const double> x, std::span<const double> y, LineStyle style = {});
// Shaded region between lo and hi (alpha applied to `color`).
void band(const char* label, std::span<const double> x, std::span<const double> lo, std::span<const double> hi, ImU32 color);
// Bars from the bottom of the axis (or from 0 on linear axes) up to y, `width` in x units.
void bars(const char* label, std::span<const double> x, std::span<const double> y, double width, ImU32 color);
// A vertical marker at x, e.g. the current value of a slider.
void vline(const char* label, double x, LineStyle style = {colors::grey, Dash::Dashed, 1.5f});
// A single highlighted point.
void point(const char* label, double x, double y, ImU32 color);

// Points without a line, `size` the marker's radius in unscaled pixels. ring: a black ring
// around each (e.g. "distinguishable"). After end(), hovered_point(label) says which one is
// under the mouse.
void scatter(const char* label, std::span<const double> x, std::span<const double> y, ImU32 color, Marker marker = Marker::Circle,
             float size = 4.0f, bool ring = false);
// A circle of radius r in data units around (cx, cy), outlined and faintly filled. It is round
// on screen only when both axes have the same scale per pixel (the caller's ranges decide).
void circle(const char* label, double cx, double cy, double r, ImU32 color);
// Tukey box plots at x: whiskers from lo to hi, a box from q1 to q3, a line at the median;
// `width` in x units (on a log x axis, a factor: the box spans x / width^0.5 .. x * width^0.5).
void boxes(const char* label, std::span<const double> x, std::span<const double> lo, std::span<const double> q1,
           std::span<const double> median, std::span<const double> q3, std::span<const double> hi, double width, ImU32 color);

// [SECTION] After end(): what the mouse is over ------------------------------------------------

// After end(): the index of the point of scatter series `label` under the mouse in the plot
// ended last, or -1.
int hovered_point(const char* label);

// [SECTION] Axes for drawings that are not plots ----------------------------------------------

// An axis along the bottom, left or right edge of the rectangle a..b (the range's lo at the left
// or the bottom), drawn as the plots draw theirs: every tick (the majors longer, with their
// labels) and, with `grid`, the majors' lines across. For pictures the kit does not draw itself:
// the attention map's heatmap and its colour bar.
enum class Edge { Bottom, Left, Right };
void draw_axis(ImDrawList* dl, const AxisRange& range, const std::vector<Tick>& ticks, ImVec2 a, ImVec2 b, Edge edge, bool grid);

// [SECTION] Export -------------------------------------------------------------------------------

// Export: every plot gets a download button in its corner (while hovered) and a right-click
// menu, "Export PNG" (its region of the window, at device resolution) and "Export CSV" (the
// buffered series, tidy: series,kind,x,y,y2[,q1,median,q3]). Set once per frame by the app;
// null = no export (the button and menu are not shown). With widget rects, the button is
// recorded as "plot.<name>.export" and the menu items as "plot.export_png" / "plot.export_csv".
void set_file_export(FileExport* file_export);
void set_widget_rects(WidgetRects* rects);
// True while a PNG waits for the next frame: the platform must draw one (app_busy).
bool export_pending();

// [SECTION] Tables of values ---------------------------------------------------------------------

// A two-column table of values: the names wrap in the room the values leave, and a value keeps to
// one line (a number split at its decimal point reads as two; issue 35). Rows: table_row; then
// ImGui::EndTable() when it returned true.
bool begin_values_table(const char* id, ImGuiTableFlags flags = ImGuiTableFlags_RowBg);

// One row of a two-column table of values: the name, then the values printed with fmt.
template <typename... V>
void table_row(const char* name, const char* fmt, V... values) {
    ImGui::TableNextRow();
    ImGui::TableNextColumn();
    ImGui::PushTextWrapPos(0.0f);  // the column's edge
    ImGui::TextUnformatted(name);
    ImGui::PopTextWrapPos();
    ImGui::TableNextColumn();
    ImGui::PushTextWrapPos(-1.0f);
    ImGui::Text(fmt, values...);
    ImGui::PopTextWrapPos();
}

}  // namespace attnlab::plot
