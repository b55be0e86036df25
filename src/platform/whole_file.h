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
    // One read into a buffer of the file's size: a stream copy through ostringstream took 6% of
    // a tokenizer's start (the CLI starts once per document in the tokenizer tests).
    in.seekg(0, std::ios::end);
    const std::streamoff size = in.tellg();
    if (size < 0) {
        std::ostringstream bytes;  // not seekable (a pipe): copy the stream
        in.clear();
        bytes << in.rdbuf();
        out = bytes.str();
    } else {
        out.resize(static_cast<size_t>(size));
        in.seekg(0, std::ios::beg);
        in.read(out.data(), size);
        out.resize(static_cast<size_t>(in.gcount()));
    }
    if (in.bad()) {
        error = path + ": read error";
        return false;
    }
    return true;
}

// The file's bytes, or an empty string when it cannot be read (callers check what they parse).
inline std::string read_whole_file(const std::string& path) {
    std::string out, error;
    read_whole_file(path, out, error);
    return out;
}

}  // namespace attnlab
