/// @file catch.hpp
/// @brief Includes Catch2 whichever major the distribution ships (v2 or v3).
///
/// Test files include this header only; they use the subset of Catch2 that
/// both majors share (TEST_CASE, SECTION, GENERATE, REQUIRE, CHECK, INFO,
/// CAPTURE, FAIL, SUCCEED).
#pragma once

#if __has_include(<catch2/catch_all.hpp>)
#include <catch2/catch_all.hpp>
#else
#include <catch2/catch.hpp>
#endif
