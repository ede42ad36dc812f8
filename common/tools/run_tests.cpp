// course_run_tests: the grader's trusted test runner. It runs each test case
// of a list in a process of its own, gives that process a fresh secret token
// through a pipe, and believes a test case passed only when the process hands
// the token back on a second pipe, in the one line the course's test main
// writes after its checks passed (common/catch_main/catch_main.cpp,
// "verdict channel"), and then exits with status 0.
//
// Nothing the test process writes elsewhere (files, stdout, stderr, its exit
// status alone) can make a test case pass. What the process printed is kept,
// but only to explain a failure.
//
//   course_run_tests --tests FILE --results FILE [--jobs N] [--timeout S]
//                    [--deadline S] [--chdir DIR] [--prefix FILE]
//   course_run_tests list --lesson NN --lister PROGRAM --program PROGRAM --cache FILE
//
// --tests    the trusted list, JSON lines, one test case an object: {"lesson",
//            "program", "name", "run": false for a GPU-only stand-in,
//            reported skipped without running}, as `list` prints them
// list       prints lesson NN's part of such a list: the test cases the
//            course's own build of the lesson (PROGRAM lessonNN_list, the
//            tests without any implementation) names with --course-list,
//            each to be run by --program (the graded build); the names are
//            kept in --cache (JSON lines) until the lister is rebuilt, so a
//            class of submissions lists each lesson once
// --results  written here, JSON lines, one object per test case of the list,
//            in its order: {"lesson", "name", "status": passed|failed|skipped,
//            "reason": the runner's own (empty when passed), "output": what
//            the process printed, control characters but newlines and tabs
//            removed}
// --prefix   a file of NUL-terminated arguments put before each program (the
//            grader's sandbox); the token and verdict pipes are its fds 3 and 4
// --timeout  wall seconds a test case may take before it is killed (default 90)
// --deadline wall seconds all of them may take: then the running ones are
//            killed, and those not started fail unrun (default: no limit)
// --chdir    the working folder of every test process
#include <algorithm>
#include <cerrno>
#include <chrono>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <functional>
#include <iostream>
#include <sstream>
#include <string>
#include <vector>

#include <fcntl.h>
#include <poll.h>
#include <sys/prctl.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "json.hpp"

namespace {

namespace json = course_tools::json;

constexpr int kTokenFd = 3;             // where the test process reads its token
constexpr int kVerdictFd = 4;           // where it writes its verdict
constexpr std::size_t kTokenBytes = 32;  // sent as 64 hex digits
constexpr std::size_t kOutputHead = 48 * 1024, kOutputTail = 8 * 1024;  // what is kept of the output
constexpr std::size_t kVerdictMax = 4096;  // a verdict line is far shorter

// The signal that asked the runner to stop (Ctrl-C in a terminal, or a
// watcher's kill): the test processes are in process groups of their own,
// which a terminal's Ctrl-C does not reach, so the runner ends them itself.
volatile std::sig_atomic_t g_stop_signal = 0;

extern "C" void on_stop_signal(int signal_number) { g_stop_signal = signal_number; }

struct Job {
    std::string lesson, program, name;
    bool skip = false;
    // while it runs
    pid_t pid = -1;
    int out_fd = -1, verdict_fd = -1;
    std::string token, output_head, output_tail, verdict;
    bool output_cut = false, verdict_overflow = false, timed_out = false, past_deadline = false;
    bool ended_status_ready = false;  // reaped, not yet handled
    bool ended = false;  // the process was reaped; what it left behind is being killed
    int wait_status = 0;
    std::chrono::steady_clock::time_point started, ended_at;
    // the result
    std::string status, reason;
};

[[noreturn]] void die(const std::string& message) {
    std::cerr << "course_run_tests: " << message << "\n";
    std::exit(2);
}

// What `program option` prints on stdout; false when it could not run or
// did not exit with 0. (The course's own lister, never a student's program.)
bool output_of(const std::string& program, const std::string& option, std::string& out) {
    int fds[2];
    if (pipe(fds) != 0) return false;
    const pid_t pid = fork();
    if (pid < 0) return false;
    if (pid == 0) {
        dup2(fds[1], STDOUT_FILENO);
        close(fds[0]);
        close(fds[1]);
        execl(program.c_str(), program.c_str(), option.c_str(), static_cast<char*>(nullptr));
        _exit(127);
    }
    close(fds[1]);
    char buffer[4096];
    for (ssize_t got; (got = read(fds[0], buffer, sizeof buffer)) != 0;) {
        if (got < 0 && errno == EINTR) continue;
        if (got < 0) break;
        out.append(buffer, static_cast<std::size_t>(got));
    }
    close(fds[0]);
    int status = 0;
    while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
    }
    return WIFEXITED(status) && WEXITSTATUS(status) == 0;
}

// The text of the file at `path`; dies naming it when it cannot be read.
std::string read_text(const std::string& path) {
    std::ifstream in(path, std::ios::binary);
    if (!in) die("cannot read " + path);
    std::ostringstream text;
    text << in.rdbuf();
    return text.str();
}

std::vector<std::string> lines_of(const std::string& text) {
    std::vector<std::string> lines;
    std::istringstream in(text);
    for (std::string line; std::getline(in, line);) {
        if (!line.empty()) lines.push_back(line);
    }
    return lines;
}

// `list`: lesson NN's test cases as JSON lines of the --tests list.
int list_command(int argc, char** argv) {
    std::string lesson, lister, program, cache;
    for (int i = 2; i + 1 < argc; i += 2) {
        const std::string arg = argv[i], value = argv[i + 1];
        if (arg == "--lesson") lesson = value;
        else if (arg == "--lister") lister = value;
        else if (arg == "--program") program = value;
        else if (arg == "--cache") cache = value;
        else die("list: unknown option " + arg);
    }
    if (lesson.empty() || lister.empty() || program.empty() || cache.empty() || argc % 2 != 0) {
        die("usage: course_run_tests list --lesson NN --lister PROGRAM --program PROGRAM --cache FILE");
    }
    // The cache: {"name", "run"} a line, current while the lister is not newer.
    struct stat lister_stat {}, cache_stat {};
    if (stat(lister.c_str(), &lister_stat) != 0) die("lesson " + lesson + "'s lister " + lister + " is missing");
    std::string cached;
    const auto newer = [](const timespec& a, const timespec& b) {
        return a.tv_sec != b.tv_sec ? a.tv_sec > b.tv_sec : a.tv_nsec > b.tv_nsec;
    };
    if (stat(cache.c_str(), &cache_stat) == 0 && cache_stat.st_size > 0 &&
        !newer(lister_stat.st_mtim, cache_stat.st_mtim)) {
        cached = read_text(cache);
    }
    if (cached.empty()) {
        std::string names, stand_ins;
        if (!output_of(lister, "--course-list", names) || !output_of(lister, "--course-list-stand-ins", stand_ins)) {
            die("listing lesson " + lesson + "'s test cases failed (the course's fault, not a student's)");
        }
        const std::vector<std::string> stand_in_names = lines_of(stand_ins);
        std::ostringstream text;
        for (const std::string& name : lines_of(names)) {
            const bool stand_in = std::find(stand_in_names.begin(), stand_in_names.end(), name) != stand_in_names.end();
            text << "{\"name\": " << json::quote(name) << ", \"run\": " << (stand_in ? "false" : "true") << "}\n";
        }
        cached = text.str();
        if (cached.empty()) die("lesson " + lesson + " lists no test case (the course's fault, not a student's)");
        const std::string temporary = cache + "." + std::to_string(getpid());
        std::ofstream(temporary, std::ios::binary | std::ios::trunc) << cached;
        if (std::rename(temporary.c_str(), cache.c_str()) != 0) std::remove(temporary.c_str());
    }
    for (const json::Value& entry : json::parse_lines(cached, cache)) {
        std::cout << "{\"lesson\": " << json::quote(lesson) << ", \"program\": " << json::quote(program)
                  << ", \"name\": " << json::quote(entry.at("name").as_string())
                  << ", \"run\": " << (entry.at("run").as_bool() ? "true" : "false") << "}\n";
    }
    return std::cout.flush() ? 0 : 2;
}

std::string hex_token() {
    unsigned char bytes[kTokenBytes];
    std::size_t got = 0;
    while (got < sizeof bytes) {
        const ssize_t n = getrandom(bytes + got, sizeof bytes - got, 0);
        if (n < 0 && errno == EINTR) continue;
        if (n <= 0) die(std::string("getrandom failed: ") + std::strerror(errno));
        got += static_cast<std::size_t>(n);
    }
    static const char digits[] = "0123456789abcdef";
    std::string hex;
    for (const unsigned char b : bytes) {
        hex += digits[b >> 4];
        hex += digits[b & 15];
    }
    return hex;
}

// Catch2 reads a test spec: a comma, a bracket or a backslash in a test
// case's name must be escaped for the name to select exactly that test case.
std::string catch_spec(const std::string& name) {
    std::string spec;
    for (const char c : name) {
        if (c == ',' || c == '[' || c == ']' || c == '\\') spec += '\\';
        spec += c;
    }
    return spec;
}

// Printable text: control characters dropped but for newlines and tabs (a
// test's output may hold anything; a report shows it as text).
std::string printable(const std::string& text) {
    std::string out;
    out.reserve(text.size());
    for (const char c : text) {
        if (c == '\n' || c == '\t' || (static_cast<unsigned char>(c) >= 0x20 && c != 0x7f)) out += c;
    }
    return out;
}

const char* signal_name(int sig) {
    switch (sig) {
    case SIGSEGV: return "SIGSEGV";
    case SIGBUS: return "SIGBUS";
    case SIGABRT: return "SIGABRT";
    case SIGKILL: return "SIGKILL";
    case SIGFPE: return "SIGFPE";
    case SIGILL: return "SIGILL";
    case SIGTERM: return "SIGTERM";
    case SIGXCPU: return "SIGXCPU";
    case SIGXFSZ: return "SIGXFSZ";
    case SIGPIPE: return "SIGPIPE";
    default: return nullptr;
    }
}

void start(Job& job, const std::vector<std::string>& prefix, const std::string& chdir_to) {
    int token_pipe[2], verdict_pipe[2], out_pipe[2];
    if (pipe2(token_pipe, O_CLOEXEC) != 0 || pipe2(verdict_pipe, O_CLOEXEC) != 0 || pipe2(out_pipe, O_CLOEXEC) != 0) {
        die(std::string("pipe failed: ") + std::strerror(errno));
    }
    job.token = hex_token();
    // The token is in the pipe before the process starts: it reads it before
    // any code of the submission runs, and nobody else holds the read end.
    if (write(token_pipe[1], job.token.data(), job.token.size()) != static_cast<ssize_t>(job.token.size())) {
        die("writing the token failed");
    }
    close(token_pipe[1]);

    std::vector<std::string> args = prefix;
    args.push_back(job.program);
    args.push_back(catch_spec(job.name));
    std::vector<char*> argv;
    for (std::string& a : args) argv.push_back(a.data());
    argv.push_back(nullptr);

    job.started = std::chrono::steady_clock::now();
    const pid_t pid = fork();
    if (pid < 0) die(std::string("fork failed: ") + std::strerror(errno));
    if (pid == 0) {
        setpgid(0, 0);  // its own process group, killed as a whole when it ends
        // Each end first to a number above the targets (a pipe may have been
        // given fd 3 or 4 itself), then to its place, without close-on-exec.
        const int devnull = fcntl(open("/dev/null", O_RDONLY | O_CLOEXEC), F_DUPFD_CLOEXEC, 10);
        const int out = fcntl(out_pipe[1], F_DUPFD_CLOEXEC, 10);
        const int token = fcntl(token_pipe[0], F_DUPFD_CLOEXEC, 10);
        const int verdict = fcntl(verdict_pipe[1], F_DUPFD_CLOEXEC, 10);
        if (devnull < 0 || out < 0 || token < 0 || verdict < 0 || dup2(devnull, 0) < 0 || dup2(out, 1) < 0 ||
            dup2(out, 2) < 0 || dup2(token, kTokenFd) < 0 || dup2(verdict, kVerdictFd) < 0) {
            _exit(127);
        }
        if (!chdir_to.empty() && chdir(chdir_to.c_str()) != 0) _exit(127);
        setenv("COURSE_VERDICT_FDS", "3,4", 1);
        signal(SIGPIPE, SIG_DFL);
        execvp(argv[0], argv.data());
        const std::string text = "course_run_tests: cannot run " + args.front() + ": " + std::strerror(errno) + "\n";
        if (write(1, text.data(), text.size()) < 0) _exit(127);
        _exit(127);
    }
    setpgid(pid, pid);
    close(token_pipe[0]);
    close(verdict_pipe[1]);
    close(out_pipe[1]);
    job.pid = pid;
    job.out_fd = out_pipe[0];
    job.verdict_fd = verdict_pipe[0];
    fcntl(job.out_fd, F_SETFL, O_NONBLOCK);
    fcntl(job.verdict_fd, F_SETFL, O_NONBLOCK);
}

// Reads what is there without blocking; false at end of file.
bool drain(int fd, const std::function<void(const char*, std::size_t)>& take) {
    char buffer[8192];
    for (;;) {
        const ssize_t n = read(fd, buffer, sizeof buffer);
        if (n > 0) {
            take(buffer, static_cast<std::size_t>(n));
            continue;
        }
        if (n < 0 && errno == EINTR) continue;
        return n < 0;  // EAGAIN: open, nothing more now
    }
}

void take_output(Job& job, const char* data, std::size_t n) {
    const std::size_t room = kOutputHead - std::min(kOutputHead, job.output_head.size());
    const std::size_t head = std::min(room, n);
    job.output_head.append(data, head);
    if (head == n) return;
    job.output_cut = true;
    job.output_tail.append(data + head, n - head);
    if (job.output_tail.size() > kOutputTail) job.output_tail.erase(0, job.output_tail.size() - kOutputTail);
}

void take_verdict(Job& job, const char* data, std::size_t n) {
    if (job.verdict.size() + n > kVerdictMax) {
        job.verdict_overflow = true;
        return;
    }
    job.verdict.append(data, n);
}

void read_pipes(Job& job) {
    if (job.out_fd >= 0 && !drain(job.out_fd, [&](const char* d, std::size_t n) { take_output(job, d, n); })) {
        close(job.out_fd);
        job.out_fd = -1;
    }
    if (job.verdict_fd >= 0 && !drain(job.verdict_fd, [&](const char* d, std::size_t n) { take_verdict(job, d, n); })) {
        close(job.verdict_fd);
        job.verdict_fd = -1;
    }
}

// The process ended and what it left behind is gone (its output pipe at end
// of file) or was given its time to go: the verdict is decided.
void finish(Job& job, int timeout_seconds, bool behind_sandbox) {
    const int wait_status = job.wait_status;
    read_pipes(job);
    if (job.out_fd >= 0) close(job.out_fd);
    if (job.verdict_fd >= 0) close(job.verdict_fd);
    job.out_fd = job.verdict_fd = -1;

    const std::string expected = job.token + " passed " + job.name + "\n";
    const bool verdict_ok = !job.verdict_overflow && job.verdict == expected;
    const bool tampered = job.verdict_overflow || (!job.verdict.empty() && !verdict_ok);
    std::ostringstream reason;
    if (job.past_deadline) {
        reason << "the test process was killed: grading this submission reached its time limit";
    } else if (job.timed_out) {
        reason << "the test process was killed: it did not finish within " << timeout_seconds << " s";
    } else if (WIFSIGNALED(wait_status)) {
        const int sig = WTERMSIG(wait_status);
        reason << "the test process was killed by signal " << sig;
        if (const char* name = signal_name(sig)) reason << " (" << name << ")";
        if (verdict_ok) reason << " after its checks passed";
    } else if (tampered) {
        reason << "the verdict channel held something other than the test's own verdict: a result written by "
                  "the program under test is not believed";
    } else if (WIFEXITED(wait_status) && WEXITSTATUS(wait_status) == 0 && !verdict_ok) {
        reason << "no result: the test process exited (status 0) before its checks reported";
    } else if (behind_sandbox && WIFEXITED(wait_status) && WEXITSTATUS(wait_status) > 128 &&
               signal_name(WEXITSTATUS(wait_status) - 128) != nullptr) {
        // bubblewrap ends with 128 + the signal that ended the program it ran
        const int sig = WEXITSTATUS(wait_status) - 128;
        reason << "the test process was killed by signal " << sig << " (" << signal_name(sig) << ")";
        if (verdict_ok) reason << " after its checks passed";
    } else if (WIFEXITED(wait_status) && WEXITSTATUS(wait_status) != 0 && verdict_ok) {
        reason << "the test process ended with status " << WEXITSTATUS(wait_status) << " after its checks passed";
    } else if (WIFEXITED(wait_status) && WEXITSTATUS(wait_status) != 0) {
        reason << "the test failed (exit status " << WEXITSTATUS(wait_status) << ")";
    }
    const bool passed = verdict_ok && !job.timed_out && WIFEXITED(wait_status) && WEXITSTATUS(wait_status) == 0;
    job.status = passed ? "passed" : "failed";
    job.reason = passed ? "" : reason.str();
    job.token.assign(job.token.size(), '0');
}

}  // namespace

int main(int argc, char** argv) {
    if (argc >= 2 && std::string(argv[1]) == "list") {
        try {
            return list_command(argc, argv);
        } catch (const json::Error& e) {
            die(e.what());
        }
    }
    std::string tests_file, results_file, prefix_file, chdir_to;
    int jobs = 2, timeout_seconds = 90, deadline_seconds = 0;
    for (int i = 1; i < argc; ++i) {
        const std::string arg = argv[i];
        if (i + 1 >= argc) die("usage: see the comment at the top of common/tools/run_tests.cpp");
        const std::string value = argv[++i];
        if (arg == "--tests") tests_file = value;
        else if (arg == "--results") results_file = value;
        else if (arg == "--prefix") prefix_file = value;
        else if (arg == "--chdir") chdir_to = value;
        else if (arg == "--jobs") jobs = std::max(1, std::atoi(value.c_str()));
        else if (arg == "--timeout") timeout_seconds = std::max(1, std::atoi(value.c_str()));
        else if (arg == "--deadline") deadline_seconds = std::max(1, std::atoi(value.c_str()));
        else die("unknown option " + arg);
    }
    if (tests_file.empty() || results_file.empty()) die("--tests and --results are required");
    signal(SIGPIPE, SIG_IGN);
    prctl(PR_SET_CHILD_SUBREAPER, 1);
    {
        struct sigaction action {};
        action.sa_handler = on_stop_signal;
        sigemptyset(&action.sa_mask);
        for (const int signal_number : {SIGINT, SIGTERM, SIGHUP}) sigaction(signal_number, &action, nullptr);
    }

    std::vector<std::string> prefix;
    if (!prefix_file.empty()) {
        std::ifstream in(prefix_file, std::ios::binary);
        if (!in) die("cannot read " + prefix_file);
        for (std::string arg; std::getline(in, arg, '\0');) prefix.push_back(arg);
    }
    std::vector<Job> list;
    try {
        for (const json::Value& entry : json::parse_lines(read_text(tests_file), tests_file)) {
            Job job;
            job.lesson = entry.at("lesson").as_string();
            job.program = entry.at("program").as_string();
            job.name = entry.at("name").as_string();
            job.skip = !entry.at("run").as_bool();
            list.push_back(std::move(job));
        }
    } catch (const json::Error& e) {
        die(e.what());
    }

    const auto began = std::chrono::steady_clock::now();
    const auto past_deadline = [&](std::chrono::steady_clock::time_point now) {
        return deadline_seconds > 0 && now - began > std::chrono::seconds(deadline_seconds);
    };
    std::vector<std::size_t> running;
    std::size_t next = 0;
    for (;;) {
        while (next < list.size() && static_cast<int>(running.size()) < jobs) {
            Job& job = list[next];
            if (past_deadline(std::chrono::steady_clock::now()) && !job.skip) {
                job.status = "failed";
                job.reason = "not run: grading this submission reached its time limit (" +
                             std::to_string(deadline_seconds) + " s for the tests)";
            } else if (job.skip) {
                job.status = "skipped";
                job.reason = "GPU only: not run on the emulator";
            } else {
                start(job, prefix, chdir_to);
                running.push_back(next);
            }
            ++next;
        }
        if (running.empty()) break;
        std::vector<pollfd> fds;
        for (const std::size_t i : running) {
            if (list[i].out_fd >= 0) fds.push_back({list[i].out_fd, POLLIN, 0});
            if (list[i].verdict_fd >= 0) fds.push_back({list[i].verdict_fd, POLLIN, 0});
        }
        poll(fds.data(), fds.size(), 50);
        if (g_stop_signal != 0) {
            // Asked to stop: no test case outlives the runner, and no result
            // is written (nothing was graded).
            for (const std::size_t i : running) kill(-list[i].pid, SIGKILL);
            for (const std::size_t i : running) waitpid(list[i].pid, nullptr, 0);
            const int signal_number = g_stop_signal;
            signal(signal_number, SIG_DFL);
            raise(signal_number);
            return 128 + signal_number;
        }
        // Reap every child: the test processes, and the orphans this
        // subreaper inherits (a sandbox's inner process once its monitor is
        // gone), which would otherwise linger as zombies.
        int status = 0;
        for (pid_t pid; (pid = waitpid(-1, &status, WNOHANG)) > 0;) {
            for (const std::size_t i : running) {
                if (list[i].pid == pid && !list[i].ended) {
                    list[i].wait_status = status;
                    list[i].ended_status_ready = true;
                }
            }
        }
        const auto now = std::chrono::steady_clock::now();
        for (auto it = running.begin(); it != running.end();) {
            Job& job = list[*it];
            read_pipes(job);
            if (!job.ended && !job.timed_out &&
                (now - job.started > std::chrono::seconds(timeout_seconds) || past_deadline(now))) {
                job.timed_out = true;
                job.past_deadline = past_deadline(now);
                kill(-job.pid, SIGKILL);
            }
            if (job.ended_status_ready) {
                // Whatever it left in its process group goes too; a sandbox's
                // namespace goes with its monitor, the process just reaped.
                job.ended_status_ready = false;
                job.ended = true;
                job.ended_at = now;
                kill(-job.pid, SIGKILL);
            }
            // Done once every holder of its output is gone (so nothing of it
            // outlives the test case), or after a grace period where one
            // survives (the limits mode's non-namespaced processes).
            if (job.ended && (job.out_fd < 0 || now - job.ended_at > std::chrono::seconds(2))) {
                finish(job, timeout_seconds, !prefix.empty());
                it = running.erase(it);
            } else {
                ++it;
            }
        }
    }

    // The last orphans: reaped as they end, for a second at most.
    for (int tries = 0; tries < 20; ++tries) {
        int status = 0;
        const pid_t pid = waitpid(-1, &status, WNOHANG);
        if (pid < 0) break;  // no child left
        if (pid == 0) usleep(50 * 1000);
    }

    std::ofstream out(results_file, std::ios::binary | std::ios::trunc);
    if (!out) die("cannot write " + results_file);
    for (const Job& job : list) {
        std::string output = job.output_head;
        if (job.output_cut) output += "\n[... output cut ...]\n" + job.output_tail;
        out << "{\"lesson\": " << json::quote(job.lesson) << ", \"name\": " << json::quote(job.name)
            << ", \"status\": " << json::quote(job.status) << ", \"reason\": " << json::quote(printable(job.reason))
            << ", \"output\": " << json::quote(printable(output)) << "}\n";
    }
    return out ? 0 : 2;
}
