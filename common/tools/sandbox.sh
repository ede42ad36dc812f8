# shellcheck shell=bash
# The grader's sandbox, sourced by ./course (which defines ROOT, die and
# config_value): the limits on a graded submission, which isolation works
# here, and the exec chain that runs a student's build or a test case in it
# (bubblewrap, or unshare, setpriv and prlimit). `sandboxed` runs a command
# in it; `sandbox_command` leaves the chain in SANDBOX for course_run_tests'
# --prefix. See docs/instructor-guide.md, "Isolation".

GRADE_BUILD_TIMEOUT="${COURSE_GRADE_BUILD_TIMEOUT:-300}"     # seconds per lesson's build
GRADE_MEMORY="${COURSE_GRADE_MEMORY:-4G}"                    # address space (emulator) or data (GPU) per process
GRADE_PROCESSES="${COURSE_GRADE_PROCESSES:-256}"             # processes and threads of the student's uid
GRADE_FILE_SIZE="${COURSE_GRADE_FILE_SIZE:-256M}"            # largest file a process may write
GRADE_CPU="${COURSE_GRADE_CPU:-600}"                         # CPU seconds per process
GRADE_UID=65534                                              # nobody:nogroup, when run as root

# Which isolation works here: "bwrap" (bubblewrap: own namespaces, a view
# of the filesystem with the instructor's files hidden) or "limits" (limits,
# unprivileged uid and no network where possible). COURSE_GRADE_ISOLATION
# forces one.
isolation_mode() {
  local forced="${COURSE_GRADE_ISOLATION:-}"
  if [[ -n "$forced" ]]; then
    [[ "$forced" == bwrap || "$forced" == limits ]] || die "COURSE_GRADE_ISOLATION must be bwrap or limits"
    echo "$forced"
    return
  fi
  local who=()
  read -r -a who <<<"$(student_uid_prefix)"
  if command -v bwrap >/dev/null && "${who[@]}" bwrap --ro-bind / / --unshare-all --die-with-parent true 2>/dev/null; then
    echo bwrap
  else
    echo limits
  fi
}

# memory_limit_resource BASE: the resource prlimit bounds by
# COURSE_GRADE_MEMORY in the base tree BASE's backend: the address space on
# the emulator; on a GPU the CUDA driver reserves far more address space
# than it uses, so there the data segment (what the process really allocates).
memory_limit_resource() {
  if [[ "$(config_value "$1" backend 2>/dev/null)" == cuda ]]; then echo data; else echo as; fi
}

# isolation_description MODE BASE: the sandbox of MODE and its limits in
# words, for the report's header.
isolation_description() {
  local mode="$1" base="$2" who
  if [[ $(id -u) -eq 0 ]] && command -v setpriv >/dev/null; then who="uid $GRADE_UID (nobody)"; else who="uid $(id -u) (not root: the grader's own)"; fi
  local memory_kind="address space"
  [[ "$(memory_limit_resource "$base")" == data ]] && memory_kind="data"
  local limits="limits: $GRADE_MEMORY $memory_kind, $GRADE_PROCESSES processes, $GRADE_FILE_SIZE per file, ${GRADE_CPU} s CPU per process, ${GRADE_BUILD_TIMEOUT} s per build"
  if [[ "$mode" == bwrap ]]; then
    echo "bubblewrap $(bwrap --version 2>/dev/null | awk '{ print $2 }') sandbox (no network, repo read-only, solutions and other submissions hidden, private /tmp), $who, $limits"
  else
    local net="no network" grade="" prefix
    prefix=$(sandbox_unshare_prefix) || net="NETWORK NOT CUT (unshare failed)"
    # The verdicts are safe from the tests only where these run as another
    # uid, each in a PID namespace of its own (docs/instructor-guide.md).
    [[ $(id -u) -eq 0 && "$prefix" == *--pid* ]] ||
      grade="; GRADES NOT PROTECTED: the tests run as the grader's own uid, without PID namespaces"
    echo "no sandbox (bubblewrap missing or not working): $net, $who, $limits; the submission can read what $who can read$grade"
  fi
}

# The unshare(1) prefix that cuts the network in "limits" mode, if any works.
sandbox_unshare_prefix() {
  # --mount-proc: a PID namespace needs its own /proc, or the CUDA driver
  # finds the wrong process there and refuses to start (cudaErrorOperatingSystem).
  if [[ $(id -u) -eq 0 ]] && unshare --net --pid --fork --kill-child --mount-proc true 2>/dev/null; then
    echo "unshare --net --pid --fork --kill-child --mount-proc"
  elif unshare --user --map-root-user --net true 2>/dev/null; then
    echo "unshare --user --map-root-user --net"
  else
    return 1
  fi
}

# The folders of the tools a student's build runs (cmake, ctest, the C++
# compiler, nvcc where present), one a line, for the sandbox's PATH: they
# need not be in /usr/bin (the GPU machines have cmake and nvcc elsewhere).
sandbox_tool_dirs() {
  local tool path
  for tool in cmake ctest c++ g++ nvcc; do
    path=$(command -v "$tool" 2>/dev/null) || continue
    dirname "$(readlink -f "$path")"
    dirname "$path"
  done | awk '!seen[$0]++'
}

# The prefix that runs a command as the unprivileged student uid when we are root.
student_uid_prefix() {
  if [[ $(id -u) -eq 0 ]] && command -v setpriv >/dev/null; then
    echo "setpriv --reuid=$GRADE_UID --regid=$GRADE_UID --clear-groups --"
  fi
}

# sandbox_command MODE WORK BASE HIDE WORK_ACCESS [NAME=VALUE...]: sets
# SANDBOX to the command prefix that runs a program with the limits, as the
# student uid, in the sandbox of MODE, in WORK (the only folder it may write
# when WORK_ACCESS is "rw"; read-only with "ro"). BASE (the base tree) is
# read-only; HIDE lists (one a line) folders the student's code must not
# see. The environment is cleared but for PATH, the course's variables and
# the NAME=VALUE pairs. Limits mode cannot change folder: its caller does.
sandbox_command() {
  local mode="$1" work="$2" base="$3" hide="$4" access="$5"
  shift 5
  local who=() limits=(prlimit "--$(memory_limit_resource "$base")=$(numfmt --from=iec "$GRADE_MEMORY")"
                       --nproc="$GRADE_PROCESSES" --fsize="$(numfmt --from=iec "$GRADE_FILE_SIZE")" --cpu="$GRADE_CPU"
                       --core=0 --)
  read -r -a who <<<"$(student_uid_prefix)"
  local tool_dirs
  tool_dirs=$(sandbox_tool_dirs)
  local envs=(PATH="$(paste -sd: <<<"$tool_dirs"):/usr/local/bin:/usr/bin:/bin" HOME="$work" LANG=C.UTF-8
              COURSE_SANDBOXED=1 "$@")
  local v
  for v in COURSE_SEED COURSE_EMU_SCHEDULE COURSE_EMU_TIMEOUT COURSE_JOBS CUDA_VISIBLE_DEVICES CMAKE_PREFIX_PATH; do
    [[ -n "${!v:-}" ]] && envs+=("$v=${!v}")
  done
  if [[ "$mode" == bwrap ]]; then
    local args=(--die-with-parent --new-session --unshare-all --clearenv)
    for v in "${envs[@]}"; do args+=(--setenv "${v%%=*}" "${v#*=}"); done
    local d
    for d in /usr /etc /opt; do [[ -d "$d" ]] && args+=(--ro-bind "$d" "$d"); done
    for d in /bin /sbin /lib /lib32 /lib64 /libx32; do
      if [[ -L "$d" ]]; then args+=(--symlink "$(readlink "$d")" "$d"); elif [[ -d "$d" ]]; then args+=(--ro-bind "$d" "$d"); fi
    done
    args+=(--proc /proc --dev /dev --tmpfs /tmp)
    for d in /dev/nvidia*; do [[ -e "$d" ]] && args+=(--dev-bind "$d" "$d"); done
    args+=(--ro-bind "$ROOT" "$ROOT")
    # Tools and packages installed outside /usr and /opt (cmake or nvcc in a
    # home folder, a CMAKE_PREFIX_PATH entry under /tmp): visible, read-only.
    local extra
    while IFS= read -r extra; do
      [[ -n "$extra" && -d "$extra" ]] && args+=(--ro-bind "$extra" "$extra")
    done < <(printf '%s\n' "$tool_dirs" ${CMAKE_PREFIX_PATH:+${CMAKE_PREFIX_PATH//:/ }} | grep -vE '^/(usr|opt|etc)(/|$)' | sort -u)
    local h
    while IFS= read -r h; do
      # Never the repository or a folder holding it: those stay visible, read-only.
      [[ -n "$h" && -d "$h" && "$ROOT/" != "$h/"* ]] && args+=(--tmpfs "$h")
    done <<<"$hide"
    local bind=--bind
    [[ "$access" == ro ]] && bind=--ro-bind
    args+=(--ro-bind "$base" "$base" "$bind" "$work" "$work" --chdir "$work")
    SANDBOX=("${who[@]}" "${limits[@]}" bwrap "${args[@]}" --)
  else
    local cut=() init=()
    read -r -a cut <<<"$(sandbox_unshare_prefix || true)"
    # In a PID namespace of its own the program would be its init (PID 1),
    # to which the kernel delivers no signal it has no handler for, not even
    # one it sends itself: abort()'s SIGABRT is dropped, and glibc's last
    # resort (hlt) ends the process with SIGSEGV instead. A shell (root's,
    # out of the student's reach) is the init; the program runs as PID 2 and
    # the shell ends as it did: its status, or 128 + the signal that killed
    # it, which the runner reads as it reads bubblewrap's.
    [[ " ${cut[*]} " == *" --pid "* ]] && init=(/bin/sh -c '"$@"; exit $?' course-sandbox-init)
    SANDBOX=("${cut[@]}" env -i "${envs[@]}" "${init[@]}" "${who[@]}" "${limits[@]}")
  fi
}

# sandboxed MODE WORK BASE HIDE SECONDS -- COMMAND...: runs COMMAND in the
# sandbox (sandbox_command, WORK writable), killed after SECONDS.
sandboxed() {
  local mode="$1" work="$2" base="$3" hide="$4" seconds="$5"
  shift 6
  sandbox_command "$mode" "$work" "$base" "$hide" rw
  (cd "$work" && timeout --foreground -s KILL "$seconds" "${SANDBOX[@]}" "$@")
}
