#pragma once
// Runs the Catch2 tests linked into this program on the command line's arguments (catch_session.cpp,
// which holds Catch2's implementation: its Session is declared only there).
int run_catch_session(int argc, char** argv);
