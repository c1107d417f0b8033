// Catch2's implementation, compiled once per build and linked last into every test binary,
// each of which has its own main(). Under SANITIZE=1 it is compiled uninstrumented (see the
// Makefile): it is Catch2's code, not ours.
#define CATCH_CONFIG_RUNNER
#include <catch2/catch.hpp>

#include "tests/catch_session.h"

int run_catch_session(int argc, char** argv) { return Catch::Session().run(argc, argv); }
