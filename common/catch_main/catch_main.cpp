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

#include <cstdio>
#include <sstream>
#include <string>
#include <string_view>

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

void print_prefixed(const std::string& text) {
    std::istringstream lines(text);
    std::string line;
    while (std::getline(lines, line)) std::printf("[course]   %s\n", line.c_str());
}

class FirstFailureListener : public ListenerBase {
public:
    using ListenerBase::ListenerBase;

    void testCaseStarting(Catch::TestCaseInfo const& info) override {
        ListenerBase::testCaseStarting(info);
        reported_ = false;
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
            if (info.message != result.getMessage()) body += "\n" + std::string(info.message);
        }
        print_prefixed(body);
        std::printf("[course]   seed %llu (rerun with COURSE_SEED=%llu)\n",
                    static_cast<unsigned long long>(course::seed()), static_cast<unsigned long long>(course::seed()));
        std::fflush(stdout);
    }

    bool reported_ = false;
};

}  // namespace

CATCH_REGISTER_LISTENER(FirstFailureListener)

int main(int argc, char* argv[]) { return Catch::Session().run(argc, argv); }
