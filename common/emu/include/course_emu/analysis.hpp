/// @file analysis.hpp
/// @brief The emulator's analysis mode: every load and store of a kernel,
/// per thread, turned into a per-source-line report of shared-memory bank
/// conflicts, global-memory coalescing, races, reads of uninitialised shared
/// and global memory, requests made by part of a warp, and branches where the
/// lanes of a warp took different paths.
///
/// Only code compiled with GCC's `-fsanitize=thread` and
/// `-fsanitize-coverage=trace-pc` instrumentation (and linked with the
/// `course_emu_analysis` library, which provides the `__tsan_*` and
/// `__sanitizer_cov_trace_pc` callbacks itself: no sanitizer runtime) is seen; CMake's
/// course_emu_analysed_sources() compiles `.cu` files that way. While an
/// analysis runs, launches use one worker thread. See docs/emulator.md,
/// "Analysis mode", for what each number means and how it maps to Nsight
/// Compute's metrics.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include <course_emu/show.hpp>
#include <course_emu/types.hpp>

namespace course_emu::analysis {

/// @brief A source position (file name without its folders, line).
struct SourceLine {
    std::string file;
    int line = 0;
    std::string text() const { return file + ":" + std::to_string(line); }
};

/// @brief What every access instruction of a report has: its kernel and
/// line, whether it stores, and how many warp requests it made.
///
/// A warp request is the k-th execution of the instruction by each lane of a
/// warp between two synchronisation points (barrier or warp collective).
struct AccessLine {
    std::string kernel;
    SourceLine where;
    bool store = false;
    unsigned long long requests = 0;
    unsigned long long partial_requests = 0;  ///< made by fewer lanes than the warp has (divergence)
};

/// @brief One shared-memory access instruction (loads or stores of one line).
///
/// A request's degree is the largest number of distinct 4-byte words any of
/// the 32 banks must deliver (lanes reading the same word share it: a
/// broadcast). `wavefronts` sums the degrees; `ideal_wavefronts` sums
/// ceil(distinct words / 32), so `wavefronts - ideal_wavefronts` is the extra
/// shared-memory cycles the conflicts cost (Nsight Compute's
/// `l1tex__data_bank_conflicts_*`).
struct SharedAccess : AccessLine {
    unsigned long long wavefronts = 0;
    unsigned long long ideal_wavefronts = 0;
    unsigned max_degree = 0;  ///< the worst request: N-way
    unsigned long long conflicts() const { return wavefronts - ideal_wavefronts; }
};

/// @brief One global-memory access instruction (loads or stores of one line).
///
/// `sectors` sums, over the warp requests, the distinct 32-byte sectors the
/// active lanes touch; `ideal_sectors` sums ceil(distinct bytes / 32), what
/// the same bytes would cost if they were contiguous and aligned.
struct GlobalAccess : AccessLine {
    unsigned long long sectors = 0;
    unsigned long long ideal_sectors = 0;
    double sectors_per_request() const { return requests == 0 ? 0.0 : double(sectors) / double(requests); }
};

/// @brief Two threads touching the same bytes with no barrier between them,
/// at least one writing, neither by an atomic (a data race).
struct Race {
    bool shared = false;  ///< shared memory (within a block), else global memory (within a launch)
    std::string kernel;
    SourceLine first, second;  ///< in the order the emulator ran them
    bool first_writes = false, second_writes = false;
    uint3 first_block{}, first_thread{}, second_block{}, second_thread{};  ///< the first pair seen
    unsigned long long count = 0;  ///< pairs of accesses seen (by word)
};

/// @brief Reads of memory nothing wrote before: shared memory no thread of
/// the block wrote since it began, or global memory of an allocation made
/// during the analysis that neither the host (cudaMemcpy, cudaMemset) nor a
/// kernel wrote.
struct UninitialisedRead {
    bool shared = true;  ///< shared memory; else global memory (an allocation made while the analysis ran)
    std::string kernel;
    SourceLine where;
    uint3 block{}, thread{};  ///< the first reader seen
    unsigned long long count = 0;
};

/// @brief A source line where the lanes of a warp took different paths.
///
/// Seen through GCC's `-fsanitize-coverage=trace-pc`: every basic block the
/// analysed code enters calls back, so the analysis knows, per thread and
/// synchronisation interval (as for warp requests), which blocks it entered
/// how often. In one warp's interval, a block entered by some but not all of
/// the lanes in the interval, or by some more often than others (a loop whose
/// trip count differs per lane), is divergent there; its source line is the
/// line of the block's first statement.
struct DivergentLine {
    std::string kernel;
    SourceLine where;
    unsigned long long warp_executions = 0;  ///< warp intervals in which some lane executed the line
    unsigned long long divergent = 0;        ///< of those, the ones where its lanes went different ways
    /// Splits: per warp interval and block of the line, the distinct numbers
    /// of times its lanes entered the block, less one (an `if` some lanes
    /// take: 1). Their sum over a kernel estimates Nsight Compute's
    /// `smsp__sass_branch_targets_threads_divergent.sum`.
    unsigned long long splits = 0;
    /// The lanes that took the line at a divergent entry: fewest and most.
    unsigned min_lanes = 0, max_lanes = 0;
    unsigned warp_lanes = 0;  ///< lanes of the warp in the interval (32 but for a partial warp)
};

/// @brief A kernel's totals, named after the Nsight Compute metrics they estimate.
struct KernelTotals {
    std::string kernel;
    unsigned long long launches = 0;
    unsigned long long shared_load_requests = 0, shared_load_conflicts = 0;    ///< ..._op_ld.sum
    unsigned long long shared_store_requests = 0, shared_store_conflicts = 0;  ///< ..._op_st.sum
    unsigned long long global_load_requests = 0, global_load_sectors = 0;
    unsigned long long global_store_requests = 0, global_store_sectors = 0;
    unsigned long long divergent_splits = 0;  ///< sum of DivergentLine::splits: ~smsp__sass_branch_targets_threads_divergent.sum
};

/// @brief One lane's access in a sampled warp request.
struct LaneAccess {
    unsigned lane = 0;           ///< 0 to 31
    std::uint64_t address = 0;   ///< the address accessed (shared: its bank is address / 4 % 32)
    unsigned size = 0;           ///< bytes
};

/// @brief One warp request, lane by lane, as `./course show` draws it.
struct RequestSample {
    uint3 block{};               ///< the block that made it
    unsigned warp = 0;           ///< the warp of that block
    unsigned cost = 0;           ///< shared: wavefronts (the degree, N-way); atomic: most lanes on one bank; global: sectors touched
    unsigned ideal = 0;          ///< the same bytes contiguous and aligned: wavefronts or sectors
    std::vector<LaneAccess> lanes;  ///< the active lanes, by lane
};

/// @brief The sampled requests of one access instruction (a source line's
/// loads or stores): the first one made, and the worst (highest cost over
/// the ideal; the first of equals).
struct RequestPicture {
    std::string kernel;
    SourceLine where;
    std::string path;            ///< the source file with its folders, when known (for its text)
    bool shared = false;         ///< shared memory, else global
    bool store = false;
    /// Shared-memory atomics (a histogram's bins): the cost counts every
    /// lane's word, lanes on one word too, since an atomic is no broadcast.
    bool atomic = false;
    unsigned long long requests = 0;
    RequestSample first, worst;
};

/// @brief An element of global memory a small launch wrote, and who wrote it last.
struct WrittenElement {
    std::uint64_t index = 0;     ///< element of the allocation (bytes / WriterMap::element_bytes)
    uint3 block{}, thread{};     ///< the last writer
    unsigned writers = 0;        ///< distinct threads that wrote it in the launch
    bool race = false;           ///< two of them wrote it with no barrier between them
    bool atomic = false;         ///< written by atomics (many writers is then no race)
};

/// @brief Who wrote each element of one device allocation in one small launch
/// (at most 4096 threads; the first 1024 elements written), for GPU-Puzzles-like
/// labels: a race shows as an element written by two threads between barriers.
struct WriterMap {
    std::string kernel;
    unsigned long long launch = 0;  ///< which launch of the kernel (1: its first)
    dim3 grid{}, block{};
    std::size_t allocation_bytes = 0;
    unsigned element_bytes = 4;     ///< the smallest store into it
    std::vector<WrittenElement> elements;  ///< by index
    bool truncated = false;         ///< more elements were written than are kept
};

/// @brief A thread's arrival at a barrier or warp collective.
struct SyncMark {
    std::uint16_t line = 0;  ///< index into BarrierTimeline::lines
    std::uint8_t kind = 0;   ///< 0: __syncthreads(), 1: a warp collective, 2: grid.sync()
    bool released = false;   ///< false: still waiting when the block ended (a fault: divergence, deadlock)
};

/// @brief One block's barrier and warp-collective arrivals, thread by
/// thread, in the order each thread made them.
struct BarrierTimeline {
    std::string kernel;
    uint3 block{};
    dim3 block_dim{};
    bool stuck = false;  ///< some thread never left its last barrier (the launch faulted there)
    std::vector<SourceLine> lines;
    std::vector<std::vector<SyncMark>> threads;  ///< by linear thread index
};

/// @brief What `./course show` draws beside the numbers of the report;
/// kept only by an analysis begun with Options::pictures.
struct Pictures {
    std::vector<RequestPicture> requests;
    std::vector<WriterMap> writers;
    std::vector<BarrierTimeline> timelines;
    std::vector<show::ComparedOutput> outputs;  ///< wrong outputs the harness handed over (course/compare.hpp)
};

/// @brief What an analysis saw, per kernel and source line.
struct Report {
    std::vector<SharedAccess> shared;
    std::vector<GlobalAccess> global;
    std::vector<Race> races;
    std::vector<UninitialisedRead> uninitialised;
    std::vector<DivergentLine> divergence;  ///< only the lines that diverged somewhere
    std::vector<KernelTotals> kernels;
    unsigned long long truncated_blocks = 0;  ///< blocks with too many accesses to group them all
    Pictures pictures;  ///< only with Options::pictures

    /// The totals of `kernel` (all zero if it never ran).
    KernelTotals totals(std::string_view kernel) const;
    /// The shared-memory loads (or stores) of `kernel`, all lines together.
    SharedAccess shared_of(std::string_view kernel, bool store) const;
    /// The global-memory loads (or stores) of `kernel`, all lines together.
    GlobalAccess global_of(std::string_view kernel, bool store) const;
    /// The divergent line of `kernel` at `line` of any file (all zero if it never diverged).
    DivergentLine divergence_at(std::string_view kernel, int line) const;
    /// The report as text, per kernel and line.
    std::string text() const;
    /// One CSV row per kernel with the totals (header first).
    std::string csv() const;
};

/// @brief True when this program has instrumented code (the analysis can see something).
bool instrumented();

/// @brief What an analysis keeps besides the report's numbers.
struct Options {
    /// Keep the pictures of `./course show` (Report::pictures): sampled warp
    /// requests, writer maps of small launches, barrier timelines, and the
    /// wrong outputs the harness hands over.
    bool pictures = false;
};

/// @brief Starts recording every load and store of the following launches.
void begin();

/// @brief begin() with options.
void begin(const Options& options);

/// @brief Stops recording and returns what was seen since begin().
Report end();

}  // namespace course_emu::analysis
