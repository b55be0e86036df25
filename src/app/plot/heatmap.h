#pragma once
// A heatmap kit next to the plot kit: a sequential colour-blind-safe palette, a grid of cells
// drawn as merged runs, the hatch of a causal map's blank triangle, and a labelled colour bar.
//
//   heatmap::CellRuns runs = heatmap::cell_runs(cells, rows, cols, vmax);   // when the data change
//   heatmap::draw_runs(dl, runs, p0, p1);                                    // every frame
//   heatmap::draw_color_bar(dl, bar0, bar1, vmax, "attention weight");
//
// Why runs: WebGL builds of ImGui 1.86 index vertices with 16 bits, so one window's draw list
// holds at most 65536 vertices (16384 rectangles). Neighbouring cells of the same colour level
// are merged into one rectangle, and callers keep a map under kMaxRuns (pooling it if needed).
#include <imgui.h>

#include <span>
#include <vector>

namespace attnlab::heatmap {

// A viridis-like palette computed in OKLab: lightness rises steadily from 0.27 (dark blue-violet)
// to 0.95 (yellow) while the hue turns through teal and green, so the order survives
// red-green colour blindness and grey-scale printing. t in [0, 1] (clamped).
ImU32 sequential_color(double t);

// Colours are quantised to this many levels before merging (the colour bar shows the same).
inline constexpr int kLevels = 64;
// A budget for one map's rectangles, leaving room in its window's draw list.
inline constexpr int kMaxRuns = 12000;

struct CellRuns {
    int rows = 0, cols = 0;
    struct Run {
        int row, c0, c1;  // cells [c0, c1) of `row`
        ImU32 color;
    };
    std::vector<Run> runs;
};

// Runs of (rows, cols) row-major `cells` coloured by value / vmax; NaN cells are left out (blank).
CellRuns cell_runs(std::span<const float> cells, int rows, int cols, float vmax);

// Draws the runs stretched over the rectangle p0..p1 (row 0 at the top).
void draw_runs(ImDrawList* dl, const CellRuns& runs, ImVec2 p0, ImVec2 p1);

// Diagonal hatching of the triangle above the diagonal of the square-ish p0..p1 (the keys a
// causal query cannot see), `spacing` pixels apart.
void draw_upper_hatch(ImDrawList* dl, ImVec2 p0, ImVec2 p1, ImU32 color, float spacing);

// A vertical colour bar filling p0..p1, 0 at the bottom and vmax at the top, with ticks and
// numbers to its right and `label` above it.
void draw_color_bar(ImDrawList* dl, ImVec2 p0, ImVec2 p1, double vmax, const char* label);

// The same bar lying down under a map on a narrow screen (so that the map keeps the width):
// 0 at the left and vmax at the right, numbers under it, `label` and the maximum above it.
void draw_color_bar_across(ImDrawList* dl, ImVec2 p0, ImVec2 p1, double vmax, const char* label);

}  // namespace attnlab::heatmap
