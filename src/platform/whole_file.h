#pragma once
// Reading a whole file into memory, for the native tools, the benchmark and the tests. The
// model and analysis layers never read files: they parse the bytes this returns.
#include <fstream>
#include <sstream>
#include <string>

namespace attnlab {

// The file's bytes into `out`, or false with a message naming the file.
inline bool read_whole_file(const std::string& path, std::string& out, std::string& error) {
    std::ifstream in(path, std::ios::binary);
    if (!in) {
        error = path + ": cannot be opened";
        return false;
    }
    std::ostringstream bytes;
    bytes << in.rdbuf();
    if (in.bad()) {
        error = path + ": read error";
        return false;
    }
    out = bytes.str();
    return true;
}

// The file's bytes, or an empty string when it cannot be read (callers check what they parse).
inline std::string read_whole_file(const std::string& path) {
    std::string out, error;
    read_whole_file(path, out, error);
    return out;
}

}  // namespace attnlab
