// The CLI's option reader: what a typo or a bad number in --eps, --Ns or --ids turns into.
#include <catch2/catch.hpp>

#include <string>
#include <vector>

#include "main/cli/cli_args.h"

namespace {

attnlab::CliArgs parse(std::vector<std::string> words) {
    std::vector<char*> argv;
    for (std::string& w : words) argv.push_back(w.data());
    attnlab::CliArgs a;
    std::string error;
    REQUIRE(a.parse(static_cast<int>(argv.size()), argv.data(), 0, {"eps", "ids", "T"}, {"quiet"}, error));
    return a;
}

}  // namespace

TEST_CASE("cli args: unknown options and missing values are errors", "[cli]") {
    std::string w1 = "--epss", w2 = "1", w3 = "--eps";
    char* typo[] = {w1.data(), w2.data()};
    char* missing[] = {w3.data()};
    attnlab::CliArgs a;
    std::string error;
    CHECK_FALSE(a.parse(2, typo, 0, {"eps"}, {}, error));
    CHECK(error == "unknown option '--epss'");
    CHECK_FALSE(a.parse(1, missing, 0, {"eps"}, {}, error));
    CHECK(error == "option --eps needs a value");
}

TEST_CASE("cli args: lists of numbers", "[cli]") {
    std::string error;
    std::vector<double> eps;
    CHECK(parse({"--eps", "0.001,0.1,1e1"}).get_double_list("eps", 1e-12, 1e6, eps, error));
    CHECK(eps == std::vector<double>{0.001, 0.1, 10.0});
    CHECK(parse({"--quiet"}).get_double_list("eps", 0, 1, eps, error));
    CHECK(eps.empty());

    CHECK_FALSE(parse({"--eps", "0.1,,2"}).get_double_list("eps", 0, 10, eps, error));
    CHECK(error == "--eps wants comma-separated numbers; '' is not one");
    CHECK_FALSE(parse({"--eps", "0.1,inf"}).get_double_list("eps", 0, 1e300, eps, error));
    CHECK(error == "--eps wants comma-separated numbers; 'inf' is not one");
    CHECK_FALSE(parse({"--eps", "0.1,20"}).get_double_list("eps", 0, 10, eps, error));
    CHECK(error == "--eps: 20 is outside 0..10");

    std::vector<std::int64_t> ids;
    CHECK(parse({"--ids", "464,3290"}).get_int_list("ids", 0, 50256, ids, error));
    CHECK(ids == std::vector<std::int64_t>{464, 3290});
    CHECK_FALSE(parse({"--ids", "464,3.5"}).get_int_list("ids", 0, 50256, ids, error));
    CHECK(error == "--ids wants comma-separated whole numbers; '3.5' is not one");
    CHECK_FALSE(parse({"--ids", "50257"}).get_int_list("ids", 0, 50256, ids, error));
    CHECK(error == "--ids: 50257 is outside 0..50256");
}

TEST_CASE("cli args: single numbers", "[cli]") {
    std::string error;
    std::optional<double> T;
    CHECK(parse({"--T", "0.5"}).get_double("T", 1e-3, 1e2, T, error));
    CHECK(T == 0.5);
    CHECK_FALSE(parse({"--T", "0.5x"}).get_double("T", 1e-3, 1e2, T, error));
    CHECK(error == "--T wants a number from 0.001 to 100, got '0.5x'");
    std::optional<std::int64_t> n;
    CHECK_FALSE(parse({"--T", "07a"}).get_int("T", 0, 9, n, error));
    CHECK(error == "--T wants a whole number from 0 to 9, got '07a'");
}

TEST_CASE("cli args: an option given more than once keeps every value, in order", "[cli]") {
    const attnlab::CliArgs a = parse({"--ids", "1", "--eps", "0.5", "--ids", "2,3"});
    CHECK(a.values("ids") == std::vector<std::string>{"1", "2,3"});
    CHECK(a.value("ids") == "2,3");
    CHECK(a.values("eps") == std::vector<std::string>{"0.5"});
    CHECK(a.values("T").empty());
}
