// Catch2's implementation, compiled once for the unit tests (test_main.cpp) and the golden tests
// (model/gpt2_golden_test.cpp), whose own mains run it.
#define CATCH_CONFIG_RUNNER
#include "catch_session.h"

#include <catch2/catch.hpp>

int run_catch_session(int argc, char** argv) { return Catch::Session().run(argc, argv); }
