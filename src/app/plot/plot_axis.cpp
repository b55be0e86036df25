#include "app/plot/plot_axis.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <limits>

namespace attnlab::plot {

double axis_fraction(const AxisRange& axis, double v) {
    if (axis.scale == Scale::Log) {
        if (!(v > 0.0)) return -std::numeric_limits<double>::infinity();
        return (std::log10(v) - std::log10(axis.lo)) / (std::log10(axis.hi) - std::log10(axis.lo));
    }
    return (v - axis.lo) / (axis.hi - axis.lo);
}

double axis_value(const AxisRange& axis, double fraction) {
    if (axis.scale == Scale::Log) {
        const double a = std::log10(axis.lo), b = std::log10(axis.hi);
        return std::pow(10.0, a + fraction * (b - a));
    }
    return axis.lo + fraction * (axis.hi - axis.lo);
}

AxisRange fit_range(std::span<const double> values, Scale scale, double pad, double max_decades) {
    double lo = std::numeric_limits<double>::infinity();
    double hi = -lo;
    for (double v : values) {
        if (!std::isfinite(v) || (scale == Scale::Log && v <= 0.0)) continue;
        lo = std::min(lo, v);
        hi = std::max(hi, v);
    }
    if (scale == Scale::Log) {
        if (!(lo <= hi)) return {0.1, 10.0, scale};
        double a = std::log10(lo), b = std::log10(hi);
        a = std::max(a, b - max_decades);
        if (b - a < 1e-9) {
            a -= 0.5;
            b += 0.5;
        }
        const double p = (b - a) * pad;
        return {std::pow(10.0, a - p), std::pow(10.0, b + p), scale};
    }
    if (!(lo <= hi)) return {0.0, 1.0, scale};
    if (hi - lo < 1e-12 * std::max(1.0, std::abs(hi))) {
        const double half = std::max(0.5, std::abs(hi) * 0.1);
        lo -= half;
        hi += half;
    }
    const double p = (hi - lo) * pad;
    return {lo - p, hi + p, scale};
}

std::string format_number(double v, int significant) {
    if (v == 0.0) return "0";
    if (std::isnan(v)) return "nan";
    if (std::isinf(v)) return v > 0 ? "inf" : "-inf";
    char buf[48];
    std::snprintf(buf, sizeof buf, "%.*g", significant, v);
    // Tidy C's exponent: 1e-05 -> 1e-5, 2e+06 -> 2e6.
    std::string s(buf);
    const size_t e = s.find('e');
    if (e != std::string::npos) {
        std::string mant = s.substr(0, e);
        std::string exp = s.substr(e + 1);
        const bool neg = !exp.empty() && exp[0] == '-';
        if (!exp.empty() && (exp[0] == '-' || exp[0] == '+')) exp.erase(0, 1);
        exp.erase(0, std::min(exp.find_first_not_of('0'), exp.size() - 1));
        s = mant + "e" + (neg ? "-" : "") + exp;
    }
    return s;
}

namespace {

std::vector<Tick> linear_ticks(double lo, double hi, int max_major) {
    std::vector<Tick> ticks;
    const double span = hi - lo;
    if (!(span > 0.0) || !std::isfinite(span)) return ticks;
    // The finest 1-2-5 step that keeps the tick count within max_major.
    const double mag = std::pow(10.0, std::floor(std::log10(span / std::max(1, max_major))));
    double step = mag;
    for (double m : {1.0, 2.0, 5.0, 10.0, 20.0}) {
        step = m * mag;
        const double count = std::floor(hi / step + 1e-9) - std::ceil(lo / step - 1e-9) + 1.0;
        if (count <= std::max(1, max_major)) break;
    }
    const double first = std::ceil(lo / step - 1e-9);
    const double last = std::floor(hi / step + 1e-9);
    for (double k = first; k <= last; k += 1.0) {
        double v = k * step;
        if (std::abs(v) < step * 1e-9) v = 0.0;  // no "-0" or 1e-17
        // Print with as many decimals as the step needs, so 0.1 + 0.2 shows as 0.3.
        char buf[48];
        const int decimals = std::max(0, -static_cast<int>(std::floor(std::log10(step) + 1e-9)));
        if (std::abs(v) >= 1e5 || (v != 0.0 && std::abs(v) < 1e-4)) {
            ticks.push_back({v, true, format_number(v, 3)});
        } else {
            std::snprintf(buf, sizeof buf, "%.*f", decimals, v);
            ticks.push_back({v, true, buf});
        }
    }
    return ticks;
}

}  // namespace

std::vector<Tick> axis_ticks(const AxisRange& axis, int max_major) {
    if (axis.scale == Scale::Linear) return linear_ticks(axis.lo, axis.hi, max_major);

    std::vector<Tick> ticks;
    if (!(axis.lo > 0.0) || !(axis.hi > axis.lo)) return ticks;
    const double a = std::log10(axis.lo), b = std::log10(axis.hi);
    const int first = static_cast<int>(std::ceil(a - 1e-9));
    const int last = static_cast<int>(std::floor(b + 1e-9));
    const int decades = last - first + 1;
    if (decades < 2) {
        // Less than two decades in view: decade marks alone would leave the axis bare.
        for (Tick t : linear_ticks(axis.lo, axis.hi, max_major))
            if (t.value > 0.0) ticks.push_back(t);
        return ticks;
    }
    const int stride = std::max(1, (decades + max_major - 1) / std::max(1, max_major));
    const bool minors = stride == 1 && decades <= 8;
    for (int k = first - 1; k <= last; ++k) {
        const double base = std::pow(10.0, k);
        if (k >= first && (k - first) % stride == 0) ticks.push_back({base, true, format_number(base, 6)});
        else if (k >= first) ticks.push_back({base, false, {}});
        if (!minors) continue;
        for (int m = 2; m <= 9; ++m) {
            const double v = m * base;
            if (v >= axis.lo && v <= axis.hi) ticks.push_back({v, false, {}});
        }
    }
    std::sort(ticks.begin(), ticks.end(), [](const Tick& x, const Tick& y) { return x.value < y.value; });
    return ticks;
}

}  // namespace attnlab::plot
