// The analysis mode's hooks into the runtime (course_emu/detail/analysis_hooks.hpp):
// set by the analysis library while an analysis runs, called by the runtime's
// files, which depend on this file and not on each other (nor on the analysis
// library) for it.
#include <course_emu/detail/analysis_hooks.hpp>

namespace course_emu::detail {

AnalysisHooks* g_analysis_hooks = nullptr;

}  // namespace course_emu::detail
