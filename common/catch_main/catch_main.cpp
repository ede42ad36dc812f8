// The one Catch2 main of the course, compiled once and linked into every
// lesson's test program. Besides Catch2's own console report it prints, for
// the first failed assertion of each test case, a compact summary that the
// course's report tool reads back:
//
//   [course] first failure at tests/01-grid-stride-loop/saxpy_test.cpp:42
//   [course]   y differs from the CPU reference in ...
//   [course]   seed 20261122 (rerun with COURSE_SEED=20261122)
//
// When the grader runs it (common/tools/run_tests.cpp), it also reports each
// passed test case on the grader's verdict channel (see "The verdict channel"
// below): the only result a grade is made of.
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
#include <cstring>
#include <mutex>
#include <optional>
#include <sstream>
#include <string>
#include <string_view>
#include <thread>
#include <vector>
#include <cerrno>
#include <fcntl.h>
#include <unistd.h>

// Defined by the emulator's runtime when the test program uses it; null on a GPU.
extern "C" int course_emu_describe_running_kernel(char* buffer, std::size_t size) __attribute__((weak));

namespace {

#if COURSE_CATCH_V3
using ListenerBase = Catch::EventListenerBase;
#else
using ListenerBase = Catch::TestEventListenerBase;
#endif

// ------------------------------------------------------------ the verdict channel
//
// The grader's runner starts this program with COURSE_VERDICT_FDS=3,4: fd 3
// holds a secret token (64 hex digits, fresh for this process), fd 4 takes
// the verdict. The token is read here from .preinit_array, before any
// constructor of the program runs (the code under test's included), and fd 3
// is closed: code under test never finds it there. After the test case ran,
// main() writes "<token> passed <test case name>" to fd 4, and only if Catch2's
// own count of failed test cases is 0 and this file's listener saw the test
// case end with at least one passed assertion, none failed and none skipped.
// A program that exits early, crashes, or writes anything else there gets no
// verdict the runner believes. What is not protected, code under test that
// reads this process's memory, is said in docs/instructor-guide.md ("What a
// grade can be trusted for").
struct VerdictChannel {
    char token[64];
    bool armed;  // a full token was read: a verdict is owed
};
VerdictChannel g_verdict;  // zero-initialised, so ready before any constructor

constexpr int kTokenFd = 3, kVerdictFd = 4;

#if defined(__ELF__)
void read_verdict_token(int, char**, char** envp) {
    const char* fds = nullptr;
    for (char** e = envp; e != nullptr && *e != nullptr; ++e) {
        if (std::strncmp(*e, "COURSE_VERDICT_FDS=", 19) == 0) fds = *e + 19;
    }
    if (fds == nullptr || std::strcmp(fds, "3,4") != 0) return;
    std::size_t got = 0;
    while (got < sizeof g_verdict.token) {
        const ssize_t n = ::read(kTokenFd, g_verdict.token + got, sizeof g_verdict.token - got);
        if (n < 0 && errno == EINTR) continue;
        if (n <= 0) break;
        got += static_cast<std::size_t>(n);
    }
    ::close(kTokenFd);
    ::fcntl(kVerdictFd, F_SETFD, FD_CLOEXEC);
    g_verdict.armed = got == sizeof g_verdict.token;
}
// Functions in .preinit_array run before every .init_array entry (all
// constructors, whatever their priority).
__attribute__((section(".preinit_array"), used)) void (*const g_read_verdict_token)(int, char**, char**) =
    read_verdict_token;
#endif

// What the listener saw of the run: the grader's runner selects exactly one
// test case per process.
struct RunRecord {
    int test_cases = 0;
    std::string name;
    long passed = 0, failed = 0;
    bool skipped = false;
};
RunRecord g_run;

// Writes the verdict when one is owed and the test case passed, then forgets the token.
void report_verdict(int catch_result) {
    if (!g_verdict.armed) return;
    const bool passed =
        catch_result == 0 && g_run.test_cases == 1 && g_run.passed > 0 && g_run.failed == 0 && !g_run.skipped;
    if (passed) {
        const std::string line =
            std::string(g_verdict.token, sizeof g_verdict.token) + " passed " + g_run.name + "\n";
        if (::write(kVerdictFd, line.data(), line.size()) < 0) std::perror("course: writing the verdict");
    }
    ::close(kVerdictFd);
    std::memset(g_verdict.token, 0, sizeof g_verdict.token);
    g_verdict.armed = false;
}

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
        ++g_run.test_cases;
        g_run.name = std::string(info.name);
        if (g_watchdog != nullptr) {
            const std::string_view file = relative_path(info.lineInfo.file);
            g_watchdog->arm(std::string(info.name),
                            std::string(file) + ":" + std::to_string(info.lineInfo.line));
        }
    }

    void testCaseEnded(Catch::TestCaseStats const& stats) override {
        if (g_watchdog != nullptr) g_watchdog->disarm();
        // Catch2's own counts (v3 tells a listener of passed assertions only
        // when it asks to be told of every assertion).
        g_run.passed += static_cast<long>(stats.totals.assertions.passed);
        g_run.failed += static_cast<long>(stats.totals.assertions.failed);
#if COURSE_CATCH_V3 && (CATCH_VERSION_MAJOR > 3 || CATCH_VERSION_MINOR >= 3)
        if (stats.totals.testCases.skipped > 0 || stats.totals.assertions.skipped > 0) g_run.skipped = true;
#endif
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

CATCH_REGISTER_LISTENER(FirstFailureListener)

// `--course-list`: the names of the program's test cases, one a line;
// `--course-list-stand-ins`: those of the GPU-only stand-ins on the emulator
// (course/catch.hpp's COURSE_GPU_ONLY_TEST_CASE). The grader lists the tests
// it expects with these, from a program of its own build, in Catch2's words
// for either major.
std::vector<std::string> listing_arguments(std::string_view option) {
#if COURSE_CATCH_V3
    std::vector<std::string> args = {"--list-tests", "--verbosity", "quiet"};
#else
    std::vector<std::string> args = {"--list-test-names-only"};
#endif
    if (option == "--course-list-stand-ins") args.push_back("[emulator-stand-in]");
    return args;
}

}  // namespace

int main(int argc, char* argv[]) {
    if (argc == 2 && (std::string_view(argv[1]) == "--course-list" ||
                      std::string_view(argv[1]) == "--course-list-stand-ins")) {
        std::vector<std::string> listing = listing_arguments(argv[1]);
        std::vector<char*> args = {argv[0]};
        for (std::string& a : listing) args.push_back(a.data());
        Catch::Session().run(static_cast<int>(args.size()), args.data());
        return 0;
    }
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
    report_verdict(result);
    return result;
}
