// Runs the test cases linked into this binary with Catch2's command line (Catch::Session),
// from a main() of the binary's own. Catch2 v2 declares Session only in its
// implementation's translation unit, tests/catch_session.cpp.
#pragma once

int run_catch_session(int argc, char** argv);
