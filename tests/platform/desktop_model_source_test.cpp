// The desktop's model source reads Hugging Face's folder layout as the page's hub does: one
// mapped file, or the index and its shards in one buffer, with the text files beside them.
// The bytes are compared with the files as written here; the safetensors inside are not
// parsed by the source (the model's loaders and their tests do that).
#include <catch2/catch.hpp>

#include <filesystem>
#include <fstream>
#include <string>

#include <unistd.h>

#include "platform/desktop_model_source.h"
#include "platform/temp_dir.h"

using attnlab::DesktopModelSource;
using attnlab::FetchStatus;
using attnlab::ModelFiles;
using attnlab::testing::TempDir;
namespace fs = std::filesystem;

namespace {

std::string text_of(const ModelFiles& f, size_t offset, size_t size) {
    return std::string(reinterpret_cast<const char*>(f.bytes.bytes.data()) + offset, size);
}

const std::string kIndex = R"({"metadata": {}, "weight_map": {"a": "model-00001-of-00002.safetensors",
    "b": "model-00002-of-00002.safetensors", "c": "model-00001-of-00002.safetensors"}})";

}  // namespace

TEST_CASE("desktop model source: a sharded folder arrives as the page receives it", "[platform]") {
    TempDir dir("attnlab_desktop_source_");
    dir.write("model.safetensors.index.json", kIndex);
    dir.write("model-00001-of-00002.safetensors", "first shard's bytes");
    dir.write("model-00002-of-00002.safetensors", "second");
    dir.write("config.json", "{\"model_type\": \"llama\"}");
    dir.write("tokenizer.json", "{\"model\": {}}");
    dir.write("tokenizer_config.json", "{}");
    DesktopModelSource source;
    source.probe(dir.path.string());
    REQUIRE(source.status().phase == FetchStatus::Phase::Confirm);
    CHECK(source.status().total_bytes == 19 + 6);
    source.download(dir.path.string());
    REQUIRE(source.status().phase == FetchStatus::Phase::Ready);
    ModelFiles f;
    REQUIRE(source.take_result(f));
    REQUIRE(f.weights.size() == 2);
    CHECK(f.weights[0].name == "model-00001-of-00002.safetensors");
    CHECK(f.weights[1].name == "model-00002-of-00002.safetensors");
    CHECK(text_of(f, f.weights[0].offset, f.weights[0].size) == "first shard's bytes");
    CHECK(text_of(f, f.weights[1].offset, f.weights[1].size) == "second");
    CHECK(f.bytes.bytes.size() == 25);
    CHECK(f.index_json == kIndex);
    CHECK(f.config_json == "{\"model_type\": \"llama\"}");
    CHECK(f.tokenizer_json == "{\"model\": {}}");
    CHECK(f.tokenizer_config_json == "{}");
    CHECK(f.source == dir.path.string());  // messages name a shard under its folder
    CHECK_FALSE(source.take_result(f));    // handed over once
}

TEST_CASE("desktop model source: one file, and the refusals", "[platform]") {
    TempDir dir("attnlab_desktop_source_");
    dir.write("model.safetensors", "one file");
    DesktopModelSource source;
    ModelFiles f;
    SECTION("a folder holding model.safetensors, with no text files") {
        source.download(dir.path.string());
        REQUIRE(source.take_result(f));
        CHECK(f.weights.empty());
        CHECK(text_of(f, 0, f.bytes.bytes.size()) == "one file");
        CHECK(f.config_json.empty());
        CHECK(f.tokenizer_json.empty());
        CHECK(f.source == (dir.path / "model.safetensors").string());
    }
    SECTION("an index naming a missing shard names it, at probe and at download") {
        dir.write("model.safetensors.index.json", kIndex);
        dir.write("model-00001-of-00002.safetensors", "x");
        for (int download = 0; download < 2; ++download) {
            const std::string index = (dir.path / "model.safetensors.index.json").string();
            download ? source.download(index) : source.probe(index);
            REQUIRE(source.status().phase == FetchStatus::Phase::Failed);
            CHECK_THAT(source.status().error, Catch::Contains("shard model-00002-of-00002.safetensors cannot be read"));
            CHECK_THAT(source.status().error, Catch::Contains("no such file"));
            CHECK_FALSE(source.take_result(f));
        }
    }
    SECTION("a broken index is the index parser's sentence") {
        dir.write("model.safetensors.index.json", "{\"weight_map\": 3}");
        source.download((dir.path / "model.safetensors.index.json").string());
        REQUIRE(source.status().phase == FetchStatus::Phase::Failed);
        CHECK_THAT(source.status().error, Catch::Contains("model.safetensors.index.json"));
        CHECK_THAT(source.status().error, Catch::Contains("weight_map"));
    }
    SECTION("a path that is not there, and a web address") {
        source.probe((dir.path / "absent.safetensors").string());
        CHECK(source.status().phase == FetchStatus::Phase::Failed);
        CHECK_THAT(source.status().error, Catch::Contains("absent.safetensors: no such file"));
        source.download("https://huggingface.co/Qwen/Qwen3-0.6B");
        CHECK(source.status().phase == FetchStatus::Phase::Failed);
        CHECK_THAT(source.status().error, Catch::Contains("The desktop build loads files"));
    }
}
