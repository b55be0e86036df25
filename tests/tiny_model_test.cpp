// The shipped demo model (assets/tiny) against PyTorch: tools/train_tiny/train_tiny.py trained it,
// wrote it as F16 in the Hugging Face layout, read that file back and recorded float64 logits of
// its own PyTorch forward pass on a held-out snippet (tests/fixtures/tiny_logits.json). Here our
// loader reads the same files unchanged and our forward pass must agree to 1e-3 relative.
#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

#include "model/gpt2.h"
#include "model/json.h"
#include "model/safetensors.h"
#include "model/sha256.h"
#include "platform/whole_file.h"

using namespace attnlab;

namespace {

const std::string kTinyDir = std::string(ATTNLAB_ASSETS_DIR) + "/tiny";

std::vector<double> numbers(const json::Value& v) {
    std::vector<double> out;
    for (const json::Value& x : v.items()) out.push_back(x.as_number());
    return out;
}

}  // namespace

TEST_CASE("tiny model: the shipped checkpoint loads unchanged and matches PyTorch's logits", "[tiny]") {
    const std::string bytes = read_whole_file(kTinyDir + "/model.safetensors");
    const std::string config_text = read_whole_file(kTinyDir + "/config.json");
    REQUIRE(!bytes.empty());
    REQUIRE(!config_text.empty());
    // The budget: at most 16 MB in assets/.
    CHECK(bytes.size() <= 16u * 1024u * 1024u);

    std::string error;
    SafetensorsReader reader;
    REQUIRE(reader.open({reinterpret_cast<const std::uint8_t*>(bytes.data()), bytes.size()}, "tiny/model.safetensors", error));
    for (const TensorInfo& t : reader.tensors()) {
        INFO(t.name);
        CHECK(t.dtype == DType::F16);
    }
    Gpt2Config config;
    REQUIRE(parse_gpt2_config(config_text, "tiny/config.json", config, error));
    Gpt2Model model;
    std::vector<std::string> warnings;
    INFO(error);
    REQUIRE(model.load(reader, &config, error, &warnings));
    CHECK(warnings.empty());
    CHECK(model.config().vocab_size == 50257);

    const json::ParseResult parsed = json::parse(read_whole_file(std::string(ATTNLAB_FIXTURES_DIR) + "/tiny_logits.json"));
    REQUIRE(parsed.value);
    const json::Value& fixture = *parsed.value;
    // The fixture belongs to one checkpoint: after retraining, rerun train_tiny.py to remake both.
    CHECK(sha256_hex(bytes) == fixture.find("model_sha256")->as_string());

    std::vector<int> tokens;
    for (const json::Value& t : fixture.find("tokens")->items()) tokens.push_back(static_cast<int>(t.as_number()));
    REQUIRE(tokens.size() >= 32);
    Gpt2State state(model);
    std::vector<float> logits;  // (T, V)
    REQUIRE(state.forward(tokens, logits, error, true));
    const size_t V = 50257;
    REQUIRE(logits.size() == tokens.size() * V);

    double worst = 0.0;
    int checked = 0;
    for (const json::Value& row : fixture.find("rows")->items()) {
        const size_t i = static_cast<size_t>(row.find("position")->as_number());
        REQUIRE(i < tokens.size());
        const float* ours = logits.data() + i * V;
        // Relative to the row's scale: logits near zero have no meaningful relative error.
        const double scale = row.find("max_abs")->as_number();
        const std::vector<double> ids = numbers(*row.find("ids")), ref = numbers(*row.find("logits"));
        REQUIRE(ids.size() == ref.size());
        for (size_t k = 0; k < ids.size(); ++k) {
            const double err = std::abs(ours[static_cast<size_t>(ids[k])] - ref[k]) / scale;
            worst = std::max(worst, err);
            ++checked;
        }
        // The whole row, through summaries the reference computed over all 50,257 logits.
        double max_abs = 0.0, sum_sq = 0.0, top = -INFINITY;
        size_t argmax = 0;
        for (size_t v = 0; v < V; ++v) {
            max_abs = std::max(max_abs, std::abs(static_cast<double>(ours[v])));
            sum_sq += static_cast<double>(ours[v]) * ours[v];
            if (ours[v] > top) top = ours[v], argmax = v;
        }
        double lse = 0.0;
        for (size_t v = 0; v < V; ++v) lse += std::exp(ours[v] - top);
        lse = top + std::log(lse);
        INFO("position " << i);
        CHECK(std::abs(max_abs - scale) / scale < 1e-3);
        CHECK(std::abs(std::sqrt(sum_sq) - row.find("l2")->as_number()) / row.find("l2")->as_number() < 1e-3);
        CHECK(std::abs(lse - row.find("logsumexp")->as_number()) / scale < 1e-3);
        const size_t ref_argmax = static_cast<size_t>(row.find("argmax")->as_number());
        // Equal, unless the reference's top two are closer than the tolerance.
        CHECK((argmax == ref_argmax || std::abs(ours[argmax] - ours[ref_argmax]) / scale < 1e-3));
    }
    INFO("worst relative error over " << checked << " logits: " << worst);
    CHECK(checked > 1000);
    CHECK(worst < 1e-3);
    WARN("tiny model vs PyTorch: worst relative logit error " << worst << " over " << checked << " logits");
}
