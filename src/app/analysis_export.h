#pragma once
// "Export analysis (JSON)": the view state, the model, the tokens and, for the chosen head and
// query, every per-query quantity of the paper (query_report_json of analysis/query_analysis.h).
#include <string>

#include "app/session.h"

namespace attnlab {

// {"attnlab": "analysis-v1", "view": {...}, "model": {...} | null, "tokens": [{"id", "text"}...],
//  "token_ids": [...], "query": {"layer", "head", "position", "report": {...}} | null,
//  "query_error": "..." (when query is null)}
std::string analysis_json(const Session& s);

}  // namespace attnlab
