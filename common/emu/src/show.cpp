// The harness's way into `./course show` (course_emu/show.hpp): forwarded to
// the analysis library when an analysis with pictures runs, else nothing.
#include <course_emu/show.hpp>

#include <course_emu/detail/analysis_hooks.hpp>

#include <utility>

namespace course_emu::show {

bool wants_outputs() { return detail::g_analysis_hooks != nullptr && detail::g_analysis_hooks->wants_outputs(); }

void output_compared(ComparedOutput output) {
    if (wants_outputs()) detail::g_analysis_hooks->output_compared(std::move(output));
}

}  // namespace course_emu::show
