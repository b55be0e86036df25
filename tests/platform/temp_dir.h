#pragma once
// A scratch folder of this process's own for the tests that read files, removed at the end of
// each test.
#include <filesystem>
#include <fstream>
#include <string>

#include <unistd.h>

namespace attnlab::testing {

struct TempDir {
    std::filesystem::path path;
    explicit TempDir(const std::string& prefix) : path(std::filesystem::temp_directory_path() / (prefix + std::to_string(::getpid()))) {
        std::filesystem::create_directories(path);
    }
    ~TempDir() {
        std::error_code ec;
        std::filesystem::remove_all(path, ec);
    }
    std::filesystem::path write(const std::string& name, const std::string& bytes) const {
        std::ofstream(path / name, std::ios::binary) << bytes;
        return path / name;
    }
};

}  // namespace attnlab::testing
