#pragma once
// The arithmetic half of the plot kit: axis mapping, ranges and tick marks.
// No ImGui here, so the tests can check it directly.
#include <span>
#include <string>
#include <vector>

namespace attnlab::plot {

enum class Scale { Linear, Log };

struct AxisRange {
    double lo = 0.0;
    double hi = 1.0;
    Scale scale = Scale::Linear;
};

// Position of v along the axis: 0 at lo, 1 at hi. Log axes map log10(v); v <= 0 gives -inf.
double axis_fraction(const AxisRange& axis, double v);
// Inverse of axis_fraction.
double axis_value(const AxisRange& axis, double fraction);

// The smallest range that holds every finite value (positive ones only on a log axis),
// padded by `pad` of its span on each side (in log space on a log axis). On a log axis the
// range is cut to at most `max_decades` below its top, so that one vanishing value does not
// squash every other curve into the top of the plot. Falls back to [0, 1] / [0.1, 10].
AxisRange fit_range(std::span<const double> values, Scale scale, double pad = 0.05, double max_decades = 12.0);

struct Tick {
    double value;
    bool major;         // majors get a label and a grid line
    std::string label;  // empty for minor ticks
};

// "Nice" tick marks: multiples of 1, 2 or 5 x 10^k on linear axes, at most about
// `max_major` of them; decades (with 2..9 minors when there is room) on log axes.
std::vector<Tick> axis_ticks(const AxisRange& axis, int max_major = 6);

// Compact label for a number: "0.25", "1000", "1e-05" -> "1e-5".
std::string format_number(double v, int significant = 4);

}  // namespace attnlab::plot
