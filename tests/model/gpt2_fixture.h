#pragma once
// The checkpoints tests/reference/make_gpt2_fixtures.py made (numpy, float64, independent of
// AttnLab's C++) and what it recorded for them, read for the GPT-2 tests.
#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "base/json.h"
#include "base/safetensors.h"
#include "base/safetensors_write.h"
#include "model/gpt2.h"
#include "platform/whole_file.h"

namespace attnlab::fixture {

// Every number in v, depth first.
inline std::vector<double> flatten(const json::Value& v) {
    std::vector<double> out;
    if (v.is_number()) out.push_back(v.as_number());
    for (const json::Value& item : v.items()) {
        const std::vector<double> inner = flatten(item);
        out.insert(out.end(), inner.begin(), inner.end());
    }
    return out;
}

// The checkpoint's tensors widened to F32, as a file of its own: the F32 checkpoint of a 16-bit
// one's values.
inline std::vector<std::uint8_t> widened_file(const SafetensorsReader& reader) {
    std::vector<TensorBytes> ts;
    for (const TensorInfo& t : reader.tensors()) {
        std::vector<float> values(static_cast<size_t>(t.element_count()));
        std::string error;
        REQUIRE(reader.to_f32(t, values, error));
        ts.push_back({t.name, DType::F32, t.shape, encode_floats(values, DType::F32)});
    }
    return safetensors_file(ts);
}

// A 16-bit checkpoint's file and the F32 file of its values, opened: a model loaded from `narrow`
// must keep its matrices 16-bit, in the file's bytes, and give `wide`'s logits bit for bit.
struct NarrowAndWide {
    std::vector<std::uint8_t> narrow_file, wide_file;
    SafetensorsReader narrow, wide;

    explicit NarrowAndWide(std::vector<std::uint8_t> file) : narrow_file(std::move(file)) {
        std::string error;
        REQUIRE(narrow.open(narrow_file, "narrow.safetensors", error));
        wide_file = widened_file(narrow);
        REQUIRE(wide.open(wide_file, "wide.safetensors", error));
    }
    NarrowAndWide(const NarrowAndWide&) = delete;  // the readers point into the files

    // Whether `data` points into the 16-bit file: nothing widened at load.
    bool in_narrow_file(const void* data) const {
        const auto* p = static_cast<const std::uint8_t*>(data);
        return p > narrow_file.data() && p < narrow_file.data() + narrow_file.size();
    }
};

// Logits at every position of `count` fixed ids, from a fresh state of the model: (count, V).
inline std::vector<float> all_logits(const DecoderModel& model, int count) {
    std::vector<int> ids;
    for (int i = 0; i < count; ++i) ids.push_back((i * 53 + 7) % model.shape().vocab);
    const std::unique_ptr<DecoderState> state = model.new_state();
    std::vector<float> logits;
    std::string error;
    INFO(error);
    REQUIRE(state->forward(ids, logits, error, true));
    return logits;
}

// The two models' logits over `count` fixed ids are the same bits.
inline void check_same_logits(const DecoderModel& a, const DecoderModel& b, int count) {
    const std::vector<float> got = all_logits(a, count), want = all_logits(b, count);
    REQUIRE(got.size() == want.size());
    CHECK(std::memcmp(got.data(), want.data(), got.size() * sizeof(float)) == 0);
}

// max |ours - ref| / max |ref|: the error relative to the scale of the whole tensor.
template <class A>
double relative_error(const A& ours, const std::vector<double>& ref) {
    REQUIRE(ours.size() == ref.size());
    double err = 0.0, scale = 0.0;
    for (size_t i = 0; i < ref.size(); ++i) {
        err = std::max(err, std::abs(static_cast<double>(ours[i]) - ref[i]));
        scale = std::max(scale, std::abs(ref[i]));
    }
    return err / scale;
}

struct Fixture {
    std::string name;
    std::string bytes;  // model.safetensors
    SafetensorsReader reader;
    Gpt2Model model;
    json::Value expected;
    std::vector<int> tokens;
    std::vector<std::string> warnings;

    explicit Fixture(const std::string& n) : name(n) {
        bytes = read_whole_file(dir() + "/model.safetensors");
        std::string error;
        REQUIRE(reader.open({reinterpret_cast<const std::uint8_t*>(bytes.data()), bytes.size()}, n + "/model.safetensors", error));
        const json::ParseResult e = json::parse(read_whole_file(dir() + "/expected.json"));
        REQUIRE(e.value);
        expected = *e.value;
        Gpt2Config config;
        const bool has_config = expected.find("has_config_json")->as_bool();
        if (has_config) REQUIRE(parse_gpt2_config(read_whole_file(dir() + "/config.json"), n + "/config.json", config, error));
        INFO(error);
        REQUIRE(model.load(reader, has_config ? &config : nullptr, error, &warnings));
        for (const json::Value& t : expected.find("tokens")->items()) tokens.push_back(static_cast<int>(t.as_number()));
    }
    std::string dir() const { return std::string(ATTNLAB_FIXTURES_DIR) + "/" + name; }
};

// Records every head's weights as the forward pass computes them.
struct AllHeads final : AttentionObserver {
    std::vector<std::vector<float>> weights;  // [layer * H + head] -> (T, T)
    int H = 0;
    void on_layer(const LayerQkv& x) override { H = x.n_head; }
    bool wants_head(int, int) const override { return true; }
    void on_head(const HeadAttention& a) override {
        const size_t index = static_cast<size_t>(a.layer) * H + a.head;
        if (weights.size() <= index) weights.resize(index + 1);
        weights[index].assign(a.weights, a.weights + static_cast<size_t>(a.n) * a.t_total);
    }
};

}  // namespace attnlab::fixture
