// The analysis mode's hooks into the runtime (analysis_hooks.hpp): set by
// the analysis library while an analysis runs, called by device.cpp,
// launch.cpp and block.cpp, which depend on this file and not on each other
// for it.
#include "analysis_hooks.hpp"

namespace course_emu::detail {

AnalysisHooks* g_analysis_hooks = nullptr;

}  // namespace course_emu::detail
