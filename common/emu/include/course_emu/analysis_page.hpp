/// @file analysis_page.hpp
/// @brief `./course show`'s page: one self-contained HTML file (inline SVG,
/// a few lines of plain JavaScript for hovering, nothing fetched) drawing
/// what an analysis with pictures saw (course_emu/analysis.hpp,
/// Options::pictures). See docs/emulator.md, "Pictures of what a kernel did".
///
/// Per kernel: warp access maps per source line (the lanes of its worst warp
/// request against the 32 shared-memory banks or the 32-byte sectors of
/// global memory, with the line's text), who wrote each element in a small
/// launch, and a barrier timeline of one block; then every wrong output the
/// harness handed over, drawn as a strip or a grid.
///
/// The figures carry classes that tests count: `lane conflict` (a lane whose
/// bank holds another word of the request), `bank conflict`, `lane
/// uncoalesced` (a lane whose sector is fetched part empty, in a request
/// costing more sectors than ideal), `sector touched`, `cell race` and `cell
/// unwritten` (writer maps), `mark ... stuck` and `mark ... parted`
/// (timelines), `out wrong` and `out untouched` (outputs). Each figure is an
/// `<svg>` with `data-kernel`, `data-line` and `data-figure` attributes.
#pragma once

#include <cstddef>
#include <string>

#include <course_emu/analysis.hpp>

namespace course_emu::analysis {

/// @brief How the page is made.
struct PageOptions {
    std::string title = "What the kernels did";  ///< the page's heading
    std::string subtitle;                        ///< a line under it (the lesson, the tests run)
    /// The page stops adding figures (and says so) once it is this large.
    std::size_t max_bytes = 1700 * 1000;
};

/// @brief The page for `report` (its Report::pictures and numbers), as HTML text.
std::string html_page(const Report& report, const PageOptions& options = {});

}  // namespace course_emu::analysis
