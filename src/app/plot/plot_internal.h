#pragma once
// The plot kit's insides, shared by its three files (as ImPlot's implot_internal.h):
//   plot.cpp         begin() and end(): fit, layout, grid, series, hover, legend
//   plot_items.cpp   each series kind: its ingest (the public function), draw and legend swatch
//   plot_export.cpp  the export button and menu: CSV of the series, PNG of the plot's region
// Not for the panels: they include plot.h.
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "app/plot/plot.h"

namespace attnlab::plot::detail {

enum class Kind { Line, Band, Bars, VLine, Point, Scatter, Circle, Boxes };

// One series, buffered between begin() and end().
struct Series {
    Kind kind;
    std::string label;
    std::vector<double> x, y, y2;  // y2: a band's upper edge, a box's upper whisker (y its lower)
    LineStyle style;
    double width = 0.0;  // bar width in x units; circle radius; box width
    bool hidden = false;
    std::vector<double> extra;  // boxes: q1, median, q3 per point
    Marker marker = Marker::Circle;
    float size = 4.0f;
    bool ring = false;
};

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
extern OpenPlot g_plot;

// Scatter points under the mouse in the plot ended last: (label, index).
extern std::vector<std::pair<std::string, int>> g_hovered_points;

// The data area on screen and its axes: where the series are drawn.
struct DataArea {
    AxisRange xr, yr;
    ImVec2 a, b;  // top-left and bottom-right corners
    // Screen position of a data value (see to_screen).
    float X(double v) const;
    float Y(double v) const;
};

// --- shared renderers ---------------------------------------------------------------------------
// Everything scales with the font, which the platform sizes for the screen's pixel ratio.
float ui_scale();
ImU32 with_alpha(ImU32 color, float alpha);
// Screen position of a data value, kept within a few plot sizes of the plot so that vanishing or
// exploding values (0 or inf on a log axis) still draw as off-scale edges.
float to_screen(const AxisRange& axis, double v, float a, float b);
// A value the axis can place: finite, and positive on a log axis.
bool drawable(const AxisRange& axis, double v);
void polyline(ImDrawList* dl, const std::vector<ImVec2>& pts, ImU32 col, float thick, Dash dash);

// --- series kinds (plot_items.cpp) ----------------------------------------------------------------
// A new series of `kind` in the open plot; hidden when the reader clicked its legend entry.
Series& add_series(Kind kind, const char* label, LineStyle style);
// The values the axes must hold for the series to show whole.
void fit_values(const Series& s, Scale y_scale, std::vector<double>& xs, std::vector<double>& ys);
void draw_series(ImDrawList* dl, const Series& s, const DataArea& area);
void draw_swatch(ImDrawList* dl, const Series& s, ImVec2 a, ImVec2 b);
// Whether the hover read-out has a line for a series of this kind (a marker, points or a shape
// has no value at a column), and that line for point i.
bool reads_out(Kind k);
void hover_line(const Series& s, size_t i, const char* name);
// "line", "band", ...: the CSV's kind column.
const char* kind_name(Kind k);

// --- export (plot_export.cpp) ------------------------------------------------------------------
// Where exports go (set by the app every frame), and the plot whose PNG is due this frame.
struct ExportState {
    FileExport* file_export = nullptr;
    WidgetRects* widgets = nullptr;
    ImGuiID capture_id = 0;
    int menu_frame = -1;          // the frame an export menu was last drawn
    bool menu_appearing = false;  // its first frame: sized but not yet placed
};
extern ExportState g_export;
// "attention map" / "##fade" -> "attention-map" / "fade": a file and widget name.
std::string slug(std::string_view text);
// Tidy CSV of the series: series,kind,x,y,y2[,q1,median,q3].
void append_csv(std::string& csv, const std::vector<Series>& series);
// The "↓" button in the plot's corner (while hovered), the menu it and a right-click open, and
// the PNG due this frame.
void export_controls(OpenPlot& p, bool capturing);

}  // namespace attnlab::plot::detail
