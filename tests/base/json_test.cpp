#include <catch2/catch.hpp>

#include <string>

#include "base/json.h"

using attnlab::json::parse;
using attnlab::json::Value;

TEST_CASE("json: values of every type", "[json]") {
    const auto r = parse(R"( {"a": [1, -2.5e3, true, false, null], "b": {"c": "d\u00e9\n"}, "e": 0} )");
    REQUIRE(r.value);
    const Value& v = *r.value;
    REQUIRE(v.is_object());
    const Value* a = v.find("a");
    REQUIRE(a);
    REQUIRE(a->items().size() == 5);
    CHECK(a->items()[0].as_number() == 1.0);
    CHECK(a->items()[1].as_number() == -2500.0);
    CHECK(a->items()[2].as_bool());
    CHECK_FALSE(a->items()[3].as_bool());
    CHECK(a->items()[4].is_null());
    CHECK(v.find("b")->find("c")->as_string() == "d\xc3\xa9\n");
    CHECK(v.find("e")->as_uint64() == 0u);
    CHECK(v.find("zzz") == nullptr);
}

TEST_CASE("json: exact integers for offsets", "[json]") {
    CHECK(parse("18446744073709551615").value->as_uint64() == 18446744073709551615ULL);
    CHECK_FALSE(parse("18446744073709551616").value->as_uint64());  // 2^64 does not fit
    CHECK_FALSE(parse("1.0").value->as_uint64());
    CHECK_FALSE(parse("-1").value->as_uint64());
    CHECK_FALSE(parse("1e3").value->as_uint64());
    CHECK(parse("-12").value->as_int(-100, 100) == -12);
    CHECK_FALSE(parse("101").value->as_int(-100, 100));
}

TEST_CASE("json: surrogate pairs become one UTF-8 code point", "[json]") {
    // U+1F600 GRINNING FACE = F0 9F 98 80.
    CHECK(parse(R"("\ud83d\ude00")").value->as_string() == "\xf0\x9f\x98\x80");
    CHECK(parse("\"\xf0\x9f\x98\x80\"").value->as_string() == "\xf0\x9f\x98\x80");
}

TEST_CASE("json: malformed documents are errors that say where", "[json]") {
    const auto expect_error = [](const std::string& text, const std::string& fragment) {
        const auto r = parse(text);
        INFO(text << " -> " << r.error);
        CHECK_FALSE(r.value);
        CHECK(r.error.find(fragment) != std::string::npos);
    };
    expect_error("", "at byte 0: unexpected end of input");
    expect_error("{\"a\": 1,}", "at byte 8: expected a string key");
    expect_error("[1 2]", "at byte 3: expected ',' or ']'");
    expect_error("{\"a\" 1}", "expected ':' after the key \"a\"");
    expect_error("\"abc", "unterminated string");
    expect_error("\"a\nb\"", "control character");
    expect_error("\"\\x\"", "unknown escape");
    expect_error(R"("\ud83d")", "unpaired surrogate");
    expect_error("\"\xc3\x28\"", "invalid UTF-8");
    expect_error("\"\xed\xa0\x80\"", "invalid UTF-8");  // an encoded surrogate
    expect_error("01", "unexpected text after");
    expect_error("-", "a number needs digits");
    expect_error("1.", "digits after '.'");
    expect_error("1e999", "out of range");
    expect_error("[1] x", "at byte 4: unexpected text after");
    expect_error("nul", "unexpected character 'n'");
    expect_error(std::string(200, '[') + std::string(200, ']'), "nested deeper than 128");
}

TEST_CASE("json: quote escapes what JSON requires and round-trips", "[json]") {
    const std::string s = std::string("a\"b\\c\n\x01") + "\xc3\xa9";
    const std::string q = attnlab::json::quote(s);
    CHECK(q == "\"a\\\"b\\\\c\\u000a\\u0001\xc3\xa9\"");
    CHECK(parse(q).value->as_string() == s);
}
