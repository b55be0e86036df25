// Golden figures of the real GPT-2 small checkpoint (../shared/PAPER.md §8), run wherever
// ATTNLAB_GPT2_DIR names a folder with Hugging Face's gpt2 model.safetensors and config.json
// (scripts/get_gpt2.sh fetches it). Without it the binary says so and exits 77, which ctest
// reports as "Skipped": never as a pass.
#include <catch2/catch.hpp>

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <string>
#include <vector>

#include "base/safetensors.h"
#include "catch_session.h"
#include "model/gpt2.h"
#include "model/sampling.h"
#include "platform/whole_file.h"

using namespace attnlab;

namespace {

std::string g_dir;

struct RealGpt2 {
    std::string bytes = read_whole_file(g_dir + "/model.safetensors");
    SafetensorsReader reader;
    Gpt2Model model;
    RealGpt2() {
        std::string error;
        Gpt2Config config;
        REQUIRE(reader.open({reinterpret_cast<const std::uint8_t*>(bytes.data()), bytes.size()}, "model.safetensors", error));
        REQUIRE(parse_gpt2_config(read_whole_file(g_dir + "/config.json"), "config.json", config, error));
        INFO(error);
        REQUIRE(model.load(reader, &config, error));
    }
};

RealGpt2& real() {
    static RealGpt2 gpt2;
    return gpt2;
}

}  // namespace

TEST_CASE("real GPT-2: greedy continuation of \"The dog\"", "[real-weights]") {
    Gpt2State state(real().model);
    std::vector<int> ids = {464, 3290};
    std::vector<float> logits;
    std::string error;
    REQUIRE(state.forward(ids, logits, error));
    while (ids.size() < 20) {
        ids.push_back(sample_token(logits, {}, 0.0));
        if (ids.size() < 20) REQUIRE(state.forward(std::vector<int>{ids.back()}, logits, error));
    }
    const std::vector<int> expected = {464, 3290, 373, 1043, 287,   257, 2214, 1474, 262, 16246,
                                       286, 2688, 290, 2688, 27262, 13,  198,  198,  464, 3290};
    CHECK(ids == expected);
}

TEST_CASE("real GPT-2: next-token probabilities after \"I wish you a happy New\"", "[real-weights]") {
    Gpt2State state(real().model);
    std::vector<float> logits;
    std::string error;
    REQUIRE(state.forward(std::vector<int>{40, 4601, 345, 257, 3772, 968}, logits, error));
    const std::vector<double> p = sampling_distribution(logits, {1.0f, 0, 1.0f});
    CHECK(p[6280] == Approx(0.967553).margin(1e-4));    // " Year"
    CHECK(p[13212] == Approx(0.0181997).margin(1e-4));  // " Years"
    CHECK(p[614] == Approx(0.0035733).margin(1e-5));    // " year"
    CHECK(p[1971] == Approx(0.0031147).margin(1e-5));   // " York"
}

TEST_CASE("real GPT-2: final layer-norm output", "[real-weights]") {
    Gpt2State state(real().model);
    std::vector<float> logits;
    std::string error;
    REQUIRE(state.forward(std::vector<int>{1169, 2068, 7586, 21831, 13}, logits, error));
    const std::vector<float> expected = {-0.1116f, -0.0375f, -0.2624f, 0.00891f, -0.0061f};
    for (size_t c = 0; c < expected.size(); ++c) CHECK(state.final_hidden()[c] == Approx(expected[c]).margin(0.01));
}

int main(int argc, char** argv) {
    const char* dir = std::getenv("ATTNLAB_GPT2_DIR");
    std::error_code ec;
    if (!dir || !std::filesystem::exists(std::string(dir) + "/model.safetensors", ec) ||
        !std::filesystem::exists(std::string(dir) + "/config.json", ec)) {
        std::printf(
            "SKIPPED: the [real-weights] tests need ATTNLAB_GPT2_DIR set to a folder with GPT-2's "
            "model.safetensors and config.json (scripts/get_gpt2.sh downloads them)%s%s\n",
            dir ? "; not found in " : "", dir ? dir : "");
        return 77;
    }
    g_dir = dir;
    return run_catch_session(argc, argv);
}
