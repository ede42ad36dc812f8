// The emulator's analysis mode, its recorder (see course_emu/analysis.hpp
// and docs/emulator.md, "Analysis mode").
//
// The instrumentation's callbacks (tsan.cpp) hand the recorder every load
// and store of kernel code: while an analysis runs and a kernel's thread is
// running on the calling worker (current_thread), each access to shared or
// global memory is recorded with the thread, its synchronisation interval
// and the call's return address (the instruction). At the end of a block,
// the accesses are grouped into warp requests (bank conflicts, sectors);
// races and uninitialised reads are found as the accesses arrive, on shadow
// state per 4-byte word.
//
// With -fsanitize-coverage=trace-pc, each thread also counts the basic
// blocks it enters per synchronisation interval, and at the end of a block
// the lanes of each warp are compared (divergence). end() turns what was
// recorded into the Report (report.cpp answers its questions and prints it).
//
// One worker runs the blocks during an analysis, so none of this is locked.
#include "recorder.hpp"

#include <course_emu/analysis.hpp>
#include <course_emu/analysis_page.hpp>
#include <course_emu/atomics.hpp>
#include <course_emu/launch.hpp>
#include <course_emu/detail/analysis_hooks.hpp>
#include <course_emu/detail/coordinates.hpp>
#include <course_emu/thread_context.hpp>

#include <dlfcn.h>
#include <elf.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <iterator>
#include <map>
#include <set>
#include <sstream>
#include <tuple>
#include <unordered_map>
#include <utility>
#include <vector>

namespace course_emu::analysis {
namespace {

using detail::current_thread;
using detail::unflatten;

struct Access {
    std::uintptr_t pc;
    std::uintptr_t address;
    std::uint32_t barrier_epoch, warp_epoch, k;
    std::uint32_t size;
    std::uint16_t thread;
    std::uint8_t flags;
};

// Who made an access, for the race shadow.
struct Who {
    bool valid = false;
    std::uint32_t block = 0;
    std::uint16_t thread = 0;
    std::uint32_t barrier_epoch = 0, warp_epoch = 0;
    std::uintptr_t pc = 0;
    std::uint8_t mask = 0;  // bytes of the word
    std::uint32_t grid_phase = 0;  // cooperative launches: accesses of different grid.sync() phases are ordered
    std::uint32_t fences = 0;      // fences run in the launch before this access (see fenced_between)
};

struct Shadow {
    std::uint8_t written = 0;  // bytes written since the block began (shared only)
    Who writer;
    Who readers[2];
};

// How many times each address ran in a thread's synchronisation interval:
// an access's `k` (its k-th execution), or a basic block's entries.
struct ExecutionCounts {
    std::vector<std::pair<std::uintptr_t, std::uint32_t>> counts;  // pc -> times in this interval
    std::size_t last = 0;                                          // where the last one counted is: loops repeat it

    // Counts one more execution of `pc`; returns how many came before it.
    std::uint32_t count(std::uintptr_t pc) {
        if (last < counts.size() && counts[last].first == pc) return counts[last].second++;
        for (last = 0; last < counts.size(); ++last) {
            if (counts[last].first == pc) return counts[last].second++;
        }
        counts.emplace_back(pc, 1);
        return 0;
    }
    void clear() {
        counts.clear();
        last = 0;
    }
};

struct ThreadState {
    std::uint32_t barrier_epoch = 0, warp_epoch = 0;
    ExecutionCounts executions;  // accesses' addresses
    ExecutionCounts blocks;      // basic blocks entered
};

// One warp's synchronisation interval: how many of its lanes were in it
// and, per basic block entered, how many lanes entered it how many times.
struct WarpInterval {
    unsigned lanes = 0;
    struct Block {
        std::uintptr_t pc;
        std::vector<std::pair<std::uint32_t, unsigned>> lanes_by_count;  // (times entered, lanes), usually one
    };
    std::vector<Block> blocks;
};

// Per source line, over the warp intervals in which some lane executed it.
struct DivergenceStats {
    unsigned long long executions = 0, divergent = 0, splits = 0;
    unsigned min_lanes = ~0u, max_lanes = 0, warp_lanes = 0;
};

// A basic block's line, resolved once per address while an analysis runs.
struct BlockLine {
    std::size_t line;  // index into Recorder::block_lines_
    bool counted;      // the analysed code's own line (not the emulator's headers, not a library's)
};

struct PcKey {
    const char* kernel;
    std::uintptr_t pc;
    bool store;
    auto operator<=>(const PcKey&) const = default;
};

struct SharedStats {
    unsigned long long requests = 0, wavefronts = 0, ideal = 0, partial = 0;
    unsigned max_degree = 0;
};
struct GlobalStats {
    unsigned long long requests = 0, sectors = 0, ideal = 0, partial = 0;
};
struct RaceKey {
    bool shared;
    const char* kernel;
    std::uintptr_t first_pc, second_pc;
    bool first_writes, second_writes;
    auto operator<=>(const RaceKey&) const = default;
};
struct RaceSeen {
    unsigned long long count = 0;
    uint3 first_block{}, first_thread{}, second_block{}, second_thread{};
};
struct UninitSeen {
    unsigned long long count = 0;
    uint3 block{}, thread{};
};

// ./course show: the first and the worst warp request of an instruction.
struct SampleSeen {
    RequestSample first, worst;
    long long worst_excess = -1;  // cost - ideal of `worst`
};

// ./course show: the writes of a small launch to one address.
struct WriteSeen {
    Who last;
    std::uint32_t size = 0;
    unsigned writers = 0;
    bool race = false, atomic = false;
};

// Limits that keep ./course show's page small (docs/emulator.md, "Pictures").
constexpr unsigned long long kMaxWriterThreads = 4096;  // launches with more threads get no writer map
constexpr std::size_t kMaxWriterElements = 1024;        // elements kept per map
constexpr std::size_t kMaxTimelineThreads = 1024;       // blocks with more threads get no timeline
constexpr std::size_t kMaxOutputs = 8;                  // wrong outputs kept

class Recorder final : public detail::AnalysisHooks {
public:
    bool active = false;
    bool instrumented_code_ran = false;

    void start(const Options& options) {
        *this = Recorder{};
        active = true;
        pictures_ = options.pictures;
    }

    // ---- hooks from the emulator

    void launch_begin(const LaunchInfo& info) override {
        info_ = &info;
        kernel_ = kernel_name(info.kernel);
        allocations_ = detail::live_device_allocations();
        global_shadow_.clear();
        grid_phase_ = 0;
        fence_count_ = 0;
        fences_.clear();
        ++launches_[kernel_];
        const unsigned long long threads = 1ull * info.grid.x * info.grid.y * info.grid.z * info.block.x *
                                           info.block.y * info.block.z;
        small_launch_ = pictures_ && threads <= kMaxWriterThreads;
        writes_.clear();
    }
    void launch_end() override {
        if (small_launch_) keep_writer_maps();
        writes_.clear();
        global_shadow_.clear();
        info_ = nullptr;
    }

    void block_begin(const void* dynamic_shared, std::size_t bytes) override {
        dynamic_begin_ = reinterpret_cast<std::uintptr_t>(dynamic_shared);
        dynamic_end_ = dynamic_begin_ + (dynamic_shared != nullptr ? bytes : 0);
        static_shared_.clear();
        shared_shadow_.clear();
        accesses_.clear();
        intervals_.clear();
        block_truncated_ = false;
        const unsigned n = info_->block.x * info_->block.y * info_->block.z;
        threads_.assign(n, ThreadState{});
        block_linear_ = 0;
        have_block_ = false;
        marks_.clear();
        if (pictures_ && n <= kMaxTimelineThreads) marks_.resize(n);
        marks_block_set_ = false;
    }

    void block_end() override {
        group_block();
        accesses_.clear();
        accesses_.shrink_to_fit();
        for (std::size_t i = 0; i < threads_.size(); ++i) flush_blocks(static_cast<std::uint32_t>(i), threads_[i]);
        group_divergence();
        intervals_.clear();
        if (pictures_) keep_timeline();
    }

    void grid_phase(unsigned long long phase) override {
        grid_phase_ = static_cast<std::uint32_t>(phase);
        have_block_ = false;  // another block may have run since this one began
    }

    void before_sync(int kind, const char* file, int line) override {
        if (current_thread == nullptr || marks_.empty()) return;
        if (!marks_block_set_) {
            marks_block_ = current_thread->block_idx;
            marks_block_set_ = true;
        }
        std::vector<SyncMark>& mine = marks_[thread_linear()];
        if (mine.size() >= 4096) return;  // a loop of barriers: its start tells the story
        const char* slash = std::strrchr(file, '/');
        const SourceLine where{slash != nullptr ? slash + 1 : file, line};
        auto it = std::find_if(mark_lines_.begin(), mark_lines_.end(), [&](const SourceLine& l) {
            return l.line == where.line && l.file == where.file;
        });
        if (it == mark_lines_.end()) it = mark_lines_.insert(mark_lines_.end(), where);
        mine.push_back(SyncMark{static_cast<std::uint16_t>(it - mark_lines_.begin()), static_cast<std::uint8_t>(kind), false});
    }

    void after_sync(bool warp) override {
        if (current_thread == nullptr || threads_.empty()) return;
        const std::uint32_t linear = thread_linear();
        if (!marks_.empty() && !marks_[linear].empty()) marks_[linear].back().released = true;
        ThreadState& t = threads_[linear];
        flush_blocks(linear, t);
        if (warp) ++t.warp_epoch;
        else ++t.barrier_epoch;
        t.executions.clear();
    }

    void shared_declared(const void* address, std::size_t bytes) override {
        const auto begin = reinterpret_cast<std::uintptr_t>(address);
        for (const auto& r : static_shared_) {
            if (r.first == begin) return;
        }
        static_shared_.emplace_back(begin, begin + bytes);
    }

    // Global memory written so far, byte by byte, for the allocations made
    // while the analysis runs (older ones, and managed memory, which host
    // code writes unseen, are taken as written): by cudaMemcpy or cudaMemset
    // from the host, or by a kernel's stores and atomics.
    void device_allocated(const void* address, std::size_t bytes) override {
        tracked_[reinterpret_cast<std::uintptr_t>(address)] = std::vector<bool>(bytes, false);
    }
    void device_freed(const void* address) override { tracked_.erase(reinterpret_cast<std::uintptr_t>(address)); }
    void device_written(const void* address, std::size_t bytes) override {
        mark_written(reinterpret_cast<std::uintptr_t>(address), bytes);
    }
    void warp_stored(const void* address, std::size_t bytes) override {
        if (info_ == nullptr) return;
        const auto begin = reinterpret_cast<std::uintptr_t>(address), end = begin + bytes;
        const bool shared = is_shared(begin);
        if (!shared) mark_written(begin, bytes);
        auto& map = shared ? shared_shadow_ : global_shadow_;
        for (std::uintptr_t word = begin & ~std::uintptr_t{3}; word < end; word += 4) {
            Shadow& s = map[word];
            for (unsigned b = 0; b < 4; ++b) {
                if (word + b >= begin && word + b < end) s.written |= static_cast<std::uint8_t>(1u << b);
            }
            s.writer.valid = false;  // no one lane wrote it: nothing to race with
        }
    }

    bool wants_outputs() const override { return pictures_; }
    // The first wrong output of each test, array and size (a test run under
    // several schedules compares the same output again and again).
    void output_compared(show::ComparedOutput output) override {
        for (const show::ComparedOutput& o : outputs_) {
            if (o.test == output.test && o.name == output.name && o.got.size() == output.got.size()) return;
        }
        if (outputs_.size() < kMaxOutputs) outputs_.push_back(std::move(output));
    }

    // ---- from the __tsan_* callbacks

    void access(std::uintptr_t pc, const volatile void* pointer, std::size_t size, std::uint8_t flags) {
        if (info_ == nullptr || threads_.empty()) return;
        const auto address = reinterpret_cast<std::uintptr_t>(pointer);
        if (is_shared(address)) {
            flags |= kShared;
        } else if (!is_global(address)) {
            return;  // the thread's stack, or the emulator's own data
        }
        instrumented_code_ran = true;
        note_block();
        const std::uint32_t linear = thread_linear();
        ThreadState& t = threads_[linear];
        shadow_check(pc, address, size, flags, linear, t);
        if (small_launch_ && !(flags & kShared) && (flags & kWrite)) note_write(pc, address, size, flags, linear, t);
        // Atomics are not loads or stores for the L1's ld/st pipes: none of the
        // counts. Shared-memory atomics are kept for ./course show's pictures
        // of contention (lanes updating one word, or one bank, one at a time).
        if ((flags & kAtomic) && !(pictures_ && (flags & kShared))) return;
        if (flags & kAtomic) pc = atomic_site_pc(pc);
        const std::uint32_t k = t.executions.count(pc);
        if (accesses_.size() >= kMaxBlockAccesses) {
            block_truncated_ = true;
            return;
        }
        accesses_.push_back(Access{pc, address, t.barrier_epoch, t.warp_epoch, k, static_cast<std::uint32_t>(size),
                                   static_cast<std::uint16_t>(linear), flags});
    }

    // From __tsan_atomic_thread_fence (__threadfence() and its kin): the
    // running thread's fence, numbered in the order fences run in the launch.
    void fence() {
        if (info_ == nullptr || threads_.empty()) return;
        note_block();
        fences_[grid_thread(block_linear_, thread_linear())].push_back(++fence_count_);
    }

    // From __sanitizer_cov_trace_pc: the running thread entered the basic
    // block whose instrumentation call returns to `pc`.
    void block_entered(std::uintptr_t pc) {
        if (info_ == nullptr || threads_.empty()) return;
        threads_[thread_linear()].blocks.count(pc);
    }

    Report report();

private:
    // Adds the blocks a thread entered in the interval it leaves (or ends
    // in) to its warp's, for group_divergence().
    void flush_blocks(std::uint32_t linear, ThreadState& t) {
        // 24 bits for each epoch: more barriers or warp collectives than that in one block only merge intervals.
        const std::uint64_t key = (std::uint64_t{linear / 32} << 48) | (std::uint64_t{t.barrier_epoch & 0xffffff} << 24) |
                                  (t.warp_epoch & 0xffffff);
        WarpInterval& w = intervals_[key];
        ++w.lanes;
        // The lambdas capture the bindings by init-capture: Clang before 16
        // cannot capture a structured binding itself.
        for (const auto& [pc, count] : t.blocks.counts) {
            auto b = std::find_if(w.blocks.begin(), w.blocks.end(),
                                  [pc = pc](const WarpInterval::Block& x) { return x.pc == pc; });
            if (b == w.blocks.end()) b = w.blocks.insert(w.blocks.end(), WarpInterval::Block{pc, {}});
            auto c = std::find_if(b->lanes_by_count.begin(), b->lanes_by_count.end(),
                                  [count = count](const auto& x) { return x.first == count; });
            if (c == b->lanes_by_count.end()) b->lanes_by_count.emplace_back(count, 1);
            else ++c->second;
        }
        t.blocks.clear();
    }

    void group_divergence();

    static const char* kernel_name(const char* name) {
        // Stable storage: launch names may be temporaries. Never destroyed,
        // since COURSE_EMU_ANALYZE=1's report is written at exit, after the
        // destructors of statics made after its atexit() (this one's among them).
        static auto* names = new std::set<std::string>;
        return names->insert(name).first->c_str();
    }

    void note_block() {
        if (have_block_) return;
        const uint3 b = current_thread->block_idx;
        block_linear_ = b.x + info_->grid.x * (b.y + info_->grid.y * b.z);
        have_block_ = true;
    }

    // A thread of the grid, for fences_.
    std::uint64_t grid_thread(std::uint32_t block, std::uint32_t thread) const {
        return std::uint64_t{block} * threads_.size() + thread;
    }

    std::uint32_t thread_linear() const {
        const uint3 t = current_thread->thread_idx;
        return t.x + info_->block.x * (t.y + info_->block.y * t.z);
    }

    bool is_shared(std::uintptr_t a) const {
        if (a >= dynamic_begin_ && a < dynamic_end_) return true;
        for (const auto& r : static_shared_) {
            if (a >= r.first && a < r.second) return true;
        }
        return false;
    }

    bool is_global(std::uintptr_t a) const {
        auto it = std::upper_bound(allocations_.begin(), allocations_.end(), a,
                                   [](std::uintptr_t v, const auto& e) { return v < reinterpret_cast<std::uintptr_t>(e.first); });
        if (it == allocations_.begin()) return false;
        --it;
        const auto start = reinterpret_cast<std::uintptr_t>(it->first);
        return a < start + ((it->second + 255) / 256 * 256);
    }

    // Two accesses race when they are by different threads with no barrier
    // (or, within a warp, no warp collective) between them; of different
    // blocks, with no fences between them either.
    bool concurrent(const Who& a, const Who& b) const {
        if (!a.valid || (a.mask & b.mask) == 0 || a.grid_phase != b.grid_phase) return false;
        if (a.block != b.block) return !fenced_between(a, b);
        if (a.thread == b.thread || a.barrier_epoch != b.barrier_epoch) return false;
        return a.thread / 32 != b.thread / 32 || a.warp_epoch == b.warp_epoch;
    }

    // Whether a fence of a's thread after `a` ran before a fence of b's
    // thread before `b` (b is the later access): every fence is taken as a
    // sequentially consistent read-modify-write of one word, which orders
    // what its thread did before it with what the thread of any later fence
    // does after that one. That is what lets a block publish its results
    // with a fence and an atomic ticket, and the last block read them after
    // its own fence (lesson 11's sampled path); it also orders a read after
    // a fence that merely happened to run later, with no flag between them.
    bool fenced_between(const Who& a, const Who& b) const {
        const auto mine = fences_.find(grid_thread(a.block, a.thread));
        const auto theirs = fences_.find(grid_thread(b.block, b.thread));
        if (mine == fences_.end() || theirs == fences_.end()) return false;
        const auto released = std::upper_bound(mine->second.begin(), mine->second.end(), a.fences);
        const auto acquired = std::upper_bound(theirs->second.begin(), theirs->second.end(), b.fences);
        return released != mine->second.end() && acquired != theirs->second.begin() && *released < *std::prev(acquired);
    }

    void race(bool shared, const Who& earlier, bool earlier_writes, const Who& later, bool later_writes) {
        RaceSeen& r = races_[RaceKey{shared, kernel_, earlier.pc, later.pc, earlier_writes, later_writes}];
        if (r.count++ == 0) {
            r.first_block = unflatten(earlier.block, info_->grid);
            r.first_thread = unflatten(earlier.thread, info_->block);
            r.second_block = unflatten(later.block, info_->grid);
            r.second_thread = unflatten(later.thread, info_->block);
        }
    }

    void shadow_check(std::uintptr_t pc, std::uintptr_t address, std::size_t size, std::uint8_t flags,
                      std::uint32_t linear, const ThreadState& t) {
        const bool shared = flags & kShared;
        if (!shared) {
            // A load, or an atomic (which reads before it writes), of bytes
            // nothing wrote since cudaMalloc; then stores and atomics count as writes.
            if ((!(flags & kWrite) || (flags & kAtomic)) && !all_written(address, size)) {
                UninitSeen& u = uninitialised_[PcKey{kernel_, pc, true}];
                if (u.count++ == 0) {
                    u.block = current_thread->block_idx;
                    u.thread = current_thread->thread_idx;
                }
            }
            if (flags & (kWrite | kAtomic)) mark_written(address, size);
        }
        auto& map = shared ? shared_shadow_ : global_shadow_;
        const std::uintptr_t end = address + size;
        for (std::uintptr_t word = address & ~std::uintptr_t{3}; word < end; word += 4) {
            std::uint8_t mask = 0;
            for (unsigned b = 0; b < 4; ++b) {
                if (word + b >= address && word + b < end) mask |= static_cast<std::uint8_t>(1u << b);
            }
            Shadow& s = map[word];
            const Who me{true, block_linear_, static_cast<std::uint16_t>(linear), t.barrier_epoch, t.warp_epoch, pc, mask,
                         grid_phase_, fence_count_};
            if (flags & kAtomic) {
                s.written |= mask;
                s.writer.valid = false;  // an atomic orders what came before it, as far as this check goes
                continue;
            }
            if (flags & kWrite) {
                if (concurrent(s.writer, me)) race(shared, s.writer, true, me, true);
                for (const Who& r : s.readers) {
                    if (concurrent(r, me)) race(shared, r, false, me, true);
                }
                s.writer = me;
                s.written |= mask;
            } else {
                if (concurrent(s.writer, me)) race(shared, s.writer, true, me, false);
                if (shared && (mask & ~s.written) != 0) {
                    UninitSeen& u = uninitialised_[PcKey{kernel_, pc, false}];
                    if (u.count++ == 0) {
                        u.block = current_thread->block_idx;
                        u.thread = current_thread->thread_idx;
                    }
                }
                // Keep two readers of different threads: enough to find a race
                // with any later writer (who differs from one of them).
                Who* slot = nullptr;
                for (Who& r : s.readers) {
                    if (!r.valid || (r.thread == me.thread && r.block == me.block) ||
                        (r.block == me.block && r.barrier_epoch < me.barrier_epoch)) {
                        slot = &r;
                        break;
                    }
                }
                if (slot != nullptr) *slot = me;
            }
        }
    }

    // The tracked allocation holding `address`, or null.
    std::vector<bool>* tracked_at(std::uintptr_t address, std::uintptr_t& start) {
        auto it = tracked_.upper_bound(address);
        if (it == tracked_.begin()) return nullptr;
        --it;
        if (address >= it->first + it->second.size()) return nullptr;
        start = it->first;
        return &it->second;
    }
    void mark_written(std::uintptr_t address, std::size_t size) {
        std::uintptr_t start = 0;
        std::vector<bool>* written = tracked_at(address, start);
        if (written == nullptr) return;
        const std::size_t end = std::min<std::size_t>(address - start + size, written->size());
        for (std::size_t i = address - start; i < end; ++i) (*written)[i] = true;
    }
    bool all_written(std::uintptr_t address, std::size_t size) {
        std::uintptr_t start = 0;
        std::vector<bool>* written = tracked_at(address, start);
        if (written == nullptr) return true;
        const std::size_t end = std::min<std::size_t>(address - start + size, written->size());
        for (std::size_t i = address - start; i < end; ++i) {
            if (!(*written)[i]) return false;
        }
        return true;
    }

    void group_block();

    // ./course show: who wrote each address of a small launch.
    void note_write(std::uintptr_t pc, std::uintptr_t address, std::size_t size, std::uint8_t flags,
                    std::uint32_t linear, const ThreadState& t) {
        WriteSeen& w = writes_[address];
        const Who me{true, block_linear_, static_cast<std::uint16_t>(linear), t.barrier_epoch, t.warp_epoch, pc, 1,
                     grid_phase_, fence_count_};
        if (flags & kAtomic) w.atomic = true;
        else if (w.last.valid && !w.atomic && concurrent(w.last, me)) w.race = true;
        if (!w.last.valid || w.last.block != me.block || w.last.thread != me.thread) ++w.writers;
        w.last = me;
        w.size = w.size == 0 ? static_cast<std::uint32_t>(size) : std::min<std::uint32_t>(w.size, static_cast<std::uint32_t>(size));
    }
    void keep_writer_maps();
    void keep_timeline();
    void keep_sample(const PcKey& key, unsigned cost, unsigned ideal, std::size_t from, std::size_t to);

    bool pictures_ = false;
    bool small_launch_ = false;
    std::unordered_map<std::uintptr_t, WriteSeen> writes_;
    std::map<PcKey, SampleSeen> samples_;
    std::vector<WriterMap> writer_maps_;
    struct KeptMaps {
        bool kept = false, racy = false;
        std::size_t written = 0;
    };
    std::map<const char*, KeptMaps> writer_maps_kept_;
    std::vector<std::vector<SyncMark>> marks_;  // by thread of the running block
    std::vector<SourceLine> mark_lines_;
    uint3 marks_block_{};
    bool marks_block_set_ = false;
    std::vector<BarrierTimeline> timelines_;
    std::vector<show::ComparedOutput> outputs_;

    const LaunchInfo* info_ = nullptr;
    const char* kernel_ = "";
    std::vector<std::pair<const char*, std::size_t>> allocations_;
    std::uintptr_t dynamic_begin_ = 0, dynamic_end_ = 0;
    std::vector<std::pair<std::uintptr_t, std::uintptr_t>> static_shared_;
    std::unordered_map<std::uintptr_t, Shadow> shared_shadow_, global_shadow_;
    std::vector<Access> accesses_;
    std::unordered_map<std::uint64_t, WarpInterval> intervals_;  // (warp, barrier epoch, warp epoch)
    std::unordered_map<std::uintptr_t, BlockLine> block_line_of_;
    std::vector<SourceLine> block_lines_;
    std::map<std::pair<const char*, std::size_t>, DivergenceStats> divergence_;  // (kernel, line index)
    std::vector<ThreadState> threads_;
    std::uint32_t block_linear_ = 0;
    bool have_block_ = false;
    std::uint32_t grid_phase_ = 0;
    std::uint32_t fence_count_ = 0;                                          // fences run in this launch
    std::unordered_map<std::uint64_t, std::vector<std::uint32_t>> fences_;  // by grid_thread: its fences' numbers
    bool block_truncated_ = false;
    unsigned long long truncated_blocks_ = 0;
    std::map<const char*, unsigned long long> launches_;
    std::map<PcKey, SharedStats> shared_stats_;
    std::map<PcKey, unsigned long long> atomic_requests_;  ///< ./course show: shared-memory atomics' warp requests
    /// Call sites of atomic functions, by their stand-in addresses: a call's
    /// instruction is inside the emulator's function, the same for every call.
    /// The file is __builtin_FILE()'s literal, which lives as long as the
    /// program: compared as a pointer, so that no atomic allocates (a file
    /// reached through two literals gets two stand-ins, drawn as one line).
    std::vector<std::pair<const char*, int>> atomic_sites_;

    // The address an atomic is recorded under: its call site's stand-in
    // (1, 2, ...: no code is there) when the atomic function named it, else `pc`.
    std::uintptr_t atomic_site_pc(std::uintptr_t pc) {
        const course_emu::detail::CallSite site = course_emu::detail::current_atomic_site();
        if (site.line == 0) return pc;
        const std::pair<const char*, int> key{site.file, site.line};
        auto it = std::find(atomic_sites_.begin(), atomic_sites_.end(), key);
        if (it == atomic_sites_.end()) it = atomic_sites_.insert(it, key);
        return static_cast<std::uintptr_t>(it - atomic_sites_.begin()) + 1;
    }
    std::map<PcKey, GlobalStats> global_stats_;
    std::map<RaceKey, RaceSeen> races_;
    std::map<PcKey, UninitSeen> uninitialised_;  // `store` in the key: false for shared, true for global
    std::map<std::uintptr_t, std::vector<bool>> tracked_;
};

// Warp requests: the k-th execution of an instruction by the lanes of a
// warp in one synchronisation interval.
void Recorder::group_block() {
    if (block_truncated_) ++truncated_blocks_;
    if (accesses_.empty()) return;
    const unsigned n = static_cast<unsigned>(threads_.size());
    auto key = [](const Access& a) {
        return std::make_tuple(a.flags, a.thread / 32, a.barrier_epoch, a.warp_epoch, a.pc, a.k);
    };
    std::sort(accesses_.begin(), accesses_.end(), [&](const Access& a, const Access& b) {
        return std::make_pair(key(a), a.thread) < std::make_pair(key(b), b.thread);
    });
    std::vector<std::uintptr_t> units;
    std::vector<std::pair<std::uintptr_t, std::uintptr_t>> ranges;
    for (std::size_t i = 0; i < accesses_.size();) {
        std::size_t j = i;
        while (j < accesses_.size() && key(accesses_[j]) == key(accesses_[i])) ++j;
        const Access& first = accesses_[i];
        const unsigned warp = first.thread / 32;
        const unsigned lanes_in_warp = std::min(32u, n - warp * 32);
        unsigned lanes = 0;
        for (std::size_t x = i; x < j; ++x) lanes += x == i || accesses_[x].thread != accesses_[x - 1].thread;
        const PcKey pc_key{kernel_, first.pc, (first.flags & kWrite) != 0};
        units.clear();
        if (first.flags & kAtomic) {
            // Shared-memory atomics: every lane's word counts, the same word
            // too (an atomic is no broadcast: lanes updating one word, one bin
            // of a histogram, are served one after another).
            unsigned per_bank[32] = {};
            unsigned degree = 0, words = 0;
            for (std::size_t x = i; x < j; ++x) {
                for (std::uintptr_t w = accesses_[x].address / 4; w <= (accesses_[x].address + accesses_[x].size - 1) / 4; ++w) {
                    degree = std::max(degree, ++per_bank[w % 32]);
                    ++words;
                }
            }
            keep_sample(pc_key, degree, (words + 31) / 32, i, j);
            ++atomic_requests_[pc_key];
            i = j;
            continue;
        }
        if (first.flags & kShared) {
            for (std::size_t x = i; x < j; ++x) {
                for (std::uintptr_t w = accesses_[x].address / 4; w <= (accesses_[x].address + accesses_[x].size - 1) / 4; ++w) {
                    units.push_back(w);
                }
            }
            std::sort(units.begin(), units.end());
            units.erase(std::unique(units.begin(), units.end()), units.end());
            unsigned per_bank[32] = {};
            unsigned degree = 0;
            for (std::uintptr_t w : units) degree = std::max(degree, ++per_bank[w % 32]);
            if (pictures_) keep_sample(pc_key, degree, static_cast<unsigned>((units.size() + 31) / 32), i, j);
            SharedStats& s = shared_stats_[pc_key];
            ++s.requests;
            s.wavefronts += degree;
            s.ideal += (units.size() + 31) / 32;
            s.max_degree = std::max(s.max_degree, degree);
            s.partial += lanes < lanes_in_warp;
        } else {
            ranges.clear();
            for (std::size_t x = i; x < j; ++x) {
                const Access& a = accesses_[x];
                ranges.emplace_back(a.address, a.address + a.size);
                for (std::uintptr_t s = a.address / 32; s <= (a.address + a.size - 1) / 32; ++s) units.push_back(s);
            }
            std::sort(units.begin(), units.end());
            units.erase(std::unique(units.begin(), units.end()), units.end());
            std::sort(ranges.begin(), ranges.end());
            std::uintptr_t bytes = 0, covered_to = 0;
            for (const auto& [b, e] : ranges) {
                const std::uintptr_t from = std::max(b, covered_to);
                if (e > from) bytes += e - from;
                covered_to = std::max(covered_to, e);
            }
            if (pictures_) {
                keep_sample(pc_key, static_cast<unsigned>(units.size()), static_cast<unsigned>((bytes + 31) / 32), i, j);
            }
            GlobalStats& g = global_stats_[pc_key];
            ++g.requests;
            g.sectors += units.size();
            g.ideal += (bytes + 31) / 32;
            g.partial += lanes < lanes_in_warp;
        }
        i = j;
    }
}

// ./course show: keeps the request accesses_[from, to) of `key` if it is
// the instruction's first, or worse (more cost over its ideal) than any before.
void Recorder::keep_sample(const PcKey& key, unsigned cost, unsigned ideal, std::size_t from, std::size_t to) {
    SampleSeen& seen = samples_[key];
    const long long excess = static_cast<long long>(cost) - static_cast<long long>(ideal);
    const bool first = seen.worst_excess < 0;
    if (!first && excess <= seen.worst_excess) return;
    RequestSample sample;
    sample.block = unflatten(block_linear_, info_->grid);
    sample.warp = accesses_[from].thread / 32;
    sample.cost = cost;
    sample.ideal = ideal;
    for (std::size_t x = from; x < to; ++x) {
        const Access& a = accesses_[x];
        if (!sample.lanes.empty() && sample.lanes.back().lane == a.thread % 32u) continue;  // one access per lane
        sample.lanes.push_back(LaneAccess{a.thread % 32u, a.address, a.size});
    }
    if (first) seen.first = sample;
    seen.worst = std::move(sample);
    seen.worst_excess = std::max<long long>(excess, 0);
}

// ./course show: per kernel, the writer maps (per allocation written) of
// one small launch: the first with a race, else the one that wrote the most
// addresses (up to what a map keeps), the first of equals.
void Recorder::keep_writer_maps() {
    if (writes_.empty()) return;
    KeptMaps& k = writer_maps_kept_[kernel_];
    bool race = false;
    for (const auto& [address, w] : writes_) race = race || w.race;
    const std::size_t written = std::min(writes_.size(), kMaxWriterElements);
    if (k.kept && (k.racy || (!race && written <= k.written))) return;
    if (k.kept) {  // replace the maps kept before
        writer_maps_.erase(std::remove_if(writer_maps_.begin(), writer_maps_.end(),
                                          [&](const WriterMap& m) { return m.kernel == kernel_; }),
                           writer_maps_.end());
    }
    k = KeptMaps{true, race, written};
    std::map<std::uintptr_t, std::vector<std::pair<std::uintptr_t, const WriteSeen*>>> by_allocation;
    for (const auto& [address, w] : writes_) {
        auto it = std::upper_bound(allocations_.begin(), allocations_.end(), address,
                                   [](std::uintptr_t v, const auto& e) { return v < reinterpret_cast<std::uintptr_t>(e.first); });
        if (it == allocations_.begin()) continue;
        --it;
        by_allocation[reinterpret_cast<std::uintptr_t>(it->first)].emplace_back(address, &w);
    }
    for (auto& [start, list] : by_allocation) {
        std::sort(list.begin(), list.end(), [](const auto& a, const auto& b) { return a.first < b.first; });
        WriterMap map;
        map.kernel = kernel_;
        map.launch = launches_[kernel_];
        map.grid = info_->grid;
        map.block = info_->block;
        for (const auto& e : allocations_) {
            if (reinterpret_cast<std::uintptr_t>(e.first) == start) map.allocation_bytes = e.second;
        }
        unsigned element = ~0u;
        for (const auto& [address, w] : list) element = std::min(element, w->size);
        map.element_bytes = std::max(1u, element);
        for (const auto& [address, w] : list) {
            const std::uint64_t index = (address - start) / map.element_bytes;
            if (!map.elements.empty() && map.elements.back().index == index) continue;
            if (map.elements.size() >= kMaxWriterElements) {
                map.truncated = true;
                break;
            }
            map.elements.push_back(WrittenElement{index, unflatten(w->last.block, info_->grid),
                                                  unflatten(w->last.thread, info_->block), w->writers, w->race,
                                                  w->atomic});
        }
        writer_maps_.push_back(std::move(map));
    }
}

// ./course show: per kernel, the barrier timeline of its first block, or of
// the first block where a thread never left a barrier (a fault).
void Recorder::keep_timeline() {
    if (marks_.empty() || !marks_block_set_) return;
    // A thread is marked released when it goes on past the barrier, but a
    // barrier releases all its threads at once: those the block stopped
    // before they went on (a fault elsewhere) were released too. So an
    // arrival is still waiting only if no thread went on from the same
    // barrier (its k-th arrival at the same line).
    std::set<std::tuple<std::size_t, std::uint16_t, std::uint8_t>> opened;
    for (const auto& m : marks_) {
        for (std::size_t c = 0; c < m.size(); ++c) {
            if (m[c].released) opened.insert({c, m[c].line, m[c].kind});
        }
    }
    for (auto& m : marks_) {
        for (std::size_t c = 0; c < m.size(); ++c) {
            if (!m[c].released && opened.count({c, m[c].line, m[c].kind})) m[c].released = true;
        }
    }
    bool stuck = false;
    for (const auto& m : marks_) stuck = stuck || (!m.empty() && !m.back().released);
    auto it = std::find_if(timelines_.begin(), timelines_.end(),
                           [&](const BarrierTimeline& t) { return t.kernel == kernel_; });
    if (it != timelines_.end() && (it->stuck || !stuck)) return;
    BarrierTimeline t{kernel_, marks_block_, info_->block, stuck, mark_lines_, std::move(marks_)};
    if (it != timelines_.end()) *it = std::move(t);
    else timelines_.push_back(std::move(t));
    marks_.clear();
}

// ---- source lines

// `paths`, if given, receives each address's file with its folders ("" if unknown).
// `caller`: an address inside functions inlined from the emulator's headers
// or the system's (an atomic's) gets the line of the innermost frame of its
// inlining chain outside them, the line that called them.
std::map<std::uintptr_t, SourceLine> source_lines(const std::vector<std::uintptr_t>& pcs,
                                                  std::map<std::uintptr_t, std::string>* paths = nullptr,
                                                  bool caller = false) {
    std::map<std::uintptr_t, SourceLine> out;
    // Per object file: the addresses relative to its load base when it is
    // position-independent (ET_DYN), else absolute.
    std::map<std::string, std::vector<std::pair<std::uintptr_t, std::uintptr_t>>> by_object;
    for (std::uintptr_t pc : pcs) {
        Dl_info info{};
        out[pc] = SourceLine{"?", 0};
        if (dladdr(reinterpret_cast<void*>(pc), &info) == 0 || info.dli_fbase == nullptr) continue;
        const auto* header = static_cast<const Elf64_Ehdr*>(info.dli_fbase);
        const std::uintptr_t base = header->e_type == ET_DYN ? reinterpret_cast<std::uintptr_t>(info.dli_fbase) : 0;
        std::string object = info.dli_fname != nullptr ? info.dli_fname : "";
        if (object.empty() || object.find('/') == std::string::npos) object = "/proc/self/exe";
        by_object[object].emplace_back(pc, pc - base);
    }
    // Not a structured binding: take() below captures the list, which Clang
    // before 16 cannot do for a binding.
    for (const auto& entry : by_object) {
        const std::string& object = entry.first;
        const auto& list = entry.second;
        for (std::size_t from = 0; from < list.size(); from += 200) {
            std::string command = std::string("addr2line ") + (caller ? "-i -a " : "") + "-e '" + object + "'";
            const std::size_t to = std::min(list.size(), from + 200);
            for (std::size_t i = from; i < to; ++i) {
                char hex[32];
                std::snprintf(hex, sizeof hex, " 0x%llx", static_cast<unsigned long long>(list[i].second));
                command += hex;
            }
            FILE* pipe = popen(command.c_str(), "r");
            if (pipe == nullptr) continue;
            char line[4096];
            // Without `caller`: a line per address. With it (-i -a): each
            // address's own line ("0x..."), then its frames, innermost first.
            std::size_t i = from;
            bool chosen = false;  // `caller`: the address's frame is taken
            auto take = [&](std::size_t at, const std::string& text) {
                const auto colon = text.rfind(':');
                if (colon == std::string::npos) return false;
                std::string file = text.substr(0, colon);
                if (paths != nullptr) (*paths)[list[at].first] = file;
                if (const auto slash = file.rfind('/'); slash != std::string::npos) file = file.substr(slash + 1);
                out[list[at].first] = SourceLine{file, std::atoi(text.c_str() + colon + 1)};
                return file != "??" && text.rfind("/usr/", 0) != 0 && text.find("/course_emu/") == std::string::npos;
            };
            bool started = false;
            while (std::fgets(line, sizeof line, pipe) != nullptr) {
                std::string text = line;
                if (const auto d = text.find(" (discriminator"); d != std::string::npos) text.resize(d);
                while (!text.empty() && (text.back() == '\n' || text.back() == ' ')) text.pop_back();
                if (!caller) {
                    if (i >= to) break;
                    take(i++, text);
                    continue;
                }
                if (text.rfind("0x", 0) == 0) {  // the next address
                    if (started) ++i;
                    started = true;
                    chosen = false;
                    if (i >= to) break;
                    continue;
                }
                if (started && !chosen) chosen = take(i, text);  // the outermost frame stays if none is the caller's
            }
            pclose(pipe);
        }
    }
    return out;
}

// Divergence: per warp and synchronisation interval, the basic blocks its
// lanes entered and how often. A block some lanes of the interval entered
// fewer times than others (or not at all) is where the warp split; each
// distinct entry count beyond the first is one split (an `if` taken by some
// lanes: 1; a loop whose lanes run 2 or 3 iterations, or 0: 2).
void Recorder::group_divergence() {
    std::vector<std::uintptr_t> unknown;
    for (const auto& [key, w] : intervals_) {
        for (const auto& b : w.blocks) {
            if (block_line_of_.find(b.pc) == block_line_of_.end()) unknown.push_back(b.pc);
        }
    }
    if (!unknown.empty()) {
        std::sort(unknown.begin(), unknown.end());
        unknown.erase(std::unique(unknown.begin(), unknown.end()), unknown.end());
        std::map<std::uintptr_t, std::string> paths;
        auto lines = source_lines(unknown, &paths);
        // A block whose first instruction has no line of its own (Clang gives
        // line 0 to a loop body's first instruction after its phi nodes) takes
        // the line of the instruction after its coverage call: the return
        // address, pc + 1.
        std::vector<std::uintptr_t> after;
        for (std::uintptr_t pc : unknown) {
            if (lines.at(pc).line == 0) after.push_back(pc + 1);
        }
        if (!after.empty()) {
            std::map<std::uintptr_t, std::string> after_paths;
            const auto after_lines = source_lines(after, &after_paths);
            for (std::uintptr_t next : after) {
                lines[next - 1] = after_lines.at(next);
                paths[next - 1] = after_paths[next];
            }
        }
        for (std::uintptr_t pc : unknown) {
            const SourceLine& where = lines.at(pc);
            const std::string& path = paths[pc];
            // The emulator's own headers (a warp collective's loop over its
            // lanes) and the system's are not the analysed code's branches.
            const bool counted = where.line > 0 && path.find("/course_emu/") == std::string::npos &&
                                 path.rfind("/usr/", 0) != 0;
            auto it = std::find_if(block_lines_.begin(), block_lines_.end(), [&](const SourceLine& l) {
                return l.file == where.file && l.line == where.line;
            });
            if (it == block_lines_.end()) it = block_lines_.insert(block_lines_.end(), where);
            block_line_of_[pc] = BlockLine{static_cast<std::size_t>(it - block_lines_.begin()), counted};
        }
    }
    struct LineSeen {
        std::size_t line;
        bool divergent = false;
        unsigned min_lanes = ~0u, max_lanes = 0;
        unsigned long long splits = 0;
    };
    std::vector<LineSeen> seen;
    for (auto& [key, w] : intervals_) {
        seen.clear();
        for (auto& b : w.blocks) {
            const BlockLine& where = block_line_of_.at(b.pc);
            if (!where.counted) continue;
            auto s = std::find_if(seen.begin(), seen.end(), [&](const LineSeen& l) { return l.line == where.line; });
            if (s == seen.end()) s = seen.insert(seen.end(), LineSeen{where.line});
            auto& counts = b.lanes_by_count;
            unsigned took = 0;
            for (const auto& [count, lanes] : counts) took += lanes;
            if (took < w.lanes) counts.emplace_back(0, w.lanes - took);  // the lanes that never entered it
            if (counts.size() < 2) continue;
            std::sort(counts.begin(), counts.end());
            // Lanes entering it at the last entry (those with the most
            // entries), and at the first entry not all lanes make.
            s->divergent = true;
            s->min_lanes = std::min(s->min_lanes, counts.back().second);
            s->max_lanes = std::max(s->max_lanes, w.lanes - counts.front().second);
            s->splits += counts.size() - 1;
        }
        for (const LineSeen& l : seen) {
            DivergenceStats& d = divergence_[{kernel_, l.line}];
            ++d.executions;
            d.warp_lanes = std::max(d.warp_lanes, w.lanes);
            if (!l.divergent) continue;
            ++d.divergent;
            d.splits += l.splits;
            d.min_lanes = std::min(d.min_lanes, l.min_lanes);
            d.max_lanes = std::max(d.max_lanes, l.max_lanes);
        }
    }
}

Report Recorder::report() {
    std::vector<std::uintptr_t> pcs;
    for (const auto& [k, s] : shared_stats_) pcs.push_back(k.pc);
    for (const auto& [k, s] : global_stats_) pcs.push_back(k.pc);
    for (const auto& [k, s] : races_) {
        pcs.push_back(k.first_pc);
        pcs.push_back(k.second_pc);
    }
    for (const auto& [k, s] : uninitialised_) pcs.push_back(k.pc);
    std::sort(pcs.begin(), pcs.end());
    pcs.erase(std::unique(pcs.begin(), pcs.end()), pcs.end());
    std::map<std::uintptr_t, std::string> paths;
    auto lines = source_lines(pcs, &paths);
    // An atomic's instruction is inside the emulator's atomic function (and
    // the library's std::atomic_ref). Those that name their call site were
    // recorded under its stand-in; the others get the innermost frame of the
    // inlining chain outside those headers, the caller's line where inlined.
    std::vector<std::uintptr_t> atomic_pcs;
    for (const auto& [k, n] : atomic_requests_) {
        if (k.pc > atomic_sites_.size()) atomic_pcs.push_back(k.pc);  // not a call site's stand-in
    }
    std::sort(atomic_pcs.begin(), atomic_pcs.end());
    atomic_pcs.erase(std::unique(atomic_pcs.begin(), atomic_pcs.end()), atomic_pcs.end());
    for (const auto& [pc, where] : source_lines(atomic_pcs, &paths, true)) lines[pc] = where;
    for (std::size_t i = 0; i < atomic_sites_.size(); ++i) {
        const std::string path = atomic_sites_[i].first;
        const int line = atomic_sites_[i].second;
        const auto slash = path.rfind('/');
        lines[i + 1] = SourceLine{slash == std::string::npos ? path : path.substr(slash + 1), line};
        paths[i + 1] = path;
    }
    auto same_line = [](const SourceLine& a, const SourceLine& b) { return a.file == b.file && a.line == b.line; };

    Report r;
    r.truncated_blocks = truncated_blocks_;
    // `&k = k`: Clang before 16 cannot capture a structured binding itself.
    for (const auto& [k, s] : shared_stats_) {
        const SourceLine& where = lines.at(k.pc);
        auto it = std::find_if(r.shared.begin(), r.shared.end(), [&, &k = k](const SharedAccess& a) {
            return a.kernel == k.kernel && a.store == k.store && same_line(a.where, where);
        });
        if (it == r.shared.end()) it = r.shared.insert(r.shared.end(), SharedAccess{{k.kernel, where, k.store}});
        it->requests += s.requests;
        it->wavefronts += s.wavefronts;
        it->ideal_wavefronts += s.ideal;
        it->max_degree = std::max(it->max_degree, s.max_degree);
        it->partial_requests += s.partial;
    }
    for (const auto& [k, g] : global_stats_) {
        const SourceLine& where = lines.at(k.pc);
        auto it = std::find_if(r.global.begin(), r.global.end(), [&, &k = k](const GlobalAccess& a) {
            return a.kernel == k.kernel && a.store == k.store && same_line(a.where, where);
        });
        if (it == r.global.end()) it = r.global.insert(r.global.end(), GlobalAccess{{k.kernel, where, k.store}});
        it->requests += g.requests;
        it->sectors += g.sectors;
        it->ideal_sectors += g.ideal;
        it->partial_requests += g.partial;
    }
    for (const auto& [k, seen] : races_) {
        const SourceLine& a = lines.at(k.first_pc);
        const SourceLine& b = lines.at(k.second_pc);
        auto it = std::find_if(r.races.begin(), r.races.end(), [&, &k = k](const Race& x) {
            return x.shared == k.shared && x.kernel == k.kernel && same_line(x.first, a) && same_line(x.second, b) &&
                   x.first_writes == k.first_writes && x.second_writes == k.second_writes;
        });
        if (it == r.races.end()) {
            it = r.races.insert(r.races.end(), Race{k.shared, k.kernel, a, b, k.first_writes, k.second_writes,
                                                    seen.first_block, seen.first_thread, seen.second_block,
                                                    seen.second_thread, 0});
        }
        it->count += seen.count;
    }
    for (const auto& [k, seen] : uninitialised_) {
        const SourceLine& where = lines.at(k.pc);
        auto it = std::find_if(r.uninitialised.begin(), r.uninitialised.end(), [&, &k = k](const UninitialisedRead& u) {
            return u.shared == !k.store && u.kernel == k.kernel && same_line(u.where, where);
        });
        if (it == r.uninitialised.end()) {
            it = r.uninitialised.insert(r.uninitialised.end(),
                                        UninitialisedRead{!k.store, k.kernel, where, seen.block, seen.thread, 0});
        }
        it->count += seen.count;
    }
    for (const auto& [k, d] : divergence_) {
        if (d.divergent == 0) continue;
        r.divergence.push_back(DivergentLine{k.first, block_lines_[k.second], d.executions, d.divergent,
                                             d.splits, d.min_lanes, d.max_lanes, d.warp_lanes});
    }
    for (const auto& [kernel, launches] : launches_) {
        KernelTotals t{kernel, launches};
        for (const DivergentLine& d : r.divergence) {
            if (d.kernel == kernel) t.divergent_splits += d.splits;
        }
        for (const SharedAccess& s : r.shared) {
            if (s.kernel != kernel) continue;
            (s.store ? t.shared_store_requests : t.shared_load_requests) += s.requests;
            (s.store ? t.shared_store_conflicts : t.shared_load_conflicts) += s.conflicts();
        }
        for (const GlobalAccess& g : r.global) {
            if (g.kernel != kernel) continue;
            (g.store ? t.global_store_requests : t.global_load_requests) += g.requests;
            (g.store ? t.global_store_sectors : t.global_load_sectors) += g.sectors;
        }
        r.kernels.push_back(t);
    }
    auto by_line = [](const auto& a, const auto& b) {
        return std::tie(a.kernel, a.where.file, a.where.line, a.store) < std::tie(b.kernel, b.where.file, b.where.line, b.store);
    };
    std::sort(r.shared.begin(), r.shared.end(), by_line);
    std::sort(r.global.begin(), r.global.end(), by_line);
    std::sort(r.divergence.begin(), r.divergence.end(), [](const DivergentLine& a, const DivergentLine& b) {
        return std::tie(a.kernel, a.where.file, a.where.line) < std::tie(b.kernel, b.where.file, b.where.line);
    });

    // ./course show's pictures: one per kernel, memory and source line (an
    // instruction of the line's with the worst request, and its first).
    for (const auto& [k, seen] : samples_) {
        const SourceLine& where = lines.at(k.pc);
        const bool atomic = atomic_requests_.count(k) != 0;
        const bool shared = atomic || shared_stats_.count(k) != 0;
        auto it = std::find_if(r.pictures.requests.begin(), r.pictures.requests.end(), [&, &k = k](const RequestPicture& p) {
            return p.kernel == k.kernel && p.store == k.store && p.shared == shared && p.atomic == atomic &&
                   same_line(p.where, where);
        });
        const unsigned long long requests = atomic   ? atomic_requests_.at(k)
                                            : shared ? shared_stats_.at(k).requests
                                                     : global_stats_.at(k).requests;
        if (it == r.pictures.requests.end()) {
            it = r.pictures.requests.insert(r.pictures.requests.end(), RequestPicture{k.kernel, where, paths[k.pc], shared,
                                                                                      k.store, atomic, 0, seen.first, seen.worst});
        } else if (static_cast<long long>(seen.worst.cost) - seen.worst.ideal >
                   static_cast<long long>(it->worst.cost) - it->worst.ideal) {
            it->worst = seen.worst;
        }
        it->requests += requests;
    }
    std::sort(r.pictures.requests.begin(), r.pictures.requests.end(), [](const RequestPicture& a, const RequestPicture& b) {
        return std::tie(a.kernel, a.where.file, a.where.line, a.shared, a.store, a.atomic) <
               std::tie(b.kernel, b.where.file, b.where.line, b.shared, b.store, b.atomic);
    });
    r.pictures.writers = writer_maps_;
    r.pictures.timelines = timelines_;
    r.pictures.outputs = outputs_;
    return r;
}

Recorder g_recorder;

}  // namespace

// The recorder's containers are not for a signal to leave half updated:
// each callback is the emulator's code (detail::AnalysisSection).
void record_access(const volatile void* address, std::size_t size, std::uint8_t flags, std::uintptr_t pc) {
    if (!g_recorder.active || current_thread == nullptr) return;
    detail::AnalysisSection section;
    g_recorder.access(pc, address, size, flags);
}

void record_block_entered(std::uintptr_t pc) {
    if (!g_recorder.active || current_thread == nullptr) return;
    detail::AnalysisSection section;
    g_recorder.block_entered(pc);
}

void record_fence() {
    if (!g_recorder.active || current_thread == nullptr) return;
    detail::AnalysisSection section;
    g_recorder.fence();
}

bool instrumented() { return g_recorder.instrumented_code_ran; }

void begin() { begin(Options{}); }

void begin(const Options& options) {
    g_recorder.start(options);
    set_workers(1);
    detail::g_analysis_hooks = &g_recorder;
}

Report end() {
    detail::g_analysis_hooks = nullptr;
    g_recorder.active = false;
    set_workers(0);
    return g_recorder.report();
}

namespace {

// COURSE_EMU_ANALYZE=1: analyse every launch of the program and print the
// report when it exits (to COURSE_EMU_ANALYZE_REPORT if set, else stderr).
// COURSE_EMU_SHOW=FILE: the same, keeping the pictures, and write
// ./course show's page (course_emu/analysis_page.hpp) to FILE too, titled
// COURSE_EMU_SHOW_TITLE.
struct AnalyzeFromEnvironment {
    AnalyzeFromEnvironment() {
        const char* env = std::getenv("COURSE_EMU_ANALYZE");
        const char* show = std::getenv("COURSE_EMU_SHOW");
        if ((env != nullptr && env[0] == '1') || (show != nullptr && show[0] != '\0')) {
            begin(Options{show != nullptr && show[0] != '\0'});
            std::atexit([] {
                const Report r = end();
                if (const char* page = std::getenv("COURSE_EMU_SHOW"); page != nullptr && page[0] != '\0') {
                    PageOptions options;
                    if (const char* title = std::getenv("COURSE_EMU_SHOW_TITLE")) options.title = title;
                    if (const char* subtitle = std::getenv("COURSE_EMU_SHOW_SUBTITLE")) options.subtitle = subtitle;
                    const std::string html = html_page(r, options);
                    if (FILE* f = std::fopen(page, "w")) {
                        std::fwrite(html.data(), 1, html.size(), f);
                        std::fclose(f);
                    }
                }
                const char* path = std::getenv("COURSE_EMU_ANALYZE_REPORT");
                FILE* out = path != nullptr ? std::fopen(path, "w") : stderr;
                if (out == nullptr) out = stderr;
                std::fprintf(out, "%s", r.text().c_str());
                if (const char* csv = std::getenv("COURSE_EMU_ANALYZE_CSV")) {
                    if (FILE* c = std::fopen(csv, "w")) {
                        std::fprintf(c, "%s", r.csv().c_str());
                        std::fclose(c);
                    }
                }
                if (out != stderr) std::fclose(out);
            });
        }
    }
};
AnalyzeFromEnvironment g_analyze_from_environment;

}  // namespace
}  // namespace course_emu::analysis

