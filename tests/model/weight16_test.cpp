// 16-bit weights (model/weight_matrix.h): widening every F16 and BF16 pattern against a decoding
// of our own, and the products with 16-bit weights (LinearWeight, gemm) on odd shapes against a
// double-precision loop, and bit for bit against the same products with the weights widened to
// fp32 beforehand (widening is exact, so the kernels must give the same bits). Natively with
// AVX-512 every kind of tile is forced in turn. Then a GPT-2 checkpoint stored as F16 and BF16
// against the F32 checkpoint of the same values: the same logits to the bit, and 16-bit weights
// held 16-bit.
#include <catch2/catch.hpp>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <initializer_list>
#include <limits>
#include <string>
#include <vector>

#include "base/random.h"
#include "base/safetensors.h"
#include "base/safetensors_write.h"
#include "base/shard_index.h"
#include "model/gemm.h"
#include "model/gpt2.h"
#include "model/gpt2_fixture.h"
#include "model/linear.h"
#include "model/random_checkpoint.h"
#include "model/tile_choice.h"
#include "model/weight_matrix.h"
#include "random_inputs.h"

using namespace attnlab;
using attnlab::fixture::check_same_logits;
using attnlab::fixture::NarrowAndWide;
using attnlab::test::random_values;

namespace {

// IEEE half and bfloat16 decoded from their fields, in double: independent of the code under test.
double half_value(std::uint16_t h) {
    const int sign = h >> 15, e = (h >> 10) & 31, m = h & 1023;
    const double magnitude = e == 0 ? std::ldexp(m, -24) : e == 31 ? (m ? std::nan("") : INFINITY) : std::ldexp(1024 + m, e - 25);
    return sign ? -magnitude : magnitude;
}
double bfloat_value(std::uint16_t b) {
    const int sign = b >> 15, e = (b >> 7) & 255, m = b & 127;
    const double magnitude = e == 0 ? std::ldexp(m, -133) : e == 255 ? (m ? std::nan("") : INFINITY) : std::ldexp(128 + m, e - 134);
    return sign ? -magnitude : magnitude;
}

bool same_value(float got, double want) {
    if (std::isnan(want)) return std::isnan(got);
    return static_cast<double>(got) == want && std::signbit(got) == std::signbit(want);
}

// Random 16-bit weights of the type, small like a model's, with a few exact zeros.
std::vector<std::uint16_t> random_bits(SplitMix64& rng, size_t count, WeightType type) {
    std::vector<std::uint16_t> v(count);
    for (std::uint16_t& x : v) {
        const float f = static_cast<float>(rng.uniform() * 2.0 - 1.0) * 0.5f;
        x = type == WeightType::f16 ? f32_to_f16(f) : f32_to_bf16(f);
    }
    return v;
}

std::vector<float> widened(const std::vector<std::uint16_t>& bits, WeightType type) {
    std::vector<float> f(bits.size());
    for (size_t i = 0; i < bits.size(); ++i)
        f[i] = static_cast<float>(type == WeightType::f16 ? half_value(bits[i]) : bfloat_value(bits[i]));
    return f;
}

// Elements of out (n, cols) farther from in @ w + bias (in double) than the rounding of a sum
// of `depth` products allows.
int far_from_double(int n, int depth, int cols, const float* in, const std::vector<float>& w, bool w_transposed, const float* bias,
                    const float* out) {
    int far = 0;
    for (int i = 0; i < n; ++i)
        for (int j = 0; j < cols; ++j) {
            double exact = bias ? bias[j] : 0.0, magnitude = bias ? std::fabs(bias[j]) : 0.0;
            for (int p = 0; p < depth; ++p) {
                const double x = in[static_cast<size_t>(i) * depth + p];
                const double y = w_transposed ? w[static_cast<size_t>(j) * depth + p] : w[static_cast<size_t>(p) * cols + j];
                exact += x * y;
                magnitude += std::fabs(x * y);
            }
            const float got = out[static_cast<size_t>(i) * cols + j];
            if (!(std::fabs(got - exact) <= 4e-7 * (depth + 2) * magnitude + 1e-30) && ++far <= 3)
                UNSCOPED_INFO("out(" << i << ", " << j << ") = " << got << ", double " << exact);
        }
    return far;
}

// narrow (16-bit W) against full (the same W widened beforehand) on n = each of `rows_counts`
// rows of random input, with a bias on odd n: 16-bit held 16-bit, the same bits, and the double
// loop's values within rounding. wide is W (or W^T when transposed) widened. Returns the products run.
int check_against_widened(SplitMix64& rng, const LinearWeight& narrow, const LinearWeight& full, WeightType type,
                          const std::vector<float>& wide, bool transposed, std::initializer_list<int> rows_counts) {
    const int rows = narrow.rows(), cols = narrow.cols();
    const std::vector<float> bias = random_values(rng, static_cast<size_t>(cols));
    CHECK(narrow.type() == type);
    CHECK(narrow.owned_bytes() <= full.owned_bytes() / 2 + 64);  // 16-bit stays 16-bit
    int cases = 0;
    for (int n : rows_counts) {
        const std::vector<float> in = random_values(rng, static_cast<size_t>(n) * rows);
        std::vector<float> got(static_cast<size_t>(n) * cols, 1.5f), want(got.size(), -2.5f);
        const float* b = n % 2 ? bias.data() : nullptr;
        narrow.apply(in.data(), n, b, got.data());
        full.apply(in.data(), n, b, want.data());
        INFO(weight_type_name(type) << " n " << n << " rows " << rows << " cols " << cols);
        CHECK(std::memcmp(got.data(), want.data(), got.size() * sizeof(float)) == 0);
        CHECK(far_from_double(n, rows, cols, in.data(), wide, transposed, b, got.data()) == 0);
        ++cases;
    }
    return cases;
}

std::vector<std::string> tile_kinds_to_force() {
    std::vector<std::string> kinds = tile_names();
    kinds.insert(kinds.begin(), "");  // the measured pick first; the build may have no kinds
    return kinds;
}

}  // namespace

TEST_CASE("widening gives every F16 and BF16 pattern its exact value", "[weights16]") {
    std::vector<std::uint16_t> all(65536 + 5);  // + 5: a tail past the vector paths' width
    for (size_t i = 0; i < all.size(); ++i) all[i] = static_cast<std::uint16_t>(i);
    for (WeightType type : {WeightType::f16, WeightType::bf16}) {
        std::vector<float> out(all.size(), 12345.0f);
        widen(WeightMatrix(all.data(), type), all.size(), out.data());
        int wrong = 0;
        for (size_t i = 0; i < all.size(); ++i) {
            const double want = type == WeightType::f16 ? half_value(all[i]) : bfloat_value(all[i]);
            if (!same_value(out[i], want) || !same_value(WeightMatrix(all.data(), type).at(i), want)) ++wrong;
        }
        INFO(weight_type_name(type));
        CHECK(wrong == 0);
    }
}

TEST_CASE("f32_to_f16 and f32_to_bf16 round to nearest even, and invert widening", "[weights16]") {
    for (std::uint32_t i = 0; i < 65536; ++i) {
        const auto h = static_cast<std::uint16_t>(i);
        if (!std::isnan(half_value(h))) REQUIRE(f32_to_f16(static_cast<float>(half_value(h))) == h);
        if (!std::isnan(bfloat_value(h))) REQUIRE(f32_to_bf16(static_cast<float>(bfloat_value(h))) == h);
    }
    CHECK(f32_to_f16(1.0f + 0x1p-11f) == 0x3C00);             // a tie: to the even 1.0
    CHECK(f32_to_f16(1.0f + 0x1p-11f + 0x1p-20f) == 0x3C01);  // past the tie: up
    CHECK(f32_to_f16(1.0f + 3 * 0x1p-11f) == 0x3C02);         // a tie from an odd: up to even
    CHECK(f32_to_f16(65520.0f) == 0x7C00);                    // rounds past the largest half
    CHECK(f32_to_f16(0x1p-25f) == 0x0000);                    // half the smallest subnormal: ties to 0
    CHECK(f32_to_f16(0x1p-25f + 0x1p-35f) == 0x0001);         // just above: the smallest subnormal
    CHECK(f32_to_f16(-0.0f) == 0x8000);
    CHECK(std::isnan(f16_to_f32(f32_to_f16(std::nanf("")))));
    CHECK(f32_to_bf16(1.0f + 0x1p-8f) == 0x3F80);                     // a tie: to the even 1.0
    CHECK(f32_to_bf16(1.0f + 3 * 0x1p-8f) == 0x3F82);                 // a tie from an odd: up
    CHECK(f32_to_bf16(std::numeric_limits<float>::max()) == 0x7F80);  // rounds up to infinity
    CHECK(std::isnan(bf16_to_f32(f32_to_bf16(std::nanf("")))));
}

TEST_CASE("LinearWeight with 16-bit W: the double loop's values, fp32 W's bits, on odd shapes", "[weights16][linear]") {
    SplitMix64 rng(316);
    int cases = 0;
    for (const std::string& kind : tile_kinds_to_force()) {
        REQUIRE(force_tile(kind));
        for (WeightType type : {WeightType::f16, WeightType::bf16})
            for (int rows : {1, 7, 257, 300})
                for (int cols : {1, 31, 33, 130, 257}) {
                    const std::vector<std::uint16_t> bits = random_bits(rng, static_cast<size_t>(rows) * cols, type);
                    const std::vector<float> wide = widened(bits, type);
                    const LinearWeight narrow(WeightMatrix(bits.data(), type), rows, cols), full(wide.data(), rows, cols);
                    INFO("tile '" << kind << "'");
                    cases += check_against_widened(rng, narrow, full, type, wide, false, {1, 3, 13, 30});
                }
    }
    force_tile("");
    CHECK(cases >= 160);
}

TEST_CASE("LinearWeight from nn.Linear (out, in) parts side by side: the double loop's values, 16-bit as its widening",
          "[weights16][linear]") {
    SplitMix64 rng(318);
    int cases = 0;
    for (const std::string& kind : tile_kinds_to_force()) {
        REQUIRE(force_tile(kind));
        for (WeightType type : {WeightType::f16, WeightType::bf16})
            for (int rows : {1, 7, 300})
                for (const std::vector<int>& outs : std::vector<std::vector<int>>{{1}, {33}, {40, 8, 8}, {5, 130, 31}}) {
                    // W^T (sum of outs, rows): the parts' rows one after another, as one (out, in) matrix.
                    int cols = 0;
                    for (int o : outs) cols += o;
                    const std::vector<std::uint16_t> bits = random_bits(rng, static_cast<size_t>(cols) * rows, type);
                    const std::vector<float> wide = widened(bits, type);
                    std::vector<LinearWeight::Part> narrow_parts, wide_parts;
                    size_t at = 0;
                    for (int o : outs) {
                        narrow_parts.push_back({WeightMatrix(bits.data() + at, type), o});
                        wide_parts.push_back({WeightMatrix(wide.data() + at), o});
                        at += static_cast<size_t>(o) * rows;
                    }
                    const LinearWeight narrow(narrow_parts, rows), full(wide_parts, rows);
                    REQUIRE(narrow.cols() == cols);
                    INFO("tile '" << kind << "'");
                    cases += check_against_widened(rng, narrow, full, type, wide, true, {1, 3, 13});
                }
    }
    force_tile("");
    CHECK(cases >= 72);
}

TEST_CASE("gemm with 16-bit b: the double loop's values, fp32 b's bits, on odd shapes", "[weights16][gemm]") {
    SplitMix64 rng(317);
    int cases = 0;
    for (const std::string& kind : tile_kinds_to_force()) {
        REQUIRE(force_tile(kind));
        for (WeightType type : {WeightType::f16, WeightType::bf16})
            for (bool transposed : {false, true})
                for (int m : {1, 2, 3, 5, 13})
                    for (int n : {1, 33, 257})
                        for (int k : {1, 31, 300}) {
                            const std::vector<std::uint16_t> bits = random_bits(rng, static_cast<size_t>(n) * k, type);
                            const std::vector<float> wide = widened(bits, type), a = random_values(rng, static_cast<size_t>(m) * k);
                            const std::vector<float> bias = random_values(rng, static_cast<size_t>(n));
                            const int ldb = transposed ? k : n;
                            std::vector<float> got(static_cast<size_t>(m) * n, 1.5f), want(got.size(), -2.5f);
                            const float* b = k % 2 ? bias.data() : nullptr;
                            gemm(m, n, k, a.data(), k, WeightMatrix(bits.data(), type), ldb, transposed, got.data(), n, 1.0f, b);
                            gemm(m, n, k, a.data(), k, wide.data(), ldb, transposed, want.data(), n, 1.0f, b);
                            INFO(weight_type_name(type)
                                 << (transposed ? " b^T" : " b") << " tile '" << kind << "' m " << m << " n " << n << " k " << k);
                            CHECK(std::memcmp(got.data(), want.data(), got.size() * sizeof(float)) == 0);
                            CHECK(far_from_double(m, k, n, a.data(), wide, transposed, b, got.data()) == 0);
                            ++cases;
                        }
    }
    force_tile("");
    CHECK(cases >= 180);
}

namespace {

Gpt2Config small_config() {
    Gpt2Config c;
    c.n_layer = 2;
    c.n_head = 2;
    c.n_embd = 64;
    c.n_positions = 40;
    c.vocab_size = 300;
    return c;
}

}  // namespace

TEST_CASE("GPT-2 from F16 and BF16 files: 16-bit in memory, the logits of its values widened to F32", "[weights16][gpt2]") {
    const Gpt2Config c = small_config();
    for (DType dtype : {DType::F16, DType::BF16}) {
        const NarrowAndWide files(random_checkpoint(c, 5, dtype));
        Gpt2Model narrow, wide;
        std::string error;
        REQUIRE(narrow.load(files.narrow, &c, error));
        REQUIRE(wide.load(files.wide, &c, error));
        const WeightType type = dtype == DType::F16 ? WeightType::f16 : WeightType::bf16;
        INFO(dtype_name(dtype));
        CHECK(narrow.weights().wte.type == type);
        CHECK(narrow.weights().layers[1].fc.type() == type);
        CHECK(wide.weights().layers[1].fc.type() == WeightType::f32);
        CHECK(files.in_narrow_file(narrow.weights().wte.data));
        check_same_logits(narrow, wide, 37);
    }
}

TEST_CASE("GPT-2 from shards equals the one-file checkpoint, and bad shards name the file and the tensor", "[weights16][shards]") {
    const Gpt2Config c = small_config();
    const std::vector<std::uint8_t> one = random_checkpoint(c, 9, DType::BF16);
    const std::vector<CheckpointFile> files = random_checkpoint_files(c, 9, DType::BF16, 3);
    REQUIRE(files.size() == 4);
    REQUIRE(files.back().name == "model.safetensors.index.json");
    CHECK(files[0].name == "model-00001-of-00003.safetensors");
    ShardIndex index;
    std::string error;
    const std::string text(files.back().bytes.begin(), files.back().bytes.end());
    REQUIRE(parse_shard_index(text, "model.safetensors.index.json", index, error));
    REQUIRE(index.files.size() == 3);
    std::vector<SafetensorsReader::Shard> shards;
    for (size_t i = 0; i < 3; ++i) {
        REQUIRE(index.files[i] == files[i].name);
        shards.push_back({files[i].name, files[i].bytes});
    }
    SafetensorsReader sharded, single;
    REQUIRE(sharded.open_shards(index, shards, error));
    REQUIRE(single.open(one, "model.safetensors", error));
    Gpt2Model a, b;
    REQUIRE(a.load(sharded, &c, error));
    REQUIRE(b.load(single, &c, error));
    check_same_logits(a, b, 37);

    // A tensor the index lists in the wrong shard, or in none.
    ShardIndex moved = index;
    moved.weight_map.front().second = index.files[2];
    CHECK_FALSE(sharded.open_shards(moved, shards, error));
    CHECK(error ==
          "model-00001-of-00003.safetensors: holds tensor 'wte.weight', which model.safetensors.index.json lists in "
          "model-00003-of-00003.safetensors");
    ShardIndex dropped = index;
    dropped.weight_map.erase(dropped.weight_map.begin());
    CHECK_FALSE(sharded.open_shards(dropped, shards, error));
    CHECK(error == "model-00001-of-00003.safetensors: holds tensor 'wte.weight', which model.safetensors.index.json does not list");
    ShardIndex extra = index;
    extra.weight_map.emplace_back("lm_head.weight", index.files[1]);
    CHECK_FALSE(sharded.open_shards(extra, shards, error));
    CHECK(error ==
          "model.safetensors.index.json: lists tensor 'lm_head.weight' in model-00002-of-00003.safetensors, which has no such "
          "tensor");
    // A missing shard's bytes.
    CHECK_FALSE(sharded.open_shards(index, std::span(shards).first(2), error));
    CHECK(error == "model.safetensors.index.json: names 3 files but 2 were given");
    // A truncated shard: the reader's own error, naming the shard.
    std::vector<std::uint8_t> cut(files[1].bytes.begin(), files[1].bytes.end() - 1);
    std::vector<SafetensorsReader::Shard> broken = shards;
    broken[1].bytes = cut;
    CHECK_FALSE(sharded.open_shards(index, broken, error));
    CHECK(error.rfind("model-00002-of-00003.safetensors: ", 0) == 0);
    // A shard whose tensor has another shape than the config: the loader names the shard and tensor.
    Gpt2Config other = c;
    other.n_positions = 41;
    REQUIRE(sharded.open_shards(index, shards, error));
    CHECK_FALSE(a.load(sharded, &other, error));
    CHECK(error == "model-00001-of-00003.safetensors: tensor 'wpe.weight' has shape [40, 64], expected [41, 64] from config.json");
}

TEST_CASE("shard index: every fault is a clear error naming the index", "[weights16][shards]") {
    const std::pair<const char*, const char*> cases[] = {
        {"{", "idx.json: not valid JSON"},
        {"[]", "idx.json: expected a JSON object with a \"weight_map\""},
        {"{\"metadata\":{}}", "idx.json: no \"weight_map\": not the index of a sharded checkpoint"},
        {"{\"weight_map\":[]}", "idx.json: \"weight_map\" is an array, it must be an object"},
        {"{\"metadata\":1,\"weight_map\":{\"a\":\"f\"}}", "idx.json: \"metadata\" is a number, it must be an object"},
        {"{\"weight_map\":{\"a\":1}}", "idx.json: tensor 'a' maps to a number, not a file name"},
        {"{\"weight_map\":{\"a\":\"../f\"}}", "idx.json: tensor 'a' maps to \"../f\", which is not a file name in the index's folder"},
        {"{\"weight_map\":{\"a\":\"\"}}", "idx.json: tensor 'a' maps to \"\", which is not a file name in the index's folder"},
        {"{\"weight_map\":{\"a\":\"..\"}}", "idx.json: tensor 'a' maps to \"..\", which is not a file name in the index's folder"},
        {"{\"weight_map\":{\"a\":\"f1\",\"b\":\"f2\",\"a\":\"f2\"}}", "idx.json: the weight_map names tensor 'a' twice (in f1 and in f2)"},
        {"{\"weight_map\":{}}", "idx.json: the weight_map names no tensor"},
    };
    for (const auto& [text, message] : cases) {
        ShardIndex index;
        std::string error;
        INFO(text);
        CHECK_FALSE(parse_shard_index(text, "idx.json", index, error));
        CHECK(error.rfind(message, 0) == 0);
        CHECK(error.size() >= std::string(message).size());
    }
    ShardIndex index;
    std::string error;
    REQUIRE(parse_shard_index("{\"metadata\":{\"total_size\":8},\"weight_map\":{\"b\":\"f2\",\"a\":\"f1\",\"c\":\"f2\"}}", "idx.json",
                              index, error));
    CHECK(index.files == std::vector<std::string>{"f2", "f1"});
    CHECK(index.weight_map.size() == 3);
}
