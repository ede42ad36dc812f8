// The block scheduler: the threads of a block as cooperatively switched
// fibers (Boost.Context), with barriers, warp collectives, scheduling points
// at atomics, shared memory, and faults (divergence, deadlock, bad memory
// access, time budget) turned into reports.
//
// A block is run by "runners": fibers that each run emulated threads one
// after another, taking the next thread not yet started in schedule order.
// A runner whose thread finishes moves on to the next one without any
// switch, so a kernel that never waits costs one fiber per block; only when
// a thread waits (at a barrier or a warp collective) does the scheduler start
// another runner for the threads behind it. Stacks are pooled across blocks
// (stacks.cpp); faults that arrive as signals are caught by signals.cpp.
#include "block.hpp"

#include "allocator.hpp"
#include "device_internal.hpp"
#include "grid.hpp"
#include "stacks.hpp"

#include <course_emu/detail/analysis_hooks.hpp>
#include <course_emu/scheduling.hpp>
#include <course_emu/sync.hpp>

#include <boost/context/fiber.hpp>

#include <array>
#include <chrono>
#include <csignal>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <deque>
#include <exception>
#include <string>
#include <sys/mman.h>
#include <unordered_set>
#include <vector>

namespace course_emu::detail {

namespace {

namespace ctx = boost::context;

// ---------------------------------------------------------------- the block

struct StopSignal {};  // unwinds a waiting thread when its block is abandoned

struct Runner;

struct ThreadSlot {
    enum class State { not_started, running, waiting_barrier, waiting_warp, ready, done };
    ThreadContext ctx;
    unsigned linear = 0;     // threadIdx flattened, x fastest: lane = linear % 32
    unsigned position = 0;   // place in the schedule's order
    State state = State::not_started;
    Runner* runner = nullptr;
    const char* wait_file = "";
    int wait_line = 0;
    int barrier_result = 0;
    unsigned long long warp_result = 0;
    bool yielded = false;  // waits in the ready queue after an atomic's scheduling point
    const void* spin_address = nullptr;  // the last spin_read(): a turn of a spin-wait repeats it
    unsigned long long spin_value = 0;
    bool coalescing = false;        // waits in coalesced_threads() (cooperative groups)
    unsigned coalesced_mask = 0;    // the lanes that met there with it
};

struct Runner {
    ctx::fiber self;       // held while the runner is suspended
    ctx::fiber scheduler;  // held while it runs
    ThreadSlot* current = nullptr;
    bool abandoned = false;  // left by a jump out of a signal handler: never resumed
    // True only while the runner executes the kernel's own code, never the
    // emulator's (which may hold malloc's or a container's lock): only then
    // may a signal handler abandon the thread by leaving its fiber.
    volatile std::sig_atomic_t in_kernel_code = 0;
};

// Marks emulator code run on a thread's behalf (barriers, collectives,
// scheduling points): a signal arriving here is handled at the next
// scheduling step instead of by leaving the fiber.
class RuntimeSection {
public:
    explicit RuntimeSection(Runner* r) : runner_(r), saved_(r->in_kernel_code) { r->in_kernel_code = 0; }
    ~RuntimeSection() {
        // Leaving by an exception (the block is being stopped) means
        // unwinding, which takes the unwinder's locks: not kernel code either.
        if (std::uncaught_exceptions() == 0) runner_->in_kernel_code = saved_;
    }
    RuntimeSection(const RuntimeSection&) = delete;
    RuntimeSection& operator=(const RuntimeSection&) = delete;

private:
    Runner* runner_;
    std::sig_atomic_t saved_;
};

// What a warp-wide meeting (wmma) hands its lanes: every lane's WarpWork,
// and whether the work is still to be done. One per warp.
struct WarpWorkBatch {
    WarpWork* lanes[32];
    bool pending;
};

struct WarpMeeting {
    bool open = false;
    WarpOp op = WarpOp::shfl;
    const char* name = "";  // the collective's name in reports (a warp-wide operation's own)
    unsigned mask = 0;
    unsigned arrived = 0;
    const char* file = "";
    int line = 0;
    std::array<unsigned long long, 32> value{};
    std::array<int, 32> arg{};
    std::array<int, 32> width{};
};

const char* op_name(WarpOp op) {
    switch (op) {
        case WarpOp::shfl: return "__shfl_sync";
        case WarpOp::shfl_up: return "__shfl_up_sync";
        case WarpOp::shfl_down: return "__shfl_down_sync";
        case WarpOp::shfl_xor: return "__shfl_xor_sync";
        case WarpOp::ballot: return "__ballot_sync";
        case WarpOp::any: return "__any_sync";
        case WarpOp::all: return "__all_sync";
        case WarpOp::syncwarp: return "__syncwarp";
        case WarpOp::match_any: return "__match_any_sync";
        case WarpOp::warp_wide: return "a warp-wide operation";
    }
    return "a warp collective";
}

std::string hex(unsigned v) {
    char b[16];
    std::snprintf(b, sizeof b, "0x%08x", v);
    return b;
}

// A report raised from inside the scheduler (not by one thread's code).
struct BlockFault {
    cudaError_t code;
    const char* file;
    int line;
    std::string what;
    const ThreadContext* ctx;
    std::string details;
};

std::atomic<unsigned long long> g_context_switches{0};

class BlockRun;
thread_local BlockRun* t_block = nullptr;
thread_local Runner* t_runner = nullptr;
thread_local volatile std::sig_atomic_t t_interrupted = 0;

// The running block's dynamic shared memory (`extern __shared__`): one
// mapping per worker, since a worker runs one block at a time. The memory
// ends right at a PROT_NONE guard page, so an index past the end faults
// there and is reported with the file and line, instead of overwriting
// the emulator's own memory. The size is rounded up to 16 bytes (CUDA's
// alignment of dynamic shared memory, which float4 and double2 views need):
// an overrun of less than that is not seen.
class DynamicShared {
public:
    DynamicShared() = default;
    DynamicShared(const DynamicShared&) = delete;
    DynamicShared& operator=(const DynamicShared&) = delete;
    ~DynamicShared() {
        if (base_ != nullptr) munmap(base_, mapped_);
    }

    /// Fresh memory for a block of `bytes`, poisoned so reading before writing shows.
    void prepare(std::size_t bytes) {
        launched_ = bytes;
        const std::size_t rounded = (bytes + 15) / 16 * 16;
        if (rounded == 0) {
            data_ = nullptr;
            return;
        }
        const std::size_t needed = guarded_mapping_size(rounded);
        if (needed > mapped_) {
            if (base_ != nullptr) munmap(base_, mapped_);
            base_ = nullptr;
            mapped_ = 0;
            base_ = map_with_trailing_guard(needed);
            mapped_ = needed;
        }
        guard_ = base_ + mapped_ - page_size();
        data_ = guard_ - rounded;
        std::memset(data_, 0xCD, rounded);
    }

    void* data() const { return data_; }

    /// Describes a fault at `address` if it is in the guard page behind the
    /// block's dynamic shared memory (async-signal-safe: snprintf of numbers only).
    bool describe(const void* address, char* buffer, std::size_t size) const {
        const char* a = static_cast<const char*>(address);
        if (data_ == nullptr || a < guard_ || a >= guard_ + page_size()) return false;
        std::snprintf(buffer, size,
                      "out-of-bounds access to shared memory: byte %zu of the block's dynamic shared memory "
                      "(extern __shared__), which the launch gave %zu bytes: an index past the end of a shared "
                      "array (more elements than the launch's shared-memory size, or an index that assumes one "
                      "element per thread?)",
                      static_cast<std::size_t>(a - data_), launched_);
        return true;
    }

private:
    char* base_ = nullptr;
    std::size_t mapped_ = 0;
    char* guard_ = nullptr;
    char* data_ = nullptr;
    std::size_t launched_ = 0;
};
thread_local DynamicShared t_dynamic_shared;

// Static __shared__ variables already poisoned in this block, and their total size.
thread_local std::unordered_set<void*> t_static_shared;
thread_local std::size_t t_static_shared_bytes = 0;

class BlockRun {
public:
    BlockRun(GridRun& grid, unsigned long long flat_block)
        : grid_(grid), n_(grid.threads_per_block), slots_(n_), warps_((n_ + 31) / 32) {
        const uint3 block_idx = unflatten(flat_block, grid.info.grid);
        const Order order(grid.schedule, n_, flat_block + 1);
        order_.resize(n_);
        for (unsigned i = 0; i < n_; ++i) {
            const unsigned linear = static_cast<unsigned>(order[i]);
            order_[i] = linear;
            ThreadSlot& s = slots_[linear];
            s.linear = linear;
            s.position = i;
            s.ctx.block_dim = grid.info.block;
            s.ctx.grid_dim = grid.info.grid;
            s.ctx.block_idx = block_idx;
            s.ctx.thread_idx = unflatten(linear, grid.info.block);
        }
    }

    void run() {
        t_block = this;
        t_interrupted = 0;
        try {
            schedule_loop();
        } catch (const BlockFault& f) {
            grid_.record_fault(f.code, f.file, f.line, f.what, f.ctx != nullptr ? *f.ctx : slots_[0].ctx, f.details);
        }
        stop_waiting_runners();
        progress();
        t_block = nullptr;
    }

    // ---- called from a thread's code (on its runner's fiber)

    int barrier(const char* file, int line, BarrierKind kind, int predicate) {
        RuntimeSection section(t_runner);
        ThreadSlot& me = *t_runner->current;
        progress();
        if (exited_ > 0) {
            thread_fault(cudaErrorLaunchFailure, file, line,
                         "barrier divergence: this thread reached __syncthreads() but " + std::to_string(exited_) +
                             " thread(s) of the block have already exited (an early return?). Every thread of a "
                             "block must reach every __syncthreads().");
        }
        if (barrier_waiting_ > 0 && (barrier_file_ != file || barrier_line_ != line)) {
            thread_fault(cudaErrorLaunchFailure, file, line,
                         "barrier divergence: this thread reached __syncthreads() here while " +
                             std::to_string(barrier_waiting_) + " thread(s) wait at " + barrier_file_ + ":" +
                             std::to_string(barrier_line_) +
                             ". All threads of a block must meet at the same __syncthreads().");
        }
        if (barrier_waiting_ == 0) {
            barrier_file_ = file;
            barrier_line_ = line;
            barrier_count_ = 0;
            barrier_all_ = true;
            barrier_any_ = false;
        }
        barrier_count_ += predicate != 0;
        barrier_all_ = barrier_all_ && predicate != 0;
        barrier_any_ = barrier_any_ || predicate != 0;
        me.wait_file = file;
        me.wait_line = line;
        ++barrier_waiting_;
        me.state = ThreadSlot::State::waiting_barrier;
        if (barrier_waiting_ == n_) {
            // The last to arrive releases everyone, itself included: they go
            // on in the schedule's order, which is what lets a schedule expose
            // a missing barrier further on.
            const int result = kind == BarrierKind::count ? barrier_count_
                               : kind == BarrierKind::all ? barrier_all_
                               : kind == BarrierKind::any ? barrier_any_
                                                          : 0;
            for (unsigned linear : order_) {
                ThreadSlot& s = slots_[linear];
                if (s.state == ThreadSlot::State::waiting_barrier) make_ready(s, result);
            }
            barrier_waiting_ = 0;
        }
        suspend();
        return me.barrier_result;
    }

    unsigned long long warp(const char* file, int line, WarpOp op, unsigned mask, unsigned long long value, int arg,
                            int width) {
        RuntimeSection section(t_runner);
        ThreadSlot& me = *t_runner->current;
        progress();
        const unsigned lane = me.linear % 32;
        const unsigned warp_index = me.linear / 32;
        const unsigned lanes_here = std::min(32u, n_ - warp_index * 32);
        const unsigned existing = lanes_here == 32 ? 0xffffffffu : (1u << lanes_here) - 1;
        // A warp-wide operation (wmma) has no mask: the whole warp takes part.
        const bool whole_warp = op == WarpOp::warp_wide;
        const char* name = whole_warp ? reinterpret_cast<const WarpWork*>(static_cast<std::uintptr_t>(value))->name
                                      : op_name(op);
        // The call as reports name it, built only for a report (a collective is hot code).
        const auto call = [&] { return whole_warp ? std::string(name) : std::string(name) + "(mask " + hex(mask) + ")"; };
        if (whole_warp && lanes_here < 32) {
            thread_fault(cudaErrorLaunchFailure, file, line,
                         call() + " needs all 32 lanes of a warp, but warp " + std::to_string(warp_index) +
                             " of this block has only " + std::to_string(lanes_here) +
                             " threads (make the block's size a multiple of 32)");
        }
        if ((mask >> lane & 1u) == 0) {
            thread_fault(cudaErrorLaunchFailure, file, line,
                         "lane " + std::to_string(lane) + " called " + call() +
                             ", but the mask does not include the calling lane");
        }
        if ((mask & ~existing) != 0) {
            thread_fault(cudaErrorLaunchFailure, file, line,
                         call() + " names lanes that do not exist: warp " + std::to_string(warp_index) +
                             " of this block has only " + std::to_string(lanes_here) +
                             " threads (a partial last warp needs a mask of only its lanes, e.g. from "
                             "__ballot_sync or __activemask())");
        }
        const unsigned gone = exited_lanes(warp_index) & mask;
        if (gone != 0 && whole_warp) {
            thread_fault(cudaErrorLaunchFailure, file, line,
                         call() + " must be called by all 32 lanes of the warp together, but lanes " + hex(gone) +
                             " of warp " + std::to_string(warp_index) +
                             " have already exited (an early return, or a wmma call in a branch that only part of "
                             "the warp takes?)");
        }
        if (gone != 0) {
            thread_fault(cudaErrorLaunchFailure, file, line,
                         call() + " waits for lanes that have already exited (lanes " + hex(gone) +
                             "): every lane named in the mask must reach the collective");
        }
        WarpMeeting& m = meeting_for(warp_index, mask);
        if (!m.open) {
            m.open = true;
            m.op = op;
            m.name = name;
            m.mask = mask;
            m.arrived = 0;
            m.file = file;
            m.line = line;
        } else if (whole_warp && (m.op != op || m.name != name || m.file != file || m.line != line)) {
            thread_fault(cudaErrorLaunchFailure, file, line,
                         "lanes of warp " + std::to_string(warp_index) + " are divided: lane " + std::to_string(lane) +
                             " called " + call() + " here while lanes " + hex(m.arrived) + " wait in " + m.name +
                             " at " + m.file + ":" + std::to_string(m.line) +
                             ". Every lane of a warp must make each wmma call together, at the same place (a wmma "
                             "call inside a branch that divides the warp?)");
        } else if (m.op != op || m.mask != mask) {
            thread_fault(cudaErrorLaunchFailure, file, line,
                         "lanes of warp " + std::to_string(warp_index) + " meet at different collectives: this lane "
                             "called " + call() + " while others wait in " + m.name + "(mask " + hex(m.mask) +
                             ") at " + m.file + ":" + std::to_string(m.line));
        }
        m.arrived |= 1u << lane;
        m.value[lane] = value;
        m.arg[lane] = arg;
        m.width[lane] = width;
        me.wait_file = file;
        me.wait_line = line;
        me.state = ThreadSlot::State::waiting_warp;
        if (m.arrived == m.mask) complete_warp(m, warp_index);  // releases all of them, in schedule order
        suspend();
        return me.warp_result;
    }

    unsigned activemask_of(const ThreadSlot& me) const {
        const unsigned warp_index = me.linear / 32;
        const unsigned lanes_here = std::min(32u, n_ - warp_index * 32);
        const unsigned existing = lanes_here == 32 ? 0xffffffffu : (1u << lanes_here) - 1;
        return existing & ~exited_lanes(warp_index);
    }

    // Lets the other threads run before an atomic, as a GPU's would: the
    // scheduler starts the threads not yet started before it comes back, so
    // the threads of a block meet at their atomics and a CAS loop retries.
    void yield() {
        RuntimeSection section(t_runner);
        ThreadSlot& me = *t_runner->current;
        make_ready(me, 0);
        me.yielded = true;
        suspend();
    }

    // Spin-waits. A thread that reads the value it read last time at the same
    // address (an atomic load, atomicAdd(p, 0), a failed CAS) may be spinning
    // on a flag; every other event of the block (a barrier, a collective, a
    // write, an exit, a new value read) is progress. After enough repeated
    // reads in a row, more than every live thread taking a turn, the block is
    // stalled: its threads only wait. When every worker's block is stalled
    // for a while, no thread of the grid can set what they wait for (blocks
    // not started cannot start: every worker is busy), and that is reported
    // as a deadlock at the spinning line instead of waiting for the time budget.
    void spin_read(const char* file, int line, const void* address, unsigned long long value) {
        RuntimeSection section(t_runner);
        ThreadSlot& me = *t_runner->current;
        if (address != me.spin_address || value != me.spin_value) {
            me.spin_address = address;
            me.spin_value = value;
            progress();
            return;
        }
        me.wait_file = file;
        me.wait_line = line;
        if (++quiet_spins_ < 4 * (n_ - done_) + 64) return;
        if (!stalled_) {
            stalled_ = true;
            all_stalled_ = false;
            grid_.stalled_workers.fetch_add(1);
        }
        if (grid_.stalled_workers.load() < grid_.active_workers.load()) {
            all_stalled_ = false;
            return;
        }
        const auto now = std::chrono::steady_clock::now();
        if (!all_stalled_) {
            all_stalled_ = true;
            all_stalled_since_ = now;
        } else if (now - all_stalled_since_ > std::chrono::milliseconds(100)) {
            spin_deadlock(file, line);
        }
    }

    // The running block did something other than spin.
    void progress() {
        quiet_spins_ = 0;
        if (stalled_) {
            stalled_ = false;
            grid_.stalled_workers.fetch_sub(1);
        }
    }

    // coalesced_threads(): the lanes of the warp that call it at the same
    // place together. A GPU knows which lanes took the branch; the emulator
    // learns it by waiting until no other lane of the warp can still arrive
    // (every one waits somewhere else or has exited), then groups the lanes
    // waiting here by call site.
    unsigned coalesce(const char* file, int line) {
        RuntimeSection section(t_runner);
        ThreadSlot& me = *t_runner->current;
        me.coalescing = true;
        me.wait_file = file;
        me.wait_line = line;
        me.state = ThreadSlot::State::waiting_warp;
        ++coalescing_;
        suspend();
        return me.coalesced_mask;
    }

    // grid.sync(): the block's threads meet at a block barrier, then the
    // first of them to go on waits, for the whole block, until every block
    // of the grid has arrived (cooperative.cpp); the others follow it.
    void grid_sync(const char* file, int line) {
        if (grid_.cooperative == nullptr) {
            thread_fault(cudaErrorLaunchFailure, file, line,
                         "grid.sync() needs a cooperative launch: launch the kernel with "
                         "cudaLaunchCooperativeKernel, not <<<...>>> (on a GPU this grid barrier is undefined "
                         "behaviour: it may hang or let blocks run past it)");
        }
        (void)barrier(file, line, BarrierKind::plain, 1);
        RuntimeSection section(t_runner);
        if (grid_sync_passed_++ % n_ == 0) grid_.cooperative->sync(file, line, t_runner->current->ctx);
    }

    bool cooperative() const { return grid_.cooperative != nullptr; }

    // A fault that the signal handler found in the thread running now.
    void fault_from_signal(cudaError_t code, const char* what) {
        pending_signal_fault_ = true;
        pending_signal_code_ = code;
        pending_signal_what_ = what;
    }

    /// Whether the block is being stopped (its threads unwinding).
    bool stopping() const { return stopping_; }

private:
    [[noreturn]] void spin_deadlock(const char* file, int line) {
        const unsigned long long started = std::min(grid_.next_block.load(), grid_.block_count);
        const unsigned long long waiting = grid_.block_count - started;
        std::string what =
            "deadlock: this thread spins on a value that no running thread will change (it read the same value "
            "again and again, and every running block is only waiting too)";
        if (waiting > 0) {
            what += "; " + std::to_string(waiting) + " block(s) of the grid have not started, and cannot while the "
                    "running ones wait: the emulator runs " + std::to_string(grid_.active_workers.load()) +
                    " block(s) at a time (COURSE_EMU_WORKERS), and a GPU too starts blocks in no promised order and "
                    "only as many as fit. Does a block wait on a block that has not started, such as a look-back "
                    "that waits on tile blockIdx.x - 1? Take the tile index from an atomic counter instead: a block "
                    "then only waits on blocks that started before it";
        } else {
            what += ": is the flag it waits for ever set, by a block that runs?";
        }
        thread_fault(cudaErrorLaunchFailure, file, line, what);
    }

    [[noreturn]] void thread_fault(cudaError_t code, const char* file, int line, const std::string& what) {
        grid_.record_fault(code, file, line, what, t_runner->current->ctx, where_threads_are(t_runner->current));
        throw StopSignal{};
    }

    // Kept up to date as threads exit: every collective asks.
    unsigned exited_lanes(unsigned warp_index) const { return exited_lanes_[warp_index]; }

    void complete_warp(WarpMeeting& m, unsigned warp_index) {
        if (m.op == WarpOp::warp_wide) {
            // The work itself runs in the first released lane, as kernel code
            // (warp_wide, below): a bad address in it is then reported as the
            // kernel's. The batch is not reused before every lane has looked
            // at it: the next warp-wide meeting needs all of them.
            WarpWorkBatch& batch = work_batches_[warp_index];
            for (unsigned lane = 0; lane < 32; ++lane) {
                batch.lanes[lane] = reinterpret_cast<WarpWork*>(static_cast<std::uintptr_t>(m.value[lane]));
            }
            batch.pending = true;
            release_warp(m, warp_index, [&](unsigned) { return reinterpret_cast<std::uintptr_t>(&batch); });
            return;
        }
        constexpr unsigned long long poison = 0xCDCDCDCDCDCDCDCDull;  // a lane not in the mask: undefined on a GPU
        std::array<unsigned long long, 32> result{};
        unsigned ballot = 0;
        for (unsigned lane = 0; lane < 32; ++lane) {
            if ((m.arrived >> lane & 1u) && m.value[lane] != 0) ballot |= 1u << lane;
        }
        for (unsigned lane = 0; lane < 32; ++lane) {
            if ((m.mask >> lane & 1u) == 0) continue;
            const int w = m.width[lane] >= 1 && m.width[lane] <= 32 ? m.width[lane] : 32;
            const int start = static_cast<int>(lane) / w * w;
            const int a = m.arg[lane];
            int src = static_cast<int>(lane);
            switch (m.op) {
                case WarpOp::shfl: src = start + ((a % w) + w) % w; break;
                case WarpOp::shfl_up: src = static_cast<int>(lane) - a >= start ? static_cast<int>(lane) - a : src; break;
                case WarpOp::shfl_down: src = static_cast<int>(lane) + a < start + w ? static_cast<int>(lane) + a : src; break;
                case WarpOp::shfl_xor: src = (static_cast<int>(lane) ^ a) < start + w ? static_cast<int>(lane) ^ a : src; break;
                default: break;
            }
            switch (m.op) {
                case WarpOp::ballot: result[lane] = ballot; break;
                case WarpOp::any: result[lane] = (ballot & m.mask) != 0; break;
                case WarpOp::all: result[lane] = (ballot & m.mask) == m.mask; break;
                case WarpOp::syncwarp: result[lane] = 0; break;
                case WarpOp::match_any: {
                    unsigned same = 0;
                    for (unsigned other = 0; other < 32; ++other) {
                        if ((m.mask >> other & 1u) && m.value[other] == m.value[lane]) same |= 1u << other;
                    }
                    result[lane] = same;
                    break;
                }
                default:
                    result[lane] = src >= 0 && src < 32 && (m.arrived >> src & 1u) ? m.value[static_cast<unsigned>(src)] : poison;
            }
        }
        release_warp(m, warp_index, [&](unsigned lane) { return result[lane]; });
    }

    // Closes the meeting and lets its lanes go on, in schedule order, each with its result.
    template <class Result>
    void release_warp(WarpMeeting& m, unsigned warp_index, Result result_of) {
        m.open = false;
        for (unsigned linear : order_) {
            if (linear / 32 != warp_index) continue;
            ThreadSlot& s = slots_[linear];
            const unsigned lane = linear % 32;
            if ((m.mask >> lane & 1u) && s.state == ThreadSlot::State::waiting_warp) {
                s.warp_result = result_of(lane);
                make_ready(s, 0);
            }
        }
    }

    void make_ready(ThreadSlot& s, int barrier_result) {
        s.barrier_result = barrier_result;
        s.state = ThreadSlot::State::ready;
        ready_.push_back(&s);
    }

    // Suspends the calling thread's runner; returns when the scheduler resumes it.
    void suspend() {
        Runner* r = t_runner;
        ThreadSlot* s = r->current;
        if (coalescing_ > 0) complete_coalesce(s->linear / 32);
        r->scheduler = std::move(r->scheduler).resume();
        t_runner = r;
        current_thread = &s->ctx;
        if (stopping_) throw StopSignal{};
    }

    void run_thread(Runner& r, ThreadSlot& s) {
        r.current = &s;
        s.runner = &r;
        s.state = ThreadSlot::State::running;
        current_thread = &s.ctx;
        g_running_thread.store(&s.ctx, std::memory_order_relaxed);
        try {
            r.in_kernel_code = 1;
            grid_.thread_body(grid_.state);
            r.in_kernel_code = 0;
        } catch (const FaultSignal& signal) {
            // A fault raised without a source position is placed at the launch.
            const bool placed = signal.fault.file != nullptr && signal.fault.file[0] != '\0';
            grid_.record_fault(signal.fault.code, placed ? signal.fault.file : grid_.info.file,
                               placed ? signal.fault.line : grid_.info.line, signal.fault.what, s.ctx,
                               where_threads_are(&s));
            stopping_ = true;
        } catch (const StopSignal&) {
            stopping_ = true;
        } catch (const std::exception& e) {
            grid_.record_fault(cudaErrorLaunchFailure, grid_.info.file, grid_.info.line,
                               std::string("exception thrown in kernel code: ") + e.what(), s.ctx);
            stopping_ = true;
        }
        r.in_kernel_code = 0;
        current_thread = nullptr;
        s.state = ThreadSlot::State::done;
        exited_lanes_[s.linear / 32] |= 1u << (s.linear % 32);
        ++exited_;
        ++done_;
        progress();
        if (!stopping_) check_exit(s);
        if (!stopping_ && coalescing_ > 0) complete_coalesce(s.linear / 32);
    }

    // Completes the coalesced_threads() calls of warp `w` once none of its
    // lanes can still arrive: lanes waiting at the same call site form a group.
    void complete_coalesce(unsigned w) {
        const unsigned first = w * 32, last = std::min(n_, first + 32);
        unsigned waiting = 0;
        for (unsigned linear = first; linear < last; ++linear) {
            const ThreadSlot& s = slots_[linear];
            switch (s.state) {
                case ThreadSlot::State::not_started:
                case ThreadSlot::State::running:
                case ThreadSlot::State::ready: return;  // this lane may still come
                default: break;
            }
            if (s.coalescing) waiting |= 1u << (linear - first);
        }
        if (waiting == 0) return;
        for (unsigned linear : order_) {
            if (linear / 32 != w) continue;
            ThreadSlot& s = slots_[linear];
            if (!s.coalescing) continue;
            unsigned same_site = 0;
            for (unsigned other = first; other < last; ++other) {
                const ThreadSlot& o = slots_[other];
                if (o.coalescing && o.wait_file == s.wait_file && o.wait_line == s.wait_line) {
                    same_site |= 1u << (other - first);
                }
            }
            s.coalesced_mask = same_site;
        }
        for (unsigned linear : order_) {
            ThreadSlot& s = slots_[linear];
            if (linear / 32 != w || !s.coalescing) continue;
            s.coalescing = false;
            --coalescing_;
            make_ready(s, 0);
        }
    }

    // A thread that exits while others wait for it is a divergence.
    void check_exit(ThreadSlot& s) {
        if (barrier_waiting_ > 0) {
            grid_.record_fault(cudaErrorLaunchFailure, barrier_file_, barrier_line_,
                               "barrier divergence: " + std::to_string(barrier_waiting_) +
                                   " thread(s) wait at this __syncthreads(), but thread " +
                                   format_index(s.ctx.thread_idx) +
                                   " exited without reaching it (an early return?). Every thread of a block must "
                                   "reach every __syncthreads().",
                               s.ctx, where_threads_are());
            stopping_ = true;
            return;
        }
        const WarpMeeting& m = meeting_for(s.linear / 32, 1u << (s.linear % 32));
        if (m.open && m.op == WarpOp::warp_wide) {
            grid_.record_fault(cudaErrorLaunchFailure, m.file, m.line,
                               std::string(m.name) + " must be called by all 32 lanes of the warp together, but lane " +
                                   std::to_string(s.linear % 32) + " exited without reaching it while lanes " +
                                   hex(m.arrived) + " wait there (a wmma call inside a branch that only part of the "
                                   "warp takes?)",
                               s.ctx, where_threads_are());
            stopping_ = true;
        } else if (m.open && (m.mask >> (s.linear % 32) & 1u)) {
            grid_.record_fault(cudaErrorLaunchFailure, m.file, m.line,
                               std::string("lane ") + std::to_string(s.linear % 32) + " exited without reaching " +
                                   m.name + "(mask " + hex(m.mask) + "), which names it: the other lanes "
                                   "would wait forever",
                               s.ctx, where_threads_are());
            stopping_ = true;
        }
    }

    // The open meeting of warp `w` whose lanes overlap `mask`, else a closed
    // one to open. Tiles of a warp (cooperative groups) meet apart: their
    // disjoint masks have meetings of their own, the extra ones in tile_meetings_.
    WarpMeeting& meeting_for(unsigned w, unsigned mask) {
        WarpMeeting* closed = warps_[w].open ? nullptr : &warps_[w];
        if (warps_[w].open && (warps_[w].mask & mask) != 0) return warps_[w];
        for (auto& [warp, m] : tile_meetings_) {
            if (warp != w && m.open) continue;
            if (m.open && (m.mask & mask) != 0) return m;
            if (!m.open && closed == nullptr) {
                warp = w;
                closed = &m;
            }
        }
        if (closed != nullptr) return *closed;
        tile_meetings_.emplace_back(w, WarpMeeting{});
        return tile_meetings_.back().second;
    }

    void start_runner() {
        auto* r = new Runner;
        runners_.push_back(r);
        r->self = ctx::fiber(std::allocator_arg, PooledStack{}, [this, r](ctx::fiber&& scheduler) {
            r->scheduler = std::move(scheduler);
            t_runner = r;
            while (!stopping_ && next_ < n_ && !grid_.faulted.load(std::memory_order_relaxed)) {
                run_thread(*r, slots_[order_[next_++]]);
            }
            r->current = nullptr;
            return std::move(r->scheduler);
        });
        resume(*r);
    }

    void resume(Runner& r) {
        g_context_switches.fetch_add(1, std::memory_order_relaxed);
        t_runner = &r;
        r.self = std::move(r.self).resume();
        t_runner = nullptr;
        current_thread = nullptr;
        if (pending_signal_fault_) {
            // The thread was stopped by a signal (bad address, time budget):
            // its stack holds the handler's frame and is never resumed.
            pending_signal_fault_ = false;
            r.abandoned = true;
            ThreadSlot* s = r.current;
            grid_.record_fault(pending_signal_code_, grid_.info.file, grid_.info.line, pending_signal_what_,
                               s != nullptr ? s->ctx : slots_[0].ctx, where_threads_are(s));
            stopping_ = true;
        }
    }

    void schedule_loop() {
        while (!stopping_) {
            if (grid_.faulted.load(std::memory_order_relaxed)) return;
            if (t_interrupted || grid_.over_time.load(std::memory_order_relaxed)) throw_over_time(nullptr);
            if (!ready_.empty() && ready_.front()->yielded && next_ < n_) {
                start_runner();
            } else if (!ready_.empty()) {
                ThreadSlot* s = ready_.front();
                s->yielded = false;
                ready_.pop_front();
                s->state = ThreadSlot::State::running;
                resume(*s->runner);
            } else if (next_ < n_) {
                start_runner();
            } else if (done_ == n_) {
                return;
            } else {
                throw_deadlock();
            }
        }
    }

    [[noreturn]] void throw_over_time(const ThreadSlot* running) {
        throw BlockFault{cudaErrorLaunchTimeout, grid_.info.file, grid_.info.line,
                         "the kernel ran past its time budget (COURSE_EMU_TIMEOUT) and was stopped: a loop that never "
                         "ends, or threads spinning on a flag no thread will set?",
                         running != nullptr ? &running->ctx : nullptr, where_threads_are(running)};
    }

    [[noreturn]] void throw_deadlock() {
        const ThreadSlot* first = nullptr;
        for (unsigned linear : order_) {
            if (slots_[linear].state != ThreadSlot::State::done) {
                first = &slots_[linear];
                break;
            }
        }
        throw BlockFault{cudaErrorLaunchFailure, first->wait_file, first->wait_line,
                         "deadlock: every thread of the block that has not exited is waiting, and none of them can "
                         "release the others (threads waiting at different barriers or collectives?)",
                         &first->ctx, where_threads_are()};
    }

    // Where the threads of the block are, grouped: for fault reports.
    std::string where_threads_are(const ThreadSlot* running = nullptr) const {
        std::string out = "  threads of this block:";
        unsigned finished = 0, not_started = 0;
        std::vector<std::pair<std::string, unsigned>> groups;
        for (const ThreadSlot& s : slots_) {
            std::string where;
            switch (s.state) {
                case ThreadSlot::State::done: ++finished; continue;
                case ThreadSlot::State::not_started: ++not_started; continue;
                case ThreadSlot::State::waiting_barrier:
                    where = std::string("waiting at __syncthreads() at ") + s.wait_file + ":" + std::to_string(s.wait_line);
                    break;
                case ThreadSlot::State::waiting_warp:
                    where = std::string("waiting at a warp collective at ") + s.wait_file + ":" +
                            std::to_string(s.wait_line);
                    break;
                case ThreadSlot::State::ready: where = "ready to run"; break;
                case ThreadSlot::State::running:
                    where = &s == running ? "running (the thread reported)" : "running";
                    break;
            }
            auto it = std::find_if(groups.begin(), groups.end(), [&](const auto& g) { return g.first == where; });
            if (it == groups.end()) groups.emplace_back(where, 1);
            else ++it->second;
            if (&s == running) groups.back().first += ": thread " + format_index(s.ctx.thread_idx);
        }
        for (const auto& [where, count] : groups) out += "\n    " + std::to_string(count) + " " + where;
        if (finished > 0) out += "\n    " + std::to_string(finished) + " finished";
        if (not_started > 0) out += "\n    " + std::to_string(not_started) + " not started";
        return out;
    }

    // Ends every runner still waiting, so their stacks unwind and return to the pool.
    void stop_waiting_runners() {
        stopping_ = true;
        for (Runner* r : runners_) {
            if (r->abandoned) {
                new ctx::fiber(std::move(r->self));  // deliberately leaked: see resume()
            } else {
                while (r->self) resume(*r);
            }
            delete r;
        }
        runners_.clear();
    }

    GridRun& grid_;
    unsigned n_;
    std::vector<ThreadSlot> slots_;
    std::vector<unsigned> order_;  // linear thread indices in schedule order
    std::vector<WarpMeeting> warps_;
    std::vector<WarpWorkBatch> work_batches_ = std::vector<WarpWorkBatch>(warps_.size());  // one per warp
    std::vector<unsigned> exited_lanes_ = std::vector<unsigned>(warps_.size());  // per warp, a bit per exited lane
    std::deque<std::pair<unsigned, WarpMeeting>> tile_meetings_;  // (warp, meeting): stable addresses
    std::deque<ThreadSlot*> ready_;
    std::vector<Runner*> runners_;
    unsigned next_ = 0;  // next position in order_ not started
    unsigned done_ = 0;
    unsigned exited_ = 0;
    bool stopping_ = false;
    unsigned barrier_waiting_ = 0;
    const char* barrier_file_ = "";
    int barrier_line_ = 0;
    int barrier_count_ = 0;
    bool barrier_all_ = true;
    bool barrier_any_ = false;
    bool pending_signal_fault_ = false;
    unsigned quiet_spins_ = 0;  // spin_read()s in a row that read the same value again
    bool stalled_ = false;      // counted in grid_.stalled_workers
    bool all_stalled_ = false;  // every worker seen stalled since all_stalled_since_
    std::chrono::steady_clock::time_point all_stalled_since_{};
    unsigned coalescing_ = 0;         // threads waiting in coalesced_threads()
    unsigned grid_sync_passed_ = 0;   // threads past grid.sync() so far (a multiple of n_ between syncs)
    cudaError_t pending_signal_code_ = cudaSuccess;
    const char* pending_signal_what_ = "";
};

}  // namespace
}  // namespace course_emu::detail

namespace course_emu::detail {

// What runs now: the running thread of the calling worker (its built-in
// variables), and one thread of the launch for the report of a test that
// hangs (read by another thread only when the test has overrun its time).
thread_local ThreadContext* current_thread = nullptr;
std::atomic<const ThreadContext*> g_running_thread{nullptr};

void builtin_outside_kernel() {
    std::fprintf(stderr,
                 "course emulator: threadIdx/blockIdx/blockDim/gridDim read outside a kernel "
                 "(host code has no CUDA thread)\n");
    std::abort();
}

bool kernel_code_running() {
    return t_block != nullptr && t_runner != nullptr && t_runner->current != nullptr && t_runner->in_kernel_code &&
           !t_block->stopping();
}

void abandon_running_thread(cudaError_t code, const char* what) {
    t_block->fault_from_signal(code, what);
    Runner* r = t_runner;
    r->scheduler = std::move(r->scheduler).resume();
    std::abort();  // unreachable: the scheduler never resumes an abandoned runner
}

void interrupt_between_threads() { t_interrupted = 1; }

bool describe_dynamic_shared_fault(const void* address, char* buffer, std::size_t size) {
    return t_dynamic_shared.describe(address, buffer, size);
}

AnalysisSection::AnalysisSection()
    : flag_(t_runner != nullptr ? &t_runner->in_kernel_code : nullptr), saved_(flag_ != nullptr ? *flag_ : 0) {
    if (flag_ != nullptr) *flag_ = 0;
}

AnalysisSection::~AnalysisSection() {
    if (flag_ != nullptr) *flag_ = saved_;
}

void run_block(GridRun& grid, unsigned long long flat_block) {
    // Fresh for every block and poisoned, so reading before writing shows.
    t_dynamic_shared.prepare(grid.info.dynamic_shared_bytes);
    t_static_shared.clear();
    t_static_shared_bytes = 0;
    if (g_analysis_hooks != nullptr) g_analysis_hooks->block_begin(t_dynamic_shared.data(), grid.info.dynamic_shared_bytes);
    BlockRun block(grid, flat_block);
    block.run();
    if (g_analysis_hooks != nullptr) g_analysis_hooks->block_end();
}

void atomic_scheduling_point() {
    if (t_block != nullptr && t_runner != nullptr && t_runner->current != nullptr) t_block->yield();
}

void spin_read(const char* file, int line, const void* address, unsigned long long value) {
    if (t_block != nullptr && t_runner != nullptr && t_runner->current != nullptr) {
        t_block->spin_read(file, line, address, value);
    }
}

void memory_written() {
    if (t_block != nullptr && t_runner != nullptr && t_runner->current != nullptr) t_block->progress();
}

}  // namespace course_emu::detail

namespace course_emu {

namespace {

[[noreturn]] void outside_kernel(const char* what, const char* file, int line) {
    std::fprintf(stderr, "%s:%d: course emulator: %s called outside a kernel\n", file, line, what);
    std::abort();
}

}  // namespace

void raise_fault(const char* file, int line, const char* what, cudaError_t code) {
    // Throwing allocates and unwinding takes the loader's lock: from here on
    // this is the emulator's code, not the kernel's (see Runner::in_kernel_code).
    if (detail::t_runner != nullptr) detail::t_runner->in_kernel_code = 0;
    throw detail::FaultSignal{Fault{file, line, what, code}};
}

int syncthreads(const char* file, int line, BarrierKind kind, int predicate) {
    if (detail::t_block == nullptr || detail::t_runner == nullptr) outside_kernel("__syncthreads()", file, line);
    if (detail::g_analysis_hooks != nullptr) detail::g_analysis_hooks->before_sync(0, file, line);
    const int result = detail::t_block->barrier(file, line, kind, predicate);
    if (detail::g_analysis_hooks != nullptr) detail::g_analysis_hooks->after_sync(false);
    return result;
}

unsigned long long warp_collective(const char* file, int line, WarpOp op, unsigned mask, unsigned long long value,
                                   int arg, int width) {
    if (detail::t_block == nullptr || detail::t_runner == nullptr) outside_kernel("a warp collective", file, line);
    if (detail::g_analysis_hooks != nullptr) detail::g_analysis_hooks->before_sync(1, file, line);
    const unsigned long long result = detail::t_block->warp(file, line, op, mask, value, arg, width);
    if (detail::g_analysis_hooks != nullptr) detail::g_analysis_hooks->after_sync(true);
    return result;
}

unsigned coalesce(const char* file, int line) {
    if (detail::t_block == nullptr || detail::t_runner == nullptr) outside_kernel("coalesced_threads()", file, line);
    return detail::t_block->coalesce(file, line);
}

void grid_sync(const char* file, int line) {
    if (detail::t_block == nullptr || detail::t_runner == nullptr) outside_kernel("grid.sync()", file, line);
    if (detail::g_analysis_hooks != nullptr) detail::g_analysis_hooks->before_sync(2, file, line);
    detail::t_block->grid_sync(file, line);
    if (detail::g_analysis_hooks != nullptr) detail::g_analysis_hooks->after_sync(false);
}

void warp_wide(const char* file, int line, WarpWork& work) {
    if (detail::t_block == nullptr || detail::t_runner == nullptr) outside_kernel(work.name, file, line);
    work.file = file;
    work.line = line;
    auto* batch = reinterpret_cast<detail::WarpWorkBatch*>(static_cast<std::uintptr_t>(detail::t_block->warp(
        file, line, WarpOp::warp_wide, 0xffffffffu, reinterpret_cast<std::uintptr_t>(&work), 0, 32)));
    // The first lane to go on does the work for all: the others run after it
    // (the fibers of a block take turns), and the batch is not reused before
    // each of them has seen it, since the next warp-wide meeting needs them all.
    if (batch->pending) {
        batch->pending = false;
        WarpWork* const* lanes = batch->lanes;
        WarpWorkProblem problem;
        {
            // The check allocates (and tells the analysis what a store will
            // write): not kernel code, where a signal may abandon the fiber.
            detail::RuntimeSection section(detail::t_runner);
            problem = lanes[0]->check(lanes);
            if (problem.code != cudaSuccess) {
                thread_local std::string text;  // raise_fault keeps the pointer
                text = std::string(work.name) + ": " + problem.what;
                raise_fault(file, line, text.c_str(), problem.code);
            }
        }
        // Kernel code from here (as the caller's): a bad address in the tile
        // faults and is reported like the kernel's own bad access.
        lanes[0]->run(lanes);
    }
    if (detail::g_analysis_hooks != nullptr) detail::g_analysis_hooks->after_sync(true);
}

bool in_cooperative_launch() { return detail::t_block != nullptr && detail::t_block->cooperative(); }

unsigned activemask() {
    if (detail::t_block == nullptr || detail::t_runner == nullptr) outside_kernel("__activemask()", "", 0);
    return detail::t_block->activemask_of(*detail::t_runner->current);
}

unsigned long long context_switches() { return detail::g_context_switches.load(); }

void* dynamic_shared_memory() {
    return detail::t_dynamic_shared.data();
}

void shared_declared(const volatile void* shared, std::size_t bytes) {
    if (detail::t_runner == nullptr) return;  // not in a kernel: nothing to register
    detail::RuntimeSection section(detail::t_runner);
    void* address = const_cast<void*>(shared);
    if (detail::g_analysis_hooks != nullptr) detail::g_analysis_hooks->shared_declared(address, bytes);
    if (!detail::t_static_shared.insert(address).second) return;
    // The first thread of the block to pass the declaration poisons it, so a
    // read before any write shows (0xCD bytes: a large negative float).
    std::memset(address, 0xCD, bytes);
    detail::t_static_shared_bytes += bytes;
    if (detail::t_static_shared_bytes > detail::device_properties().sharedMemPerBlock) {
        raise_fault("", 0,
                    "the kernel's static __shared__ variables exceed 48 KiB per block (nvcc refuses such a kernel: "
                    "use dynamic shared memory and cudaFuncSetAttribute for more)",
                    cudaErrorLaunchOutOfResources);
    }
}

}  // namespace course_emu
