// The text's tokenizer while a model loads: GPT-2's vocabulary is built only when something needs
// it, not at the start, so that a page opened on a model with its own tokenizer.json never pays
// for it. Expected ids are GPT-2's, written out by hand ("Hello" 15496, " world" 995).
#include <catch2/catch.hpp>

#include <string>
#include <vector>

#include "app/work/model_loading.h"
#include "app/work/model_tasks.h"
#include "platform/whole_file.h"

using namespace attnlab;

namespace {

// A source whose state the test sets: nothing arrives.
class StandInSource : public ModelSource {
public:
    FetchStatus st;
    void probe(const std::string& url) override { set(FetchStatus::Phase::Probing, url); }
    void download(const std::string& url) override { set(FetchStatus::Phase::Downloading, url); }
    void cancel() override { st.phase = FetchStatus::Phase::Idle; }
    void pick_file() override {}
    bool can_pick_file() const override { return false; }
    void clear_cache() override {}
    bool has_cache() const override { return false; }
    FetchStatus status() const override { return st; }
    bool take_result(ModelFiles&) override { return false; }

private:
    void set(FetchStatus::Phase phase, const std::string& url) {
        st.phase = phase;
        st.url = url;
    }
};

void give_vocabulary_files(Session& s) {
    s.gpt2_encoder_json = read_whole_file(std::string(ATTNLAB_ASSETS_DIR) + "/gpt2/encoder.json");
    s.gpt2_vocab_bpe = read_whole_file(std::string(ATTNLAB_ASSETS_DIR) + "/gpt2/vocab.bpe");
}

const std::vector<int> kHelloWorld = {15496, 995};

}  // namespace

TEST_CASE("a model on its way leaves GPT-2's vocabulary unbuilt; its failure builds it", "[app][model_loading]") {
    Session s;
    give_vocabulary_files(s);
    s.view.text = "Hello world";
    ModelLoading loading;
    StandInSource source;
    start_model_download(loading, s, source, "HuggingFaceTB/SmolLM2-135M");
    for (int frame = 0; frame < 3; ++frame) {
        keep_model_loading(loading, s, &source);
        keep_forward_current(s);
    }
    CHECK_FALSE(s.tokenizer.loaded());
    CHECK_FALSE(s.built_gpt2_vocabulary.loaded());
    CHECK(s.tokens.empty());

    source.st.phase = FetchStatus::Phase::Failed;
    source.st.error = "the repository was not found";
    keep_model_loading(loading, s, &source);
    keep_forward_current(s);
    REQUIRE(s.tokenizer.loaded());
    CHECK(s.tokens == kHelloWorld);  // the text is encoded again with the vocabulary it now has
}

TEST_CASE("the built-in model on its way, a question, or no source: GPT-2's vocabulary at once", "[app][model_loading]") {
    const auto first_frame = [](Session& s, ModelLoading& loading, ModelSource* source) {
        s.view.text = "Hello world";
        keep_model_loading(loading, s, source);
        keep_forward_current(s);
        CHECK(s.tokens == kHelloWorld);
    };
    SECTION("the built-in model, which uses it") {
        Session s;
        give_vocabulary_files(s);
        ModelLoading loading;
        StandInSource source;
        start_builtin_model(loading, s, source, "assets/tiny");
        REQUIRE(source.st.phase == FetchStatus::Phase::Downloading);
        first_frame(s, loading, &source);
    }
    SECTION("a model the reader has not yet agreed to download") {
        Session s;
        give_vocabulary_files(s);
        ModelLoading loading;
        StandInSource source;
        begin_load(loading, s, source, "https://example.org/m/model.safetensors");
        source.st.phase = FetchStatus::Phase::Confirm;
        first_frame(s, loading, &source);
    }
    SECTION("no model source at all") {
        Session s;
        give_vocabulary_files(s);
        ModelLoading loading;
        first_frame(s, loading, nullptr);
    }
}

TEST_CASE("vocabulary files that do not parse are said once, and not read again every frame", "[app][model_loading]") {
    Session s;
    s.gpt2_encoder_json = "{\"a\": ";
    s.gpt2_vocab_bpe = "#version: 0.2\n";
    ModelLoading loading;
    keep_model_loading(loading, s, nullptr);
    CHECK_FALSE(s.tokenizer.loaded());
    REQUIRE_FALSE(s.tokenizer_error.empty());
    CHECK(s.message.find("The GPT-2 vocabulary did not load") == 0);
    s.message.clear();
    keep_model_loading(loading, s, nullptr);
    CHECK(s.message.empty());  // tried once
}
