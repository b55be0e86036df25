#include <catch2/catch.hpp>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <string>
#include <utility>

#include <sys/stat.h>
#include <unistd.h>

#include "platform/mapped_file.h"
#include "platform/temp_dir.h"

using attnlab::MappedFile;
namespace fs = std::filesystem;

using attnlab::testing::TempDir;

TEST_CASE("mapped file: the bytes are the file's, and survive a move", "[mapped_file]") {
    TempDir dir("attnlab_mapped_");
    const std::string content("hello\0world", 11);
    MappedFile f;
    std::string error;
    REQUIRE(f.open(dir.write("a.bin", content).string(), error));
    REQUIRE(f.bytes().size() == 11);
    CHECK(std::string(reinterpret_cast<const char*>(f.bytes().data()), 11) == content);
    const std::uint8_t* before = f.bytes().data();
    MappedFile g = std::move(f);
    CHECK(f.bytes().empty());
    CHECK(g.bytes().data() == before);  // views taken before the move stay valid
    MappedFile h;
    h = std::move(g);
    CHECK(h.bytes().data() == before);
    // Re-opening replaces the mapping.
    REQUIRE(h.open(dir.write("b.bin", "xyz").string(), error));
    CHECK(h.bytes().size() == 3);
    h.close();
    CHECK(h.bytes().empty());
}

TEST_CASE("mapped file: an empty file is an empty span, not an error", "[mapped_file]") {
    TempDir dir("attnlab_mapped_");
    MappedFile f;
    std::string error;
    REQUIRE(f.open(dir.write("empty.safetensors", "").string(), error));
    CHECK(f.bytes().empty());
}

TEST_CASE("mapped file: missing files, folders and unreadable files are clear errors", "[mapped_file]") {
    TempDir dir("attnlab_mapped_");
    MappedFile f;
    std::string error;
    const std::string missing = (dir.path / "nope.safetensors").string();
    CHECK_FALSE(f.open(missing, error));
    CHECK(error == missing + ": cannot open: No such file or directory");
    CHECK(f.bytes().empty());

    CHECK_FALSE(f.open(dir.path.string(), error));
    CHECK(error == dir.path.string() + ": is a directory, not a file");

    // A device cannot be mapped as a file (a FIFO would block in open() until a writer came);
    // /dev/null stands for every file that is not a regular one.
    CHECK_FALSE(f.open("/dev/null", error));
    CHECK(error == "/dev/null: is not a regular file (a pipe, socket or device cannot be mapped)");

    const fs::path locked = dir.write("locked.bin", "secret");
    fs::permissions(locked, fs::perms::none);
    if (::geteuid() == 0) {
        WARN("running as root: file permissions do not apply, the permission case is not checked");
    } else {
        CHECK_FALSE(f.open(locked.string(), error));
        CHECK(error == locked.string() + ": cannot open: Permission denied");
    }
}
