// The one Catch2 main of the course, compiled once and linked into every
// lesson's test program. Besides Catch2's own console report it prints, for
// the first failed assertion of each test case, a compact summary that the
// course's report tool reads back:
//
//   [course] first failure at tests/01-grid-stride-loop/saxpy_test.cpp:42
//   [course]   y differs from the CPU reference in ...
//   [course]   seed 20261122 (rerun with COURSE_SEED=20261122)
//
// Works with Catch2 v2 (Debian 12) and v3 (Ubuntu 24.04, Debian 13).
#include <course/inputs.hpp>

#if __has_include(<catch2/catch_all.hpp>)
#include <catch2/catch_all.hpp>
#define COURSE_CATCH_V3 1
#else
#define CATCH_CONFIG_RUNNER
#include <catch2/catch.hpp>
#define COURSE_CATCH_V3 0
#endif

#include <algorithm>
#include <chrono>
#include <condition_variable>
#include <cstdio>
#include <cstdlib>
#include <mutex>
#include <optional>
#include <sstream>
#include <string>
#include <string_view>
#include <thread>
#include <vector>
#include <unistd.h>

// Defined by the emulator's runtime when the test program uses it; null on a GPU.
extern "C" int course_emu_describe_running_kernel(char* buffer, std::size_t size) __attribute__((weak));

namespace {

#if COURSE_CATCH_V3
using ListenerBase = Catch::EventListenerBase;
#else
using ListenerBase = Catch::TestEventListenerBase;
#endif

// Paths in reports are relative to the repository, as students see them.
std::string_view relative_path(std::string_view file) {
#ifdef COURSE_SOURCE_ROOT
    constexpr std::string_view root = COURSE_SOURCE_ROOT "/";
    if (file.substr(0, root.size()) == root) file.remove_prefix(root.size());
#endif
    return file;
}

// Each line of `text` behind the marker, with the repository's own path
// removed wherever it appears (fault reports quote source paths).
std::string prefixed(std::string text) {
#ifdef COURSE_SOURCE_ROOT
    constexpr std::string_view root = COURSE_SOURCE_ROOT "/";
    for (std::size_t at; (at = text.find(root)) != std::string::npos;) text.erase(at, root.size());
#endif
    std::istringstream lines(text);
    std::string line, out;
    while (std::getline(lines, line)) out += "[course]   " + line + "\n";
    return out;
}

// Ends a test case that overruns COURSE_TEST_TIMEOUT seconds with a report,
// instead of leaving a hung process for the test runner to kill: a kernel
// that never finishes is a student's bug to explain, not a crash.
class Watchdog {
public:
    Watchdog() {
        const char* env = std::getenv("COURSE_TEST_TIMEOUT");
        const long seconds = env != nullptr ? std::strtol(env, nullptr, 10) : 0;
        if (seconds <= 0) return;
        limit_ = std::chrono::seconds(seconds);
        thread_ = std::thread([this] { watch(); });
    }
    ~Watchdog() {
        if (!thread_.joinable()) return;
        {
            std::lock_guard lock(mutex_);
            stopping_ = true;
        }
        changed_.notify_all();
        thread_.join();
    }

    void arm(std::string test_name, std::string where) {
        if (!thread_.joinable()) return;
        {
            std::lock_guard lock(mutex_);
            deadline_ = std::chrono::steady_clock::now() + limit_;
            test_name_ = std::move(test_name);
            where_ = std::move(where);
        }
        changed_.notify_all();
    }

    void disarm() {
        std::lock_guard lock(mutex_);
        deadline_.reset();
    }

private:
    void watch() {
        std::unique_lock lock(mutex_);
        while (!stopping_) {
            if (!deadline_) {
                changed_.wait(lock);
            } else if (changed_.wait_until(lock, *deadline_) == std::cv_status::timeout && deadline_ &&
                       std::chrono::steady_clock::now() >= *deadline_) {
                expire();
            }
        }
    }

    [[noreturn]] void expire() {
        std::string body = "the test \"" + test_name_ + "\" did not finish within " +
                           std::to_string(limit_.count()) +
                           " s and was stopped.\nlikely cause: a loop that never ends (does the loop variable "
                           "grow on every iteration?), or threads waiting for each other forever.";
        char running[512];
        if (course_emu_describe_running_kernel != nullptr &&
            course_emu_describe_running_kernel(running, sizeof running) != 0) {
            body += "\nemulator: " + std::string(running);
        }
        // write(2), not stdio: the hung thread may hold stdout's lock.
        const std::string text = "\n[course] first failure at " + where_ + "\n" + prefixed(body);
        if (::write(STDOUT_FILENO, text.data(), text.size()) < 0) _exit(125);
        _exit(124);
    }

    std::chrono::seconds limit_{0};
    std::thread thread_;
    std::mutex mutex_;
    std::condition_variable changed_;
    std::optional<std::chrono::steady_clock::time_point> deadline_;
    std::string test_name_, where_;
    bool stopping_ = false;
};

Watchdog* g_watchdog = nullptr;

class FirstFailureListener : public ListenerBase {
public:
    using ListenerBase::ListenerBase;

    void testCaseStarting(Catch::TestCaseInfo const& info) override {
        ListenerBase::testCaseStarting(info);
        reported_ = false;
        if (g_watchdog != nullptr) {
            const std::string_view file = relative_path(info.lineInfo.file);
            g_watchdog->arm(std::string(info.name),
                            std::string(file) + ":" + std::to_string(info.lineInfo.line));
        }
    }

    void testCaseEnded(Catch::TestCaseStats const& stats) override {
        if (g_watchdog != nullptr) g_watchdog->disarm();
        ListenerBase::testCaseEnded(stats);
    }

#if COURSE_CATCH_V3
    void assertionEnded(Catch::AssertionStats const& stats) override { report(stats); }
#else
    bool assertionEnded(Catch::AssertionStats const& stats) override {
        report(stats);
        return true;
    }
#endif

private:
    void report(Catch::AssertionStats const& stats) {
        const Catch::AssertionResult& result = stats.assertionResult;
        if (result.isOk() || reported_) return;
        reported_ = true;
        const auto where = result.getSourceInfo();
        std::printf("[course] first failure at %.*s:%zu\n", static_cast<int>(relative_path(where.file).size()),
                    relative_path(where.file).data(), static_cast<std::size_t>(where.line));
        std::string body;
        if (result.getResultType() == Catch::ResultWas::ThrewException) {
            body = "unexpected exception: " + std::string(result.getMessage());
        } else if (result.hasExpression() && result.getResultType() != Catch::ResultWas::ExplicitFailure) {
            body = std::string(result.getExpressionInMacro());
            if (result.hasExpandedExpression()) body += "  with values: " + std::string(result.getExpandedExpression());
            if (result.hasMessage()) body += "\n" + std::string(result.getMessage());
        } else {
            body = std::string(result.getMessage());
        }
        for (const auto& info : stats.infoMessages) {
            if (std::string(info.message) != std::string(result.getMessage())) body += "\n" + std::string(info.message);
        }
        std::fputs(prefixed(body).c_str(), stdout);
        std::printf("[course]   seed %llu (rerun with COURSE_SEED=%llu)\n",
                    static_cast<unsigned long long>(course::seed()), static_cast<unsigned long long>(course::seed()));
        std::fflush(stdout);
    }

    bool reported_ = false;
};

}  // namespace

CATCH_REGISTER_LISTENER(FirstFailureListener)

int main(int argc, char* argv[]) {
    Watchdog watchdog;
    g_watchdog = &watchdog;
    // A run that matches no test case fails instead of passing silently
    // (a test name CTest mangled, say). Not when listing: Catch2 v3 treats a
    // listing as a run of no tests.
    std::vector<char*> args(argv, argv + argc);
    const bool listing = std::any_of(args.begin() + 1, args.end(),
                                     [](const char* a) { return std::string_view(a).rfind("--list", 0) == 0; });
    char warn[] = "--warn";
#if COURSE_CATCH_V3
    char no_tests[] = "UnmatchedTestSpec";  // v3's name for it
#else
    char no_tests[] = "NoTests";
#endif
    if (!listing) args.insert(args.begin() + 1, {warn, no_tests});
    const int result = Catch::Session().run(static_cast<int>(args.size()), args.data());
    g_watchdog = nullptr;
    return result;
}
