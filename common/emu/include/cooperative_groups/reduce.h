/// @file reduce.h
/// @brief Emulator stand-in for CUDA's `<cooperative_groups/reduce.h>`: cg::reduce and its
/// operators (cg::plus, cg::less, cg::greater, cg::bit_and, cg::bit_or, cg::bit_xor), defined
/// with the groups in course_emu/cooperative_groups.hpp.
#pragma once
#include <cooperative_groups.h>
