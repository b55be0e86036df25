#include <catch2/catch.hpp>

#include <cmath>
#include <string>
#include <vector>

#include "app/plot/plot_axis.h"

using namespace attnlab::plot;

static std::vector<std::string> major_labels(const std::vector<Tick>& ticks) {
    std::vector<std::string> out;
    for (const Tick& t : ticks)
        if (t.major) out.push_back(t.label);
    return out;
}

TEST_CASE("linear ticks are multiples of 1, 2 or 5 with clean labels", "[plot]") {
    CHECK(major_labels(axis_ticks({0.0, 1.0, Scale::Linear}, 6)) == std::vector<std::string>{"0.0", "0.2", "0.4", "0.6", "0.8", "1.0"});
    CHECK(major_labels(axis_ticks({0.0, 100.0, Scale::Linear}, 6)) == std::vector<std::string>{"0", "20", "40", "60", "80", "100"});
    CHECK(major_labels(axis_ticks({-0.3, 0.3, Scale::Linear}, 4)) == std::vector<std::string>{"-0.2", "0.0", "0.2"});
    CHECK(major_labels(axis_ticks({0.5, 32.5, Scale::Linear}, 6)) == std::vector<std::string>{"5", "10", "15", "20", "25", "30"});
}

TEST_CASE("log ticks mark decades, with minor ticks when there is room", "[plot]") {
    const auto t = axis_ticks({0.01, 100.0, Scale::Log}, 6);
    CHECK(major_labels(t) == std::vector<std::string>{"0.01", "0.1", "1", "10", "100"});
    int minors = 0;
    for (const Tick& x : t) minors += !x.major;
    CHECK(minors == 4 * 8);  // 2..9 in each of the four decades
    // Thirteen decade marks do not fit six labels; every second would be seven, so every third.
    const auto wide = major_labels(axis_ticks({1e-12, 1.0, Scale::Log}, 6));
    CHECK(wide == std::vector<std::string>{"1e-12", "1e-9", "1e-6", "0.001", "1"});
}

TEST_CASE("axis mapping is linear in v or in log10 v", "[plot]") {
    CHECK(axis_fraction({0.01, 100.0, Scale::Log}, 1.0) == Approx(0.5));
    CHECK(axis_fraction({0.01, 100.0, Scale::Log}, 10.0) == Approx(0.75));
    CHECK(std::isinf(axis_fraction({0.01, 100.0, Scale::Log}, 0.0)));
    CHECK(axis_fraction({-1.0, 3.0, Scale::Linear}, 0.0) == Approx(0.25));
    CHECK(axis_value({0.01, 100.0, Scale::Log}, 0.25) == Approx(0.1));
    CHECK(axis_value({-1.0, 3.0, Scale::Linear}, 0.5) == Approx(1.0));
}

TEST_CASE("fit_range ignores what the axis cannot show and caps log ranges", "[plot]") {
    const std::vector<double> v = {0.0, 1e-40, 1e-3, 10.0, INFINITY, NAN};
    const AxisRange r = fit_range(v, Scale::Log, 0.0, 12.0);
    CHECK(r.hi == Approx(10.0));
    CHECK(r.lo == Approx(1e-11));  // 12 decades below the top, not 1e-40
    const AxisRange lin = fit_range(std::vector<double>{2.0, 4.0}, Scale::Linear, 0.5);
    CHECK(lin.lo == Approx(1.0));
    CHECK(lin.hi == Approx(5.0));
    const AxisRange empty = fit_range(std::vector<double>{}, Scale::Log);
    CHECK(empty.lo < empty.hi);
}

TEST_CASE("format_number writes short exponents", "[plot]") {
    CHECK(format_number(1e-5) == "1e-5");
    CHECK(format_number(2e6) == "2e6");
    CHECK(format_number(0.25) == "0.25");
    CHECK(format_number(0.0) == "0");
    CHECK(format_number(-1.5e-12, 3) == "-1.5e-12");
}
