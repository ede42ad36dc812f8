/// @file cpu_reference.hpp
/// @brief Lesson 17's CPU reference: the pipeline's results computed by plain loops.
///
/// The work is integer arithmetic, so the GPU's results must equal these exactly,
/// whatever the chunks, streams or order of execution.
#pragma once

#include <streams_overlap.hpp>

#include <cstddef>
#include <vector>

namespace lesson17::reference {

/// @brief `transform_element(in[i], work)` for every i: what both pipelines produce.
inline std::vector<unsigned> transform(const std::vector<unsigned>& in, unsigned work) {
    std::vector<unsigned> out(in.size());
    for (std::size_t i = 0; i < in.size(); ++i) out[i] = transform_element(in[i], work);
    return out;
}

/// @brief `t[i] + 3 * t[n - 1 - i]` with `t = transform(in, work)`: what produce_then_consume produces.
inline std::vector<unsigned> transform_then_combine(const std::vector<unsigned>& in, unsigned work) {
    const std::vector<unsigned> t = transform(in, work);
    std::vector<unsigned> out(t.size());
    for (std::size_t i = 0; i < t.size(); ++i) out[i] = t[i] + 3u * t[t.size() - 1 - i];
    return out;
}

}  // namespace lesson17::reference
