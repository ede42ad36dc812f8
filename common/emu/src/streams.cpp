// Streams, events, asynchronous copies and synchronisation, with the
// asynchrony of a GPU and a cross-stream race detector.
//
// Work issued to a stream other than the legacy default stream is queued.
// It runs when the host synchronises (cudaStreamSynchronize,
// cudaEventSynchronize, cudaDeviceSynchronize, a query, a synchronous copy,
// cudaFree) or when legacy default-stream work needs it: the scheduler then
// runs the operations the host waits for, one at a time, choosing among the
// ready ones by the schedule (forward: the oldest stream first; reverse: the
// newest; random: seeded). An operation is ready when it is at the head of
// its stream and, for a cudaStreamWaitEvent, when the event's work has run.
// Work in the legacy default stream runs at once, after the work of every
// blocking stream (the implicit barrier), which keeps programs that never
// create a stream exactly as fast as before: they never enter this file's
// machinery.
//
// Happens-before is tracked with vector clocks: one component per stream
// (0 is the legacy default stream). Every operation gets a stamp (its
// stream, its position); a stream's clock is what is ordered before its next
// operation; an event carries the clock of its stream when recorded; the
// host has a clock of what it has synchronised with, and work it issues
// later is ordered after that. Each operation's accesses (exact byte ranges
// for copies and memsets; the first element behind each pointer argument for
// a kernel, written unless the pointer is to const) are checked against the
// accesses of operations not yet known to have run before it: two touching
// the same bytes, one writing, with neither ordered before the other, is a
// race, reported as the device's sticky fault with both operations named.
#include "streams_internal.hpp"

#include "allocator.hpp"
#include "errors.hpp"
#include "launch_internal.hpp"

#include <course_emu/detail/analysis_hooks.hpp>
#include <course_emu/thread_context.hpp>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <deque>
#include <map>
#include <memory>
#include <mutex>
#include <random>
#include <string>
#include <vector>

namespace course_emu::detail {
namespace {

using Clock = std::vector<std::uint64_t>;  // per stream id: operations ordered before

void join(Clock& into, const Clock& other) {
    if (into.size() < other.size()) into.resize(other.size(), 0);
    for (std::size_t i = 0; i < other.size(); ++i) into[i] = std::max(into[i], other[i]);
}

bool covers(const Clock& clock, int stream, std::uint64_t position) {
    return static_cast<std::size_t>(stream) < clock.size() && clock[static_cast<std::size_t>(stream)] >= position;
}

void tick(Clock& clock, int stream, std::uint64_t position) {
    if (clock.size() <= static_cast<std::size_t>(stream)) clock.resize(static_cast<std::size_t>(stream) + 1, 0);
    clock[static_cast<std::size_t>(stream)] = position;
}

struct Range {
    const char* begin;
    const char* end;
    bool write;
};

// An access already issued, kept until the host has synchronised past it.
struct PastAccess {
    Range range;
    int stream;
    std::uint64_t position;
    std::shared_ptr<const std::string> what;
};

enum class OperationKind { work, record, wait };

struct Operation {
    OperationKind kind = OperationKind::work;
    std::uint64_t position = 0;            // 1, 2, ... in its stream
    std::function<void()> run;             // work: the kernel, copy, memset or host function
    cudaEvent_t event = nullptr;           // record: the event it completes
    int wait_stream = 0;                   // wait: ready once this stream ...
    std::uint64_t wait_position = 0;       // ... has run this far
};

std::string stream_name(int id) {
    std::string name = id == 0 ? "the default stream" : "stream ";
    if (id != 0) name += std::to_string(id);
    return name;
}

}  // namespace
}  // namespace course_emu::detail

struct CUstream_st {
    int id = 0;
    unsigned flags = cudaStreamDefault;
    std::deque<course_emu::detail::Operation> queue;
    std::uint64_t issued = 0;
    std::uint64_t completed = 0;
    course_emu::detail::Clock clock;  // ordered before its next operation
    bool destroyed = false;           // cudaStreamDestroy'ed: freed once its queue has run
    bool blocking() const { return (flags & cudaStreamNonBlocking) == 0; }
};

struct CUevent_st {
    unsigned flags = cudaEventDefault;
    bool recorded = false;
    int stream = 0;              // where it was last recorded
    std::uint64_t position = 0;  // complete once that stream has run this far
    course_emu::detail::Clock clock;
    std::chrono::steady_clock::time_point when{};
    bool stamped = false;  // its record has run (has a time)
};

namespace course_emu::detail {
namespace {

struct Streams {
    std::recursive_mutex mutex;
    std::atomic<bool> tracking{false};  // a stream was created: default-stream work goes through here too
    int next_id = 1;
    CUstream_st legacy;                   // the legacy default stream, id 0
    std::map<int, CUstream_st*> live;     // created and not destroyed, by id
    Clock host;                           // what the host has synchronised with
    Clock retired;                        // the clocks of destroyed streams whose work has all run
    std::vector<PastAccess> history;      // accesses not yet ordered before the host
    std::uint64_t steps = 0;              // scheduling decisions, for the random schedule
};

Streams& streams() {
    static Streams* s = new Streams;  // never destroyed: static destructors may still free memory
    return *s;
}

CUstream_st* resolve(Streams& s, cudaStream_t stream) { return stream == nullptr ? &s.legacy : stream; }

bool is_live(Streams& s, int id) { return s.live.count(id) != 0; }

// A handle the program may still use: created and not destroyed.
// (Looked up by address: a destroyed handle may be freed already.)
bool is_usable(Streams& s, const CUstream_st* t) {
    if (t == nullptr || t == &s.legacy) return true;
    for (const auto& entry : s.live) {
        if (entry.second == t) return !t->destroyed;
    }
    return false;
}

// Frees the destroyed streams whose work has all run.
void collect_destroyed(Streams& s) {
    for (auto it = s.live.begin(); it != s.live.end();) {
        if (it->second->destroyed && it->second->queue.empty()) {
            join(s.retired, it->second->clock);  // a device synchronisation still learns of its work
            delete it->second;
            it = s.live.erase(it);
        } else {
            ++it;
        }
    }
}

bool stream_done_up_to(Streams& s, int id, std::uint64_t position) {
    auto it = s.live.find(id);
    return it == s.live.end() || it->second->completed >= position;
}

bool event_complete(Streams& s, const CUevent_st* e) {
    return !e->recorded || e->stream == 0 || stream_done_up_to(s, e->stream, e->position);
}

bool head_ready(Streams& s, const CUstream_st& t) {
    if (t.queue.empty()) return false;
    const Operation& op = t.queue.front();
    return op.kind != OperationKind::wait || stream_done_up_to(s, op.wait_stream, op.wait_position);
}

// Extends `need` (stream id -> position that must have run) with what the
// needed cudaStreamWaitEvent operations wait for.
void close_over_waits(Streams& s, std::map<int, std::uint64_t>& need) {
    for (bool changed = true; changed;) {
        changed = false;
        for (const auto& entry : need) {
            auto it = s.live.find(entry.first);
            if (it == s.live.end()) continue;
            for (const Operation& op : it->second->queue) {
                if (op.position > entry.second) break;
                if (op.kind != OperationKind::wait || !is_live(s, op.wait_stream)) continue;
                std::uint64_t& wanted = need[op.wait_stream];
                if (wanted < op.wait_position) {
                    wanted = op.wait_position;
                    changed = true;
                    break;  // `need` changed under the loop: start over
                }
            }
            if (changed) break;
        }
    }
}

void run_head(Streams& s, CUstream_st& t) {
    Operation op = std::move(t.queue.front());
    t.queue.pop_front();
    if (op.kind == OperationKind::work && op.run) op.run();
    if (op.kind == OperationKind::record && op.event != nullptr && op.event->stream == t.id &&
        op.event->position == op.position) {
        op.event->when = std::chrono::steady_clock::now();
        op.event->stamped = true;
    }
    t.completed = op.position;
    (void)s;
}

// Runs queued operations until every stream in `need` has run as far as it
// says, at most `max_steps` of them; true when done.
bool run_until(Streams& s, std::map<int, std::uint64_t> need, std::uint64_t max_steps = UINT64_MAX) {
    close_over_waits(s, need);
    for (std::uint64_t step = 0;; ++step) {
        std::vector<CUstream_st*> ready;
        bool done = true;
        for (const auto& entry : need) {
            auto it = s.live.find(entry.first);
            if (it == s.live.end() || it->second->completed >= entry.second) continue;
            done = false;
            if (head_ready(s, *it->second)) ready.push_back(it->second);
        }
        if (done) {
            collect_destroyed(s);
            return true;
        }
        if (step >= max_steps) return false;
        if (ready.empty()) {
            // Cannot happen: a wait only names work issued before it.
            set_sticky_fault(cudaErrorLaunchFailure, "course emulator: internal error: queued stream work cannot run");
            return true;
        }
        // `ready` is in stream id order (std::map).
        CUstream_st* pick = ready.front();
        const Schedule schedule = current_schedule();
        if (schedule.kind == Schedule::Kind::reverse) {
            pick = ready.back();
        } else if (schedule.kind == Schedule::Kind::random) {
            std::mt19937_64 rng(schedule.seed * 0x9E3779B97F4A7C15ull + ++s.steps);
            pick = ready[rng() % ready.size()];
        }
        run_head(s, *pick);
    }
}

std::map<int, std::uint64_t> everything(Streams& s, bool blocking_only) {
    std::map<int, std::uint64_t> need;
    for (const auto& entry : s.live) {
        if (!blocking_only || entry.second->blocking()) need[entry.first] = entry.second->issued;
    }
    return need;
}

// The host now knows that everything `clock` covers has run.
void host_learns(Streams& s, const Clock& clock) {
    join(s.host, clock);
    std::erase_if(s.history, [&s](const PastAccess& a) { return covers(s.host, a.stream, a.position); });
}

const char* access_verb(bool write) { return write ? "writes" : "reads"; }

// "bytes [64, 128) of a 4096-byte device allocation at 0x..." or "pinned host memory at 0x...".
std::string describe_bytes(const Range& r) {
    char text[160];
    for (const auto& [start, bytes] : live_device_allocations()) {
        if (r.begin >= start && r.begin < start + std::max<std::size_t>(bytes, 1)) {
            std::snprintf(text, sizeof text, "bytes [%zu, %zu) of the %zu-byte device allocation at %p",
                          static_cast<std::size_t>(r.begin - start), static_cast<std::size_t>(r.end - start), bytes,
                          static_cast<const void*>(start));
            return text;
        }
    }
    std::snprintf(text, sizeof text, "%zu bytes of host memory at %p", static_cast<std::size_t>(r.end - r.begin),
                  static_cast<const void*>(r.begin));
    return text;
}

// Checks an operation about to be issued with stamp (stream, position) and
// clock `clock` against the accesses not ordered before it, then remembers its own.
void check_and_remember(Streams& s, int stream, std::uint64_t position, const Clock& clock,
                        const std::vector<Range>& ranges, const std::string& what) {
    if (ranges.empty()) return;
    bool reported = sticky_error() != cudaSuccess;  // one report: the first race
    for (const Range& r : ranges) {
        for (const PastAccess& a : s.history) {
            if (reported) break;
            if (!(r.write || a.range.write) || r.end <= a.range.begin || a.range.end <= r.begin) continue;
            if (covers(clock, a.stream, a.position)) continue;
            const std::string report =
                "race between streams: " + what + " in " + stream_name(stream) + " " + access_verb(r.write) + " " +
                    describe_bytes(r) + ", which " + *a.what + " in " + stream_name(a.stream) + " " +
                    access_verb(a.range.write) +
                    ", and nothing orders the two (no cudaStreamWaitEvent on an event recorded after it, no "
                    "synchronisation of the host between them, and not the same stream)";
            set_sticky_fault(cudaErrorLaunchFailure, report);
            std::fprintf(stderr, "course emulator: %s\n", report.c_str());
            reported = true;
        }
    }
    auto shared_what = std::make_shared<const std::string>(what);
    // Bounded: a program that issues work for ever without synchronising
    // forgets its oldest accesses (a race with them is then missed).
    constexpr std::size_t kMaxHistory = 16384;
    if (s.history.size() + ranges.size() > kMaxHistory) {
        s.history.erase(s.history.begin(), s.history.begin() + static_cast<std::ptrdiff_t>(s.history.size() / 2));
    }
    for (const Range& r : ranges) s.history.push_back({r, stream, position, shared_what});
}

// Issues `run` (accessing `ranges`) to stream `t`: queued for a created
// stream, run at once (after every blocking stream's work) for the legacy
// default stream. Returns the operation's position.
std::uint64_t issue(Streams& s, CUstream_st& t, const std::vector<Range>& ranges, const std::string& what,
                    std::function<void()> run, OperationKind kind = OperationKind::work) {
    if (t.id == 0) {
        run_until(s, everything(s, true));
        for (const auto& entry : s.live) {
            if (entry.second->blocking()) join(t.clock, entry.second->clock);
        }
        join(t.clock, s.host);
        const std::uint64_t position = ++t.issued;
        tick(t.clock, 0, position);
        check_and_remember(s, 0, position, t.clock, ranges, what);
        if (run && kind == OperationKind::work) run();
        t.completed = position;
        return position;
    }
    join(t.clock, s.host);
    if (t.blocking()) join(t.clock, s.legacy.clock);
    const std::uint64_t position = ++t.issued;
    tick(t.clock, t.id, position);
    check_and_remember(s, t.id, position, t.clock, ranges, what);
    Operation op;
    op.kind = kind;
    op.position = position;
    op.run = std::move(run);
    t.queue.push_back(std::move(op));
    return position;
}

// Runs stream `t`'s work and makes the host know it. Waiting for the legacy
// default stream waits, like a marker issued to it, for the blocking streams' work.
void finish_stream(Streams& s, CUstream_st& t) {
    if (t.id != 0) {
        run_until(s, {{t.id, t.issued}});
    } else if (s.tracking) {
        issue(s, t, {}, "", {}, OperationKind::record);
    }
    host_learns(s, t.clock);
}

std::string located(const std::string& what, const char* file, int line) {
    if (file == nullptr || *file == '\0') return what;
    return what + " (" + file + ":" + std::to_string(line) + ")";
}

const char* direction_name(bool dst_device, bool src_device) {
    if (dst_device && src_device) return "device-to-device";
    if (dst_device) return "host-to-device";
    if (src_device) return "device-to-host";
    return "host-to-host";
}

cudaError_t copy(void* dst, const void* src, std::size_t bytes, cudaMemcpyKind kind, cudaStream_t stream,
                 bool synchronous, const char* call, const char* file, int line) {
    if (sticky_error() != cudaSuccess) return api_result(cudaSuccess);
    if (bytes == 0) return api_result(cudaSuccess);
    bool dst_device = false, src_device = false;
    const cudaError_t invalid = validate_copy(dst, src, bytes, kind, dst_device, src_device);
    if (invalid != cudaSuccess) return api_result(invalid);
    Streams& s = streams();
    std::lock_guard lock(s.mutex);
    if (!s.tracking && stream == nullptr) {
        perform_copy(dst, src, bytes, dst_device);
        return api_result(cudaSuccess);
    }
    // Pageable host memory makes even an asynchronous copy return only when it is done.
    if (!dst_device && !is_pinned_range(dst, bytes)) synchronous = true;
    if (!src_device && !is_pinned_range(src, bytes)) synchronous = true;
    if (!is_usable(s, stream)) return api_result(cudaErrorInvalidResourceHandle);
    CUstream_st& t = *resolve(s, stream);
    const char* d = static_cast<const char*>(dst);
    const char* c = static_cast<const char*>(src);
    const std::vector<Range> ranges{{c, c + bytes, false}, {d, d + bytes, true}};
    const std::string what = located(std::string(call) + " " + direction_name(dst_device, src_device) + " of " +
                                         std::to_string(bytes) + " bytes",
                                     file, line);
    issue(s, t, ranges, what, [dst, src, bytes, dst_device] {
        if (sticky_error() == cudaSuccess) perform_copy(dst, src, bytes, dst_device);
    });
    if (synchronous) finish_stream(s, t);
    return api_result(cudaSuccess);
}

cudaError_t fill(void* ptr, int value, std::size_t bytes, cudaStream_t stream, bool synchronous, const char* call,
                 const char* file, int line) {
    if (sticky_error() != cudaSuccess) return api_result(cudaSuccess);
    if (bytes == 0) return api_result(cudaSuccess);
    const cudaError_t invalid = validate_memset(ptr, bytes);
    if (invalid != cudaSuccess) return api_result(invalid);
    Streams& s = streams();
    std::lock_guard lock(s.mutex);
    if (!s.tracking && stream == nullptr) {
        perform_memset(ptr, value, bytes);
        return api_result(cudaSuccess);
    }
    if (!is_usable(s, stream)) return api_result(cudaErrorInvalidResourceHandle);
    CUstream_st& t = *resolve(s, stream);
    const char* p = static_cast<const char*>(ptr);
    issue(s, t, {{p, p + bytes, true}}, located(std::string(call) + " of " + std::to_string(bytes) + " bytes", file, line),
          [ptr, value, bytes] {
              if (sticky_error() == cudaSuccess) perform_memset(ptr, value, bytes);
          });
    if (synchronous) finish_stream(s, t);
    return api_result(cudaSuccess);
}

}  // namespace

bool launch_goes_through_streams(cudaStream_t stream) {
    if (current_thread != nullptr) return false;  // a launch from device code: launch() reports it
    return stream != nullptr || streams().tracking.load();
}

void launch_through_streams(const LaunchInfo& info, std::vector<PointerArgument> pointers, std::function<void()> run) {
    if (!launch_accepted(info)) return;  // refused at the launch, as on a GPU
    Streams& s = streams();
    std::lock_guard lock(s.mutex);
    if (!is_usable(s, info.stream)) {
        record(cudaErrorInvalidResourceHandle);
        return;
    }
    std::vector<Range> ranges;
    for (const PointerArgument& p : pointers) {
        if (p.address == nullptr) continue;
        const char* c = static_cast<const char*>(p.address);
        ranges.push_back({c, c + 1, !p.read_only});
    }
    const std::string what = std::string("kernel ") + info.kernel + " (launched at " + info.file + ":" +
                             std::to_string(info.line) + ")";
    issue(s, *resolve(s, info.stream), ranges, what, std::move(run));
}

void synchronize_streams() {
    Streams& s = streams();
    if (!s.tracking.load()) return;  // no stream was ever created: nothing is queued
    std::lock_guard lock(s.mutex);
    run_until(s, everything(s, false));
    host_learns(s, s.retired);
    host_learns(s, s.legacy.clock);
    for (const auto& entry : s.live) host_learns(s, entry.second->clock);
}

void reset_streams() {
    Streams& s = streams();
    std::lock_guard lock(s.mutex);
    for (auto& entry : s.live) {
        entry.second->queue.clear();
        entry.second->completed = entry.second->issued;
    }
    s.history.clear();
}

}  // namespace course_emu::detail

using course_emu::detail::api_result;

cudaError_t cudaDeviceSynchronize() {
    course_emu::detail::synchronize_streams();
    return api_result(cudaSuccess);
}

cudaError_t cudaMemcpy(void* dst, const void* src, std::size_t bytes, cudaMemcpyKind kind) {
    return course_emu::detail::copy(dst, src, bytes, kind, nullptr, true, "cudaMemcpy", "", 0);
}

cudaError_t cudaMemcpyAsync(void* dst, const void* src, std::size_t bytes, cudaMemcpyKind kind, cudaStream_t stream,
                            const char* file, int line) {
    return course_emu::detail::copy(dst, src, bytes, kind, stream, false, "cudaMemcpyAsync", file, line);
}

// cudaMemset is asynchronous to the host on a GPU; the emulator lets the host
// wait for it, so that a test's poisoning of a buffer before it calls the
// student's streams is never reported as a race.
cudaError_t cudaMemset(void* ptr, int value, std::size_t bytes) {
    return course_emu::detail::fill(ptr, value, bytes, nullptr, true, "cudaMemset", "", 0);
}

cudaError_t cudaMemsetAsync(void* ptr, int value, std::size_t bytes, cudaStream_t stream, const char* file, int line) {
    return course_emu::detail::fill(ptr, value, bytes, stream, false, "cudaMemsetAsync", file, line);
}

cudaError_t cudaStreamCreate(cudaStream_t* stream) { return cudaStreamCreateWithFlags(stream, cudaStreamDefault); }

cudaError_t cudaStreamCreateWithFlags(cudaStream_t* stream, unsigned int flags) {
    if (stream == nullptr || (flags & ~static_cast<unsigned>(cudaStreamNonBlocking)) != 0) {
        return api_result(cudaErrorInvalidValue);
    }
    auto& s = course_emu::detail::streams();
    std::lock_guard lock(s.mutex);
    s.tracking = true;
    auto* created = new CUstream_st;
    created->id = s.next_id++;
    created->flags = flags;
    s.live[created->id] = created;
    *stream = created;
    return api_result(cudaSuccess);
}

cudaError_t cudaStreamDestroy(cudaStream_t stream) {
    if (stream == nullptr) return api_result(cudaErrorInvalidResourceHandle);
    auto& s = course_emu::detail::streams();
    std::lock_guard lock(s.mutex);
    if (!course_emu::detail::is_usable(s, stream)) return api_result(cudaErrorInvalidResourceHandle);
    // As on a GPU, the call returns at once and the queued work still runs
    // (when the host next synchronises); the stream is freed after it.
    stream->destroyed = true;
    course_emu::detail::collect_destroyed(s);
    return api_result(cudaSuccess);
}

cudaError_t cudaStreamSynchronize(cudaStream_t stream) {
    auto& s = course_emu::detail::streams();
    std::lock_guard lock(s.mutex);
    CUstream_st& t = *course_emu::detail::resolve(s, stream);
    if (!course_emu::detail::is_usable(s, &t)) return api_result(cudaErrorInvalidResourceHandle);
    course_emu::detail::finish_stream(s, t);
    return api_result(cudaSuccess);
}

cudaError_t cudaStreamQuery(cudaStream_t stream) {
    auto& s = course_emu::detail::streams();
    std::lock_guard lock(s.mutex);
    CUstream_st& t = *course_emu::detail::resolve(s, stream);
    if (!course_emu::detail::is_usable(s, &t)) return api_result(cudaErrorInvalidResourceHandle);
    if (t.id != 0 && !course_emu::detail::run_until(s, {{t.id, t.issued}}, 1)) return api_result(cudaErrorNotReady);
    course_emu::detail::finish_stream(s, t);  // done (stream 0: after the blocking streams' work)
    return api_result(cudaSuccess);
}

cudaError_t cudaStreamWaitEvent(cudaStream_t stream, cudaEvent_t event, unsigned int flags) {
    using namespace course_emu::detail;
    if (event == nullptr) return api_result(cudaErrorInvalidResourceHandle);
    if (flags > 1) return api_result(cudaErrorInvalidValue);  // cudaEventWaitDefault or cudaEventWaitExternal
    auto& s = streams();
    std::lock_guard lock(s.mutex);
    CUstream_st& t = *resolve(s, stream);
    if (!is_usable(s, &t)) return api_result(cudaErrorInvalidResourceHandle);
    if (!event->recorded) return api_result(cudaSuccess);  // waits for nothing, as in CUDA
    if (t.id == 0) {
        // The legacy default stream runs its work at once: the event's work runs first.
        run_until(s, {{event->stream, event->position}});
        join(t.clock, event->clock);
        return api_result(cudaSuccess);
    }
    join(t.clock, event->clock);
    if (!event_complete(s, event)) {
        Operation op;
        op.kind = OperationKind::wait;
        op.position = ++t.issued;
        op.wait_stream = event->stream;
        op.wait_position = event->position;
        tick(t.clock, t.id, op.position);
        t.queue.push_back(std::move(op));
    }
    return api_result(cudaSuccess);
}

cudaError_t cudaLaunchHostFunc(cudaStream_t stream, cudaHostFn_t fn, void* userData) {
    using namespace course_emu::detail;
    if (fn == nullptr) return api_result(cudaErrorInvalidValue);
    if (sticky_error() != cudaSuccess) return api_result(cudaSuccess);
    auto& s = streams();
    std::lock_guard lock(s.mutex);
    CUstream_st& t = *resolve(s, stream);
    if (!is_usable(s, &t)) return api_result(cudaErrorInvalidResourceHandle);
    issue(s, t, {}, "host function", [fn, userData] { fn(userData); });
    return api_result(cudaSuccess);
}

cudaError_t cudaEventCreate(cudaEvent_t* event) { return cudaEventCreateWithFlags(event, cudaEventDefault); }

cudaError_t cudaEventCreateWithFlags(cudaEvent_t* event, unsigned int flags) {
    constexpr unsigned known = cudaEventBlockingSync | cudaEventDisableTiming | cudaEventInterprocess;
    if (event == nullptr || (flags & ~known) != 0) return api_result(cudaErrorInvalidValue);
    // As in CUDA, an interprocess event must not record timing.
    if ((flags & cudaEventInterprocess) != 0 && (flags & cudaEventDisableTiming) == 0) {
        return api_result(cudaErrorInvalidValue);
    }
    *event = new CUevent_st;
    (*event)->flags = flags;
    return api_result(cudaSuccess);
}

cudaError_t cudaEventDestroy(cudaEvent_t event) {
    if (event == nullptr) return api_result(cudaErrorInvalidResourceHandle);
    auto& s = course_emu::detail::streams();
    std::lock_guard lock(s.mutex);
    // A queued record of it must not touch it once it is gone.
    for (auto& entry : s.live) {
        for (auto& op : entry.second->queue) {
            if (op.event == event) op.event = nullptr;
        }
    }
    delete event;
    return api_result(cudaSuccess);
}

cudaError_t cudaEventRecord(cudaEvent_t event, cudaStream_t stream) {
    using namespace course_emu::detail;
    if (event == nullptr) return api_result(cudaErrorInvalidResourceHandle);
    auto& s = streams();
    std::lock_guard lock(s.mutex);
    CUstream_st& t = *resolve(s, stream);
    if (!is_usable(s, &t)) return api_result(cudaErrorInvalidResourceHandle);
    event->recorded = true;
    event->stream = t.id;
    if (t.id == 0) {
        if (s.tracking) issue(s, t, {}, "", {}, OperationKind::record);  // after every blocking stream's work
        event->clock = t.clock;
        event->position = t.completed;
        event->when = std::chrono::steady_clock::now();
        event->stamped = true;
        return api_result(cudaSuccess);
    }
    join(t.clock, s.host);
    if (t.blocking()) join(t.clock, s.legacy.clock);
    event->clock = t.clock;
    if (t.queue.empty()) {  // nothing to wait for: complete now
        event->position = t.completed;
        event->when = std::chrono::steady_clock::now();
        event->stamped = true;
        return api_result(cudaSuccess);
    }
    Operation op;
    op.kind = OperationKind::record;
    op.position = ++t.issued;
    op.event = event;
    tick(t.clock, t.id, op.position);
    event->position = op.position;
    event->stamped = false;
    t.queue.push_back(std::move(op));
    return api_result(cudaSuccess);
}

cudaError_t cudaEventQuery(cudaEvent_t event) {
    using namespace course_emu::detail;
    if (event == nullptr) return api_result(cudaErrorInvalidResourceHandle);
    auto& s = streams();
    std::lock_guard lock(s.mutex);
    if (!event_complete(s, event) && !run_until(s, {{event->stream, event->position}}, 1)) {
        return api_result(cudaErrorNotReady);
    }
    if (event->recorded) host_learns(s, event->clock);
    return api_result(cudaSuccess);
}

cudaError_t cudaEventSynchronize(cudaEvent_t event) {
    using namespace course_emu::detail;
    if (event == nullptr) return api_result(cudaErrorInvalidResourceHandle);
    auto& s = streams();
    std::lock_guard lock(s.mutex);
    if (!event->recorded) return api_result(cudaSuccess);
    run_until(s, {{event->stream, event->position}});
    host_learns(s, event->clock);
    return api_result(cudaSuccess);
}

cudaError_t cudaEventElapsedTime(float* ms, cudaEvent_t start, cudaEvent_t end) {
    if (ms == nullptr) return api_result(cudaErrorInvalidValue);
    if (start == nullptr || end == nullptr) return api_result(cudaErrorInvalidResourceHandle);
    if (((start->flags | end->flags) & cudaEventDisableTiming) != 0) {
        return api_result(cudaErrorInvalidResourceHandle);
    }
    if (!start->recorded || !end->recorded) return api_result(cudaErrorInvalidResourceHandle);
    auto& s = course_emu::detail::streams();
    std::lock_guard lock(s.mutex);
    if (!start->stamped || !end->stamped) return api_result(cudaErrorNotReady);
    // Host time between the moments the two records ran; the schedule may
    // have run them in either order, so it is clamped at 0.
    *ms = std::max(0.0f, std::chrono::duration<float, std::milli>(end->when - start->when).count());
    return api_result(cudaSuccess);
}
