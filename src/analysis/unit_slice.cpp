#include "analysis/unit_slice.h"

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <sstream>

namespace attnlab {

std::string format_unit_records(const UnitRecords& records) {
    std::string lines = "# stage unit values...: the records of this shard's units (attnlab merge reads them)\n";
    char buf[32];
    for (const auto& [key, values] : records) {
        lines += std::to_string(key.first) + " " + std::to_string(key.second);
        for (double v : values) {
            if (std::isnan(v)) {
                lines += " nan";
                continue;
            }
            std::snprintf(buf, sizeof buf, " %.17g", v);
            lines += buf;
        }
        lines += "\n";
    }
    return lines;
}

bool parse_unit_records(std::string_view text, const std::string& name, UnitRecords& records, std::string& error) {
    std::istringstream lines{std::string(text)};
    std::string line;
    for (int n = 1; std::getline(lines, line); ++n) {
        if (line.empty() || line[0] == '#') continue;
        std::istringstream fields(line);
        int stage = 0, unit = 0;
        std::vector<double> values;
        std::string v;
        bool ok = static_cast<bool>(fields >> stage >> unit);
        while (ok && fields >> v) {
            char* end = nullptr;
            values.push_back(std::strtod(v.c_str(), &end));
            ok = end && *end == '\0';
        }
        if (!ok) {
            error = name + ":" + std::to_string(n) + ": not a record (stage unit values...)";
            return false;
        }
        if (!records.emplace(std::make_pair(stage, unit), std::move(values)).second) {
            error = name + ":" + std::to_string(n) + ": unit " + std::to_string(unit) + " of stage " + std::to_string(stage) +
                    " is in two shards";
            return false;
        }
    }
    return true;
}

}  // namespace attnlab
