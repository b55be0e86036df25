// Choosing between the built-in models: what a link names each by, and when the view follows a
// new model's trained setting for its head. Expected values are written out by hand.
#include <catch2/catch.hpp>

#include <string>

#include "app/model_choice.h"

using namespace attnlab;

TEST_CASE("a link names the twin by its relative address, AttnLab tiny and local files by nothing", "[app][model_choice]") {
    CHECK(model_link_name("assets/tiny/model.safetensors", BuiltinModel::Tiny).empty());
    CHECK(model_link_name("/home/x/assets/tiny-ssmax/model.safetensors", BuiltinModel::TinySsmax) == "assets/tiny-ssmax/model.safetensors");
    CHECK(model_link_name("https://example.org/m/model.safetensors", BuiltinModel::None) == "https://example.org/m/model.safetensors");
    CHECK(model_link_name("/tmp/model.safetensors", BuiltinModel::None).empty());
    // The name read back: only the twin's address names a built-in model.
    CHECK(linked_builtin("assets/tiny-ssmax/model.safetensors") == BuiltinModel::TinySsmax);
    CHECK(linked_builtin("") == BuiltinModel::None);
    CHECK(linked_builtin("assets/tiny/model.safetensors") == BuiltinModel::None);
    CHECK(linked_builtin("https://example.org/assets/tiny-ssmax/model.safetensors") == BuiltinModel::None);
}

TEST_CASE("the twins are each other's, with the menu's labels", "[app][model_choice]") {
    CHECK(other_twin(BuiltinModel::Tiny) == BuiltinModel::TinySsmax);
    CHECK(other_twin(BuiltinModel::TinySsmax) == BuiltinModel::Tiny);
    CHECK(other_twin(BuiltinModel::None) == BuiltinModel::None);
    CHECK(std::string(builtin_model_label(BuiltinModel::Tiny)) == "AttnLab tiny");
    CHECK(std::string(builtin_model_label(BuiltinModel::TinySsmax)) == "AttnLab tiny-SSMax");
    CHECK(std::string(builtin_model_label(BuiltinModel::None)).empty());
}

namespace {
// Every head SSMax at s = 0.43, as the twin's config.json states it.
AttentionPlan ssmax_plan() {
    AttentionPlan p(2, 3);
    std::string error;
    REQUIRE(parse_attention_spec("all=ssmax:0.43", 2, 3, p, error));
    return p;
}
}  // namespace

TEST_CASE("a view showing its head as trained follows the next model's trained setting", "[app][model_choice]") {
    const AttentionPlan softmax(2, 3), ssmax = ssmax_plan();
    ViewState v;  // softmax at T = 1, layer 0, head 0
    v.layer = 1;
    v.head = 2;
    REQUIRE(view_follows_trained(v, softmax));
    CHECK_FALSE(view_follows_trained(v, ssmax));
    follow_trained(v, ssmax);
    CHECK(v.normalizer == "ssmax:0.43");
    CHECK(v.T == 1.0);
    CHECK(view_follows_trained(v, ssmax));
    // And back to softmax.
    follow_trained(v, softmax);
    CHECK(v.normalizer == "softmax");

    // A what-if (another normalizer, another T) is the reader's: it does not follow.
    ViewState what_if;
    what_if.normalizer = "sparsemax";
    CHECK_FALSE(view_follows_trained(what_if, softmax));
    ViewState cooler;
    cooler.T = 0.5;
    CHECK_FALSE(view_follows_trained(cooler, softmax));
    // A head outside the plan: nothing to compare with.
    ViewState outside;
    outside.layer = 5;
    CHECK_FALSE(view_follows_trained(outside, softmax));
    // follow_trained clamps the head into the plan, and leaves the view alone for an empty plan.
    follow_trained(outside, ssmax);
    CHECK(outside.normalizer == "ssmax:0.43");
    ViewState untouched;
    follow_trained(untouched, AttentionPlan());
    CHECK(untouched.normalizer == "softmax");
}

TEST_CASE("a link names a Hugging Face model by its repository id", "[app][model_choice]") {
    CHECK(model_link_name("Qwen/Qwen3-0.6B", BuiltinModel::None) == "Qwen/Qwen3-0.6B");
    CHECK(model_link_name("HuggingFaceTB/SmolLM2-135M", BuiltinModel::None) == "HuggingFaceTB/SmolLM2-135M");
    CHECK(is_hub_repo_id("openai-community/gpt2"));
    CHECK(is_hub_repo_id("Qwen/Qwen2.5-0.5B"));
    // Not repository ids: addresses, paths, files, a name without its organisation.
    CHECK_FALSE(is_hub_repo_id("gpt2"));
    CHECK_FALSE(is_hub_repo_id("https://huggingface.co/Qwen/Qwen3-0.6B"));
    CHECK_FALSE(is_hub_repo_id("assets/tiny/model.safetensors"));
    CHECK_FALSE(is_hub_repo_id("m/model.safetensors"));
    CHECK_FALSE(is_hub_repo_id("/Qwen/Qwen3"));
    CHECK_FALSE(is_hub_repo_id("Qwen/"));
    CHECK_FALSE(is_hub_repo_id("-x/y"));
    CHECK_FALSE(is_hub_repo_id("a/b c"));
    // Every model the menu offers is one.
    for (const HubModel& m : kHubModels) CHECK(is_hub_repo_id(m.id));
}
