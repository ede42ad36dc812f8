// Internal: block and thread coordinates as the emulator's reports write
// them (grid.cpp), for the runtime and the analysis library alike.
#pragma once
#ifndef COURSE_EMU_DETAIL
#error "course_emu/detail/ belongs to the emulator (its runtime and its analysis library): include the public headers, <cuda_runtime.h> or course_emu/*.hpp, instead"
#endif

#include <course_emu/types.hpp>

#include <string>

namespace course_emu::detail {

/// The coordinates of flat index i in a 3-D extent (x fastest).
uint3 unflatten(unsigned long long i, dim3 extent);

/// "(x,y,z)".
std::string format_index(uint3 v);

}  // namespace course_emu::detail
