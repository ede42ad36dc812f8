/// @file @TOPIC@.hpp
/// @brief Lesson @NN@ contract: @TITLE@.
///
/// You implement these functions in `starter/@NN@-@SLUG@/@TOPIC@.cu`. The
/// tests call them with device pointers and compare the results with a CPU
/// version (`tests/@NN@-@SLUG@/cpu_reference.hpp`). See the lesson text,
/// `lessons/@NN@-@SLUG@/README.md`.
///
/// (Written by `./course new` as a working example, y = a·x, to be replaced
/// by the lesson's own contract.)
#pragma once

namespace lesson@NN@ {

/// @brief y[i] = a * x[i] for every i below n, with a grid-stride loop.
///
/// Launches on the default stream, checks the launch and returns without
/// synchronising; n = 0 launches nothing (x and y may then be null).
///
/// @param x device pointer to n floats.
/// @param y device pointer to n floats: overwritten, and nothing past them.
/// @param n number of elements (>= 0).
/// @param a the factor.
void scale(const float* x, float* y, int n, float a);

}  // namespace lesson@NN@
