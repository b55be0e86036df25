#include <catch2/catch.hpp>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <string>
#include <vector>

#include "base/random.h"
#include "base/safetensors.h"

using attnlab::DType;
using attnlab::SafetensorsReader;
using attnlab::TensorInfo;

namespace {

// IEEE bits of a float (std::bit_cast is missing from Emscripten 3.1.6's libc++).
std::uint32_t bits_of(float f) {
    std::uint32_t u;
    std::memcpy(&u, &f, sizeof u);
    return u;
}

using Bytes = std::vector<std::uint8_t>;

// A safetensors file made by hand: the 8-byte little-endian length of `header`, the header
// (padded with spaces to `pad_to`, as writers do so that the data section is aligned), then
// `data`. Nothing here uses the reader, so the tests check it against the format itself.
Bytes make_file(const std::string& header_json, const Bytes& data, std::size_t pad_to = 8) {
    std::string header = header_json;
    while ((8 + header.size()) % pad_to != 0) header += ' ';
    // Sized once and filled in place: GCC 12 warns falsely (-Warray-bounds) on inserting
    // into a vector that has just been given 8 bytes.
    Bytes out(8 + header.size() + data.size());
    const std::uint64_t n = header.size();
    for (std::size_t i = 0; i < 8; ++i) out[i] = static_cast<std::uint8_t>(n >> (8 * i));
    for (std::size_t i = 0; i < header.size(); ++i) out[8 + i] = static_cast<std::uint8_t>(header[i]);
    for (std::size_t i = 0; i < data.size(); ++i) out[8 + header.size() + i] = data[i];
    return out;
}

// Little-endian bytes of floats and 16-bit words.
Bytes f32_bytes(const std::vector<float>& v) {
    Bytes out;
    for (float f : v) {
        const std::uint32_t u = bits_of(f);
        for (int i = 0; i < 4; ++i) out.push_back(static_cast<std::uint8_t>(u >> (8 * i)));
    }
    return out;
}
Bytes u16_bytes(const std::vector<std::uint16_t>& v) {
    Bytes out;
    for (std::uint16_t u : v) {
        out.push_back(static_cast<std::uint8_t>(u & 0xFF));
        out.push_back(static_cast<std::uint8_t>(u >> 8));
    }
    return out;
}
Bytes concat(Bytes a, const Bytes& b) {
    a.insert(a.end(), b.begin(), b.end());
    return a;
}

// Opens `file` expecting failure, and returns the message.
std::string open_error(const Bytes& file, const std::string& source = "x.safetensors") {
    SafetensorsReader r;
    std::string error;
    const bool ok = r.open(file, source, error);
    INFO(error);
    CHECK_FALSE(ok);
    CHECK(r.tensors().empty());
    return error;
}

// Hand-worked reference for IEEE half: (-1)^s * 2^(e-15) * (1 + m/1024), subnormals
// 2^-14 * m/1024, computed in double from the formula, not from bit surgery.
double f16_reference(std::uint16_t h) {
    const int s = h >> 15, e = (h >> 10) & 31, m = h & 1023;
    const double sign = s ? -1.0 : 1.0;
    if (e == 0) return sign * std::ldexp(m / 1024.0, -14);
    if (e == 31) return m == 0 ? sign * std::numeric_limits<double>::infinity() : std::numeric_limits<double>::quiet_NaN();
    return sign * std::ldexp(1.0 + m / 1024.0, e - 15);
}

// The same for bfloat16: 8 exponent bits (bias 127), 7 mantissa bits.
double bf16_reference(std::uint16_t b) {
    const int s = b >> 15, e = (b >> 7) & 255, m = b & 127;
    const double sign = s ? -1.0 : 1.0;
    if (e == 0) return sign * std::ldexp(m / 128.0, -126);
    if (e == 255) return m == 0 ? sign * std::numeric_limits<double>::infinity() : std::numeric_limits<double>::quiet_NaN();
    return sign * std::ldexp(1.0 + m / 128.0, e - 127);
}

}  // namespace

TEST_CASE("safetensors: f16 bit patterns worked by hand", "[safetensors]") {
    using attnlab::f16_to_f32;
    CHECK(f16_to_f32(0x3C00) == 1.0f);
    CHECK(f16_to_f32(0xC000) == -2.0f);
    CHECK(f16_to_f32(0x7BFF) == 65504.0f);                         // largest finite half
    CHECK(f16_to_f32(0x0001) == std::ldexp(1.0f, -24));            // smallest subnormal
    CHECK(f16_to_f32(0x03FF) == 1023.0f * std::ldexp(1.0f, -24));  // largest subnormal
    CHECK(f16_to_f32(0x0400) == std::ldexp(1.0f, -14));            // smallest normal
    CHECK(f16_to_f32(0x3555) == 0.333251953125f);                  // 1365/4096
    CHECK(f16_to_f32(0x7C00) == std::numeric_limits<float>::infinity());
    CHECK(f16_to_f32(0xFC00) == -std::numeric_limits<float>::infinity());
    CHECK(f16_to_f32(0x0000) == 0.0f);
    CHECK_FALSE(std::signbit(f16_to_f32(0x0000)));
    CHECK(std::signbit(f16_to_f32(0x8000)));  // -0
    CHECK(f16_to_f32(0x8000) == 0.0f);
    CHECK(std::isnan(f16_to_f32(0x7E00)));
    // A NaN keeps its payload: half mantissa 0x201 lands at float mantissa bit 13 upward.
    CHECK(bits_of(f16_to_f32(0xFE01)) == 0xFFC02000u);
}

TEST_CASE("safetensors: f16 to f32 is exact for all 65536 inputs", "[safetensors]") {
    int mismatches = 0;
    for (std::uint32_t h = 0; h <= 0xFFFF; ++h) {
        const float got = attnlab::f16_to_f32(static_cast<std::uint16_t>(h));
        const double want = f16_reference(static_cast<std::uint16_t>(h));
        const bool same =
            std::isnan(want) ? std::isnan(got) : (static_cast<double>(got) == want && std::signbit(got) == std::signbit(want));
        if (!same && ++mismatches < 5) UNSCOPED_INFO("0x" << std::hex << h << " gave " << got << ", expected " << want);
    }
    CHECK(mismatches == 0);
}

TEST_CASE("safetensors: bf16 bit patterns worked by hand", "[safetensors]") {
    using attnlab::bf16_to_f32;
    CHECK(bf16_to_f32(0x3F80) == 1.0f);
    CHECK(bf16_to_f32(0xC000) == -2.0f);
    CHECK(bf16_to_f32(0x4049) == 3.140625f);                         // pi, truncated to 8 bits
    CHECK(bf16_to_f32(0x0001) == std::ldexp(1.0f, -133));            // smallest subnormal
    CHECK(bf16_to_f32(0x7F7F) == std::ldexp(255.0f / 128.0f, 127));  // largest finite
    CHECK(bf16_to_f32(0x7F80) == std::numeric_limits<float>::infinity());
    CHECK(bf16_to_f32(0xFF80) == -std::numeric_limits<float>::infinity());
    CHECK(std::isnan(bf16_to_f32(0x7FC0)));
    CHECK(std::signbit(bf16_to_f32(0x8000)));
    int mismatches = 0;
    for (std::uint32_t b = 0; b <= 0xFFFF; ++b) {
        const float got = bf16_to_f32(static_cast<std::uint16_t>(b));
        const double want = bf16_reference(static_cast<std::uint16_t>(b));
        const bool same =
            std::isnan(want) ? std::isnan(got) : (static_cast<double>(got) == want && std::signbit(got) == std::signbit(want));
        if (!same && ++mismatches < 5) UNSCOPED_INFO("0x" << std::hex << b << " gave " << got << ", expected " << want);
    }
    CHECK(mismatches == 0);
}

TEST_CASE("safetensors: dtype names, sizes and element counts", "[safetensors]") {
    CHECK(std::string(attnlab::dtype_name(DType::F32)) == "F32");
    CHECK(std::string(attnlab::dtype_name(DType::BF16)) == "BF16");
    CHECK(std::string(attnlab::dtype_name(DType::F8_E5M2)) == "F8_E5M2");
    CHECK(attnlab::dtype_size(DType::F64) == 8);
    CHECK(attnlab::dtype_size(DType::F32) == 4);
    CHECK(attnlab::dtype_size(DType::F16) == 2);
    CHECK(attnlab::dtype_size(DType::BOOL) == 1);
    CHECK(attnlab::dtype_size(DType::F8_E4M3) == 1);
    CHECK(attnlab::dtype_size(DType::U64) == 8);
    TensorInfo t;
    CHECK(t.element_count() == 1);  // a scalar
    t.shape = {768, 2304};
    CHECK(t.element_count() == 1769472);
    t.shape = {3, 0, 5};
    CHECK(t.element_count() == 0);
}

TEST_CASE("safetensors: F32, F16 and BF16 tensors read back", "[safetensors]") {
    const std::vector<float> w = {1.5f, -2.0f, 0.25f, 3.0e-8f, -7.0f, 65536.0f};
    const Bytes f16 = u16_bytes({0x3C00, 0xC000, 0x7BFF, 0x0001});
    const Bytes bf16 = u16_bytes({0x3F80, 0x4049});
    // Listed out of data order, with metadata, to check that neither matters.
    const std::string header = R"({"b":{"dtype":"BF16","shape":[2],"data_offsets":[32,36]},)"
                               R"("__metadata__":{"format":"pt"},)"
                               R"("w":{"dtype":"F32","shape":[2,3],"data_offsets":[0,24]},)"
                               R"("h":{"dtype":"F16","shape":[2,2],"data_offsets":[24,32]}})";
    const Bytes file = make_file(header, concat(concat(f32_bytes(w), f16), bf16));

    SafetensorsReader r;
    std::string error;
    REQUIRE(r.open(file, "tiny.safetensors", error));
    CHECK(error.empty());
    CHECK(r.source() == "tiny.safetensors");
    REQUIRE(r.tensors().size() == 3);
    CHECK(r.tensors()[0].name == "w");  // data order
    CHECK(r.tensors()[1].name == "h");
    CHECK(r.tensors()[2].name == "b");
    CHECK(r.find("__metadata__") == nullptr);
    CHECK(r.find("nope") == nullptr);

    const TensorInfo* tw = r.find("w");
    REQUIRE(tw);
    CHECK(tw->dtype == DType::F32);
    CHECK(tw->shape == std::vector<std::int64_t>{2, 3});
    CHECK(tw->begin == 0);
    CHECK(tw->end == 24);
    CHECK(tw->element_count() == 6);
    // bytes() points into the caller's buffer, right after the 8 + N header bytes.
    const std::size_t data_start = file.size() - 36;
    CHECK(r.bytes(*tw).data() == file.data() + data_start);
    CHECK(r.bytes(*tw).size() == 24);

    // make_file aligns the data section to 8 bytes, and vector storage is at least 8-aligned,
    // so the F32 tensor is seen in place, without a copy.
    const std::span<const float> view = r.f32_view(*tw);
    REQUIRE(view.size() == 6);
    CHECK(static_cast<const void*>(view.data()) == static_cast<const void*>(file.data() + data_start));
    for (std::size_t i = 0; i < w.size(); ++i) CHECK(view[i] == w[i]);

    std::vector<float> out(6);
    REQUIRE(r.to_f32(*tw, out, error));
    CHECK(out == w);

    const TensorInfo* th = r.find("h");
    REQUIRE(th);
    CHECK(r.f32_view(*th).empty());  // not F32
    std::vector<float> h(4);
    REQUIRE(r.to_f32(*th, h, error));
    CHECK(h == std::vector<float>{1.0f, -2.0f, 65504.0f, std::ldexp(1.0f, -24)});

    const TensorInfo* tb = r.find("b");
    REQUIRE(tb);
    std::vector<float> b(2);
    REQUIRE(r.to_f32(*tb, b, error));
    CHECK(b == std::vector<float>{1.0f, 3.140625f});

    // A wrong output size is an error, not an overrun.
    std::vector<float> small(5);
    CHECK_FALSE(r.to_f32(*tw, small, error));
    CHECK(error == "tiny.safetensors: tensor 'w' has 6 elements but the output holds 5 floats");
}

TEST_CASE("safetensors: misaligned F32 data is copied, not viewed", "[safetensors]") {
    const std::vector<float> w = {1.0f, 2.0f, -3.5f};
    // Pad so that the data section starts at an odd file offset: 8 + header is odd.
    std::string header = R"({"w":{"dtype":"F32","shape":[3],"data_offsets":[0,12]}})";
    if ((8 + header.size()) % 2 == 0) header += ' ';
    const Bytes file = make_file(header, f32_bytes(w), 1);
    SafetensorsReader r;
    std::string error;
    REQUIRE(r.open(file, "odd.safetensors", error));
    const TensorInfo* t = r.find("w");
    REQUIRE(t);
    REQUIRE(reinterpret_cast<std::uintptr_t>(r.bytes(*t).data()) % 4 != 0);
    CHECK(r.f32_view(*t).empty());
    std::vector<float> out(3);
    REQUIRE(r.to_f32(*t, out, error));
    CHECK(out == w);
}

TEST_CASE("safetensors: scalars, empty tensors and other dtypes", "[safetensors]") {
    // A scalar I32, two empty tensors sharing an offset with it, and no other data.
    const std::string header = R"({"s":{"dtype":"I32","shape":[],"data_offsets":[0,4]},)"
                               R"("e1":{"dtype":"F32","shape":[0],"data_offsets":[0,0]},)"
                               R"("e2":{"dtype":"F16","shape":[4,0],"data_offsets":[4,4]}})";
    const Bytes file = make_file(header, Bytes{7, 0, 0, 0});
    SafetensorsReader r;
    std::string error;
    REQUIRE(r.open(file, "x.safetensors", error));
    REQUIRE(r.tensors().size() == 3);
    CHECK(r.tensors()[0].name == "e1");
    CHECK(r.tensors()[1].name == "s");
    CHECK(r.tensors()[2].name == "e2");
    const TensorInfo* s = r.find("s");
    REQUIRE(s);
    CHECK(s->element_count() == 1);
    CHECK(r.bytes(*s).size() == 4);
    CHECK(r.bytes(*s)[0] == 7);
    std::vector<float> out(1);
    CHECK_FALSE(r.to_f32(*s, out, error));
    CHECK(error == "x.safetensors: tensor 's' is I32; only F32, F16 and BF16 convert to fp32");
    std::vector<float> none;
    CHECK(r.to_f32(*r.find("e1"), none, error));
    CHECK(r.to_f32(*r.find("e2"), none, error));

    // A header with no tensors and no data is a valid (empty) file.
    REQUIRE(r.open(make_file("{}", {}), "empty.safetensors", error));
    CHECK(r.tensors().empty());
}

TEST_CASE("safetensors: every fault is a clear error naming the file and the place", "[safetensors]") {
    const Bytes w8 = f32_bytes({1.0f, 2.0f});
    const std::string ok_header = R"({"w":{"dtype":"F32","shape":[2],"data_offsets":[0,8]}})";
    const Bytes good = make_file(ok_header, w8);
    {  // the reference file is valid, so each fault below comes from its one change
        SafetensorsReader r;
        std::string error;
        REQUIRE(r.open(good, "x.safetensors", error));
    }
    const auto expect = [](const Bytes& file, const std::string& fragment) {
        const std::string e = open_error(file);
        INFO(e);
        CHECK(e.rfind("x.safetensors: ", 0) == 0);
        CHECK(e.find(fragment) != std::string::npos);
    };

    SECTION("empty and truncated files") {
        expect({}, "x.safetensors: the file is empty");
        expect(Bytes{1, 0, 0}, "the file is 3 bytes long, too short for the 8-byte header length at byte 0");
        // A valid file cut inside its data section.
        expect(Bytes(good.begin(), good.end() - 3), "tensor 'w': data_offsets [0, 8] end past the data section, which holds 5 bytes");
        // ... and cut inside its header.
        expect(Bytes(good.begin(), good.begin() + 20), "bytes but only 12 follow it (the file is 20 bytes)");
    }
    SECTION("a header length past the end of the file") {
        Bytes f = good;
        f[0] = 0xE8;  // 1000
        f[1] = 0x03;
        expect(f, "the header length at byte 0 says 1000 bytes but only " + std::to_string(good.size() - 8) + " follow it");
        Bytes huge = good;
        for (int i = 0; i < 8; ++i) huge[static_cast<std::size_t>(i)] = 0xFF;
        expect(huge, "says 18446744073709551615 bytes, over the 104857600-byte limit");
    }
    SECTION("a header length that lies short cuts the JSON") {
        Bytes f = good;
        f[0] = static_cast<std::uint8_t>(f[0] - 10);
        expect(f, "the header is not valid JSON: at byte ");
    }
    SECTION("the header size cap comes before the file size") {
        // kMaxHeaderBytes + 1 in a tiny file: refused by the cap, not by the file's length.
        Bytes f = good;
        const std::uint64_t n = SafetensorsReader::kMaxHeaderBytes + 1;
        for (int i = 0; i < 8; ++i) f[static_cast<std::size_t>(i)] = static_cast<std::uint8_t>(n >> (8 * i));
        expect(f, "says 104857601 bytes, over the 104857600-byte limit");
    }
    SECTION("non-JSON headers") {
        expect(make_file("hello", {}), "the header at byte 8 does not start with '{'");
        expect(make_file("[1, 2]", {}), "does not start with '{'");
        expect(make_file(R"({"w": nope})", {}),
               "the header is not valid JSON: at byte 6 of the header (file byte 14): unexpected character 'n'");
        expect(make_file("{\"w\xff\": 1}", {}), "invalid UTF-8");
        expect(make_file(R"({"w":{}} extra)", {}), "unexpected text after the JSON value");
    }
    SECTION("unknown dtype") {
        expect(make_file(R"({"w":{"dtype":"F17","shape":[2],"data_offsets":[0,8]}})", w8), "tensor 'w': unknown dtype 'F17'");
        expect(make_file(R"({"w":{"dtype":"f32","shape":[2],"data_offsets":[0,8]}})", w8), "tensor 'w': unknown dtype 'f32'");
        expect(make_file(R"({"w":{"dtype":4,"shape":[2],"data_offsets":[0,8]}})", w8), "tensor 'w': dtype is a number, not a string");
    }
    SECTION("shape and data_offsets disagree") {
        expect(make_file(R"({"h.0.attn.c_attn.weight":{"dtype":"F32","shape":[768,2304],"data_offsets":[0,100]}})", Bytes(100)),
               "x.safetensors: tensor 'h.0.attn.c_attn.weight': data_offsets [0, 100] hold 100 bytes but shape [768, 2304] of F32 needs "
               "7077888");
        expect(make_file(R"({"w":{"dtype":"F16","shape":[2],"data_offsets":[0,8]}})", w8),
               "tensor 'w': data_offsets [0, 8] hold 8 bytes but shape [2] of F16 needs 4");
        // A shape whose byte size overflows 64 bits must not wrap around to a small number:
        // 2^62 * 4 F32 bytes = 2^64 would wrap to 0 and match [0, 0].
        expect(make_file(R"({"w":{"dtype":"F32","shape":[4611686018427387904],"data_offsets":[0,0]}})", {}),
               "tensor 'w': shape [4611686018427387904] of F32 has more elements than a 64-bit size can count");
        expect(make_file(R"({"w":{"dtype":"U8","shape":[4294967296,4294967296],"data_offsets":[0,0]}})", {}),
               "has more elements than a 64-bit size can count");
    }
    SECTION("holes, overlaps and stray bytes") {
        const Bytes d16 = f32_bytes({1, 2, 3, 4});
        expect(make_file(R"({"a":{"dtype":"F32","shape":[1],"data_offsets":[0,4]},"b":{"dtype":"F32","shape":[2],"data_offsets":[8,16]}})",
                         d16),
               "a hole of 4 bytes at file byte ");
        expect(make_file(R"({"a":{"dtype":"F32","shape":[2],"data_offsets":[0,8]},"b":{"dtype":"F32","shape":[2],"data_offsets":[4,12]}})",
                         Bytes(12)),
               "tensor 'b' (data_offsets [4, 12]) overlaps 'a' (which ends at data byte 8");
        expect(make_file(R"({"a":{"dtype":"F32","shape":[1],"data_offsets":[4,8]}})", Bytes(8)),
               "the first tensor 'a' begins at data byte 4, not 0");
        expect(make_file(ok_header, concat(w8, Bytes{0, 0})),
               "the last tensor 'w' ends at data byte 8 but the data section holds 10 bytes: 2 bytes from file byte ");
        expect(make_file("{}", Bytes{1, 2, 3}), "the header lists no tensors but 3 bytes of data follow it");
        expect(make_file(R"({"w":{"dtype":"F32","shape":[2],"data_offsets":[8,16]}})", w8),
               "tensor 'w': data_offsets [8, 16] end past the data section");
    }
    SECTION("out of order offsets") {
        expect(make_file(R"({"w":{"dtype":"F32","shape":[2],"data_offsets":[8,0]}})", w8),
               "tensor 'w': data_offsets [8, 0] end before they begin");
    }
    SECTION("duplicate names") {
        expect(
            make_file(R"({"w":{"dtype":"F32","shape":[1],"data_offsets":[0,4]},"w":{"dtype":"F32","shape":[1],"data_offsets":[4,8]}})", w8),
            "the header names 'w' more than once");
        expect(make_file(R"({"__metadata__":{},"__metadata__":{}})", {}), "names '__metadata__' more than once");
    }
    SECTION("bad shapes") {
        expect(make_file(R"({"w":{"dtype":"F32","shape":[2,-1],"data_offsets":[0,8]}})", w8),
               "tensor 'w': shape[1] is -1, not a non-negative integer");
        expect(make_file(R"({"w":{"dtype":"F32","shape":[2.5],"data_offsets":[0,8]}})", w8),
               "tensor 'w': shape[0] is 2.5, not a non-negative integer");
        expect(make_file(R"({"w":{"dtype":"F32","shape":[2e0],"data_offsets":[0,8]}})", w8), "shape[0] is 2e0, not a non-negative integer");
        expect(make_file(R"({"w":{"dtype":"F32","shape":["2"],"data_offsets":[0,8]}})", w8),
               "shape[0] is a string, not a non-negative integer");
        expect(make_file(R"({"w":{"dtype":"F32","shape":2,"data_offsets":[0,8]}})", w8), "tensor 'w': shape is a number, not an array");
        expect(make_file(R"({"w":{"dtype":"F32","shape":[9223372036854775808],"data_offsets":[0,8]}})", w8),
               "shape[0] is 9223372036854775808, too large");
    }
    SECTION("bad data_offsets and tensor entries") {
        expect(make_file(R"({"w":{"dtype":"F32","shape":[2],"data_offsets":[0]}})", w8),
               "tensor 'w': data_offsets must be an array [begin, end]");
        expect(make_file(R"({"w":{"dtype":"F32","shape":[2],"data_offsets":[-1,8]}})", w8),
               "tensor 'w': data_offsets must be an array [begin, end]");
        expect(make_file(R"({"w":{"dtype":"F32","shape":[2],"data_offsets":"0,8"}})", w8), "data_offsets must be an array");
        expect(make_file(R"({"w":{"shape":[2],"data_offsets":[0,8]}})", w8), "tensor 'w': no 'dtype'");
        expect(make_file(R"({"w":{"dtype":"F32","data_offsets":[0,8]}})", w8), "tensor 'w': no 'shape'");
        expect(make_file(R"({"w":{"dtype":"F32","shape":[2]}})", w8), "tensor 'w': no 'data_offsets'");
        expect(make_file(R"({"w":{"dtype":"F32","shape":[2],"data_offsets":[0,8],"x":1}})", w8), "tensor 'w': unexpected member 'x'");
        expect(make_file(R"({"w":{"dtype":"F32","dtype":"F32","shape":[2],"data_offsets":[0,8]}})", w8),
               "tensor 'w': member 'dtype' appears twice");
        expect(make_file(R"({"w":[1,2]})", w8), "tensor 'w': expected an object with dtype, shape and data_offsets, found an array");
    }
    SECTION("metadata of the wrong type") {
        expect(make_file(R"({"__metadata__":["a"],"w":{"dtype":"F32","shape":[2],"data_offsets":[0,8]}})", w8),
               "'__metadata__' is an array, it must be an object of strings");
        expect(make_file(R"({"__metadata__":{"format":"pt","n":3},"w":{"dtype":"F32","shape":[2],"data_offsets":[0,8]}})", w8),
               "'__metadata__' member 'n' is a number, it must be a string");
    }
}

TEST_CASE("safetensors: a failed open leaves the reader empty", "[safetensors]") {
    SafetensorsReader r;
    std::string error;
    REQUIRE(r.open(make_file(R"({"w":{"dtype":"F32","shape":[1],"data_offsets":[0,4]}})", f32_bytes({1})), "a", error));
    REQUIRE(r.tensors().size() == 1);
    CHECK_FALSE(r.open(Bytes{}, "b", error));
    CHECK(r.tensors().empty());
    CHECK(r.find("w") == nullptr);
}

TEST_CASE("safetensors: randomly corrupted files never crash the reader", "[safetensors]") {
    // Valid seeds of several shapes; each trial flips bytes, truncates, or rewrites the
    // header length, then opens the result. A crash or an out-of-bounds read ends the run
    // (and the sanitizer build reports it); here we check each outcome is coherent.
    const std::vector<Bytes> seeds = {
        make_file(R"({"__metadata__":{"format":"pt"},"a":{"dtype":"F32","shape":[2,2],"data_offsets":[0,16]},)"
                  R"("b":{"dtype":"F16","shape":[3],"data_offsets":[16,22]},"c":{"dtype":"BF16","shape":[1],"data_offsets":[22,24]}})",
                  concat(f32_bytes({1, 2, 3, 4}), u16_bytes({0x3C00, 0x7C00, 0x0001, 0x3F80}))),
        make_file(R"({"w":{"dtype":"F32","shape":[2],"data_offsets":[0,8]}})", f32_bytes({1, 2})),
        make_file(R"({"e":{"dtype":"U8","shape":[0],"data_offsets":[0,0]},"s":{"dtype":"I64","shape":[],"data_offsets":[0,8]}})",
                  Bytes(8, 9)),
        // Mostly data, so that many flips land where any bit pattern is a valid float.
        make_file(R"({"big":{"dtype":"F32","shape":[8,8],"data_offsets":[0,256]}})", Bytes(256, 0x3F)),
    };
    attnlab::SplitMix64 rng(20250821);
    int opened = 0, refused = 0;
    for (int trial = 0; trial < 6000; ++trial) {
        Bytes f = seeds[rng.next() % seeds.size()];
        const std::uint64_t kind = rng.next() % 4;
        if (kind == 0 || kind == 3) {  // flip 1..4 random bytes
            const int flips = 1 + static_cast<int>(rng.next() % 4);
            for (int i = 0; i < flips; ++i) f[rng.next() % f.size()] ^= static_cast<std::uint8_t>(1 + rng.next() % 255);
        }
        if (kind == 1 || kind == 3) f.resize(rng.next() % (f.size() + 1));  // truncate
        if (kind == 2) {                                                    // set one header length byte to anything
            f[rng.next() % 8] = static_cast<std::uint8_t>(rng.next());
        }
        SafetensorsReader r;
        std::string error;
        if (r.open(f, "fuzz.safetensors", error)) {
            ++opened;
            // Whatever was accepted must tile the data section and convert without trouble.
            std::uint64_t at = 0;
            for (const TensorInfo& t : r.tensors()) {
                REQUIRE(t.begin == at);
                REQUIRE(r.bytes(t).size() == t.end - t.begin);
                at = t.end;
                if (t.dtype == DType::F32 || t.dtype == DType::F16 || t.dtype == DType::BF16) {
                    std::vector<float> out(static_cast<std::size_t>(t.element_count()));
                    REQUIRE(r.to_f32(t, out, error));
                }
            }
            REQUIRE(at <= f.size());
        } else {
            ++refused;
            REQUIRE(error.rfind("fuzz.safetensors: ", 0) == 0);
            REQUIRE(error.size() > 20);
        }
    }
    INFO(opened << " opened, " << refused << " refused");
    CHECK(refused > 3000);  // the corruption reaches the checks...
    CHECK(opened > 200);    // ...and damage inside float data is legitimately harmless
}
