#!/usr/bin/env bash
# The driver's package handling on each platform, without that platform:
# `./course doctor`, `./course grade` and `./course check --arch aarch64`
# run under a fake macOS (COURSE_UNAME=Darwin), a fake Fedora, Rocky Linux,
# Debian and Ubuntu (COURSE_OS_RELEASE, an os-release file) and an unknown
# distribution, with packages made to look missing
# (COURSE_TEST_MISSING_PACKAGES). Checks that each prints its platform's
# install command (apt-get, dnf, brew) and that nothing but Debian's path
# ever runs a package manager: fake apt-get, dpkg, dnf and brew come first on
# PATH and log every call.
#
#   tests/platforms/check_platforms.sh    (a CTest test of ./course check)
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
SCRATCH="$(mktemp -d)"
trap 'rm -rf "$SCRATCH"' EXIT
CALLS="$SCRATCH/package-manager-calls.log"
failures=0

# Package managers that only log their calls; apt-get fails an install, so
# that ensure_packages stops right after it instead of building the course.
mkdir -p "$SCRATCH/bin"
for tool in apt-get dpkg dnf brew; do
  cat >"$SCRATCH/bin/$tool" <<EOF
#!/usr/bin/env bash
echo "$tool \$*" >>"$CALLS"
case "$tool \${1:-}" in
  "apt-get install") exit 100 ;;
  "dpkg --print-architecture") echo amd64 ;;
esac
exit 0
EOF
  chmod +x "$SCRATCH/bin/$tool"
done

write_release() {  # NAME ID [ID_LIKE]
  {
    echo "NAME=\"$1\""
    echo "ID=$2"
    [[ -z "${3:-}" ]] || echo "ID_LIKE=\"$3\""
  } >"$SCRATCH/$2.os-release"
}
write_release "Fedora Linux" fedora
write_release "Rocky Linux" rocky "rhel centos fedora"
write_release "Debian GNU/Linux" debian
write_release "Ubuntu" ubuntu debian
write_release "Alpine Linux" alpine

fail() {
  echo "FAIL: $*"
  failures=$((failures + 1))
}

# ok WHAT: says WHAT passed, unless something failed since the last ok.
reported=0
ok() {
  ((failures > reported)) || echo "ok: $*"
  reported=$failures
}

# run_course OUT_FILE PLATFORM_ENV... -- COURSE_ARGS...: runs ./course with
# the fake package managers first on PATH; sets RC.
run_course() {
  local out="$1"
  shift
  local envs=()
  while [[ "$1" != -- ]]; do envs+=("$1"); shift; done
  shift
  : >"$CALLS"
  RC=0
  env PATH="$SCRATCH/bin:$PATH" COURSE_BUILD_DIR="$SCRATCH/build" "${envs[@]}" "$ROOT/course" "$@" >"$out" 2>&1 || RC=$?
}

expect_output() {  # FILE WHAT TEXT
  grep -qF -- "$3" "$1" || { fail "$2: no line with '$3' in:"; sed 's/^/    /' "$1"; }
}

expect_no_package_manager() {  # WHAT
  if [[ -s "$CALLS" ]]; then
    fail "$1 ran a package manager:"
    sed 's/^/    /' "$CALLS"
  fi
}

# `./course doctor` and `./course grade` on each platform, some packages missing.
missing="g++ catch2 libboost-context-dev libthrust-dev doxygen"
check_platform() {  # NAME INSTALL_LINE NOTE ENV...
  local name="$1" install="$2" note="$3"
  shift 3
  run_course "$SCRATCH/doctor.out" "$@" COURSE_TEST_MISSING_PACKAGES="$missing" -- doctor
  [[ $RC -eq 0 ]] || fail "$name: doctor exited $RC"
  expect_output "$SCRATCH/doctor.out" "$name doctor" "$install"
  [[ -z "$note" ]] || expect_output "$SCRATCH/doctor.out" "$name doctor" "$note"
  expect_no_package_manager "$name: doctor"

  run_course "$SCRATCH/grade.out" "$@" COURSE_TEST_MISSING_PACKAGES="$missing" -- grade 01
  [[ $RC -eq 2 ]] || fail "$name: grade exited $RC, not 2 (stopped for missing packages)"
  expect_output "$SCRATCH/grade.out" "$name grade" "missing packages: g++ catch2 libboost-context-dev libthrust-dev"
  expect_output "$SCRATCH/grade.out" "$name grade" "$install"
  expect_no_package_manager "$name: grade"
  ok "$name: doctor and grade print '$install' and run no package manager"
}

check_platform "macOS" "brew install catch2 boost" "xcode-select --install" COURSE_UNAME=Darwin
check_platform "Fedora" "sudo dnf install -y gcc-c++ catch2-devel boost-devel" "has no package on Fedora" \
  COURSE_UNAME=Linux COURSE_OS_RELEASE="$SCRATCH/fedora.os-release"
check_platform "Rocky Linux" "sudo dnf install -y gcc-c++ catch2-devel boost-devel" "" \
  COURSE_UNAME=Linux COURSE_OS_RELEASE="$SCRATCH/rocky.os-release"
check_platform "an unknown distribution" "install these (Debian's names; your distribution's may differ): g++ catch2" "" \
  COURSE_UNAME=Linux COURSE_OS_RELEASE="$SCRATCH/alpine.os-release"

# Debian and Ubuntu: doctor prints apt-get's command and installs nothing.
for id in debian ubuntu; do
  run_course "$SCRATCH/doctor.out" COURSE_UNAME=Linux COURSE_OS_RELEASE="$SCRATCH/$id.os-release" \
    COURSE_TEST_MISSING_PACKAGES="$missing" -- doctor
  expect_output "$SCRATCH/doctor.out" "$id doctor" \
    "sudo apt-get install -y g++ catch2 libboost-context-dev libthrust-dev"
  expect_output "$SCRATCH/doctor.out" "$id doctor" "sudo apt-get install -y doxygen"
  expect_no_package_manager "$id: doctor"
  ok "$id: doctor prints apt-get's command and runs no package manager"
done

# Debian, grade: as root it installs with apt-get (here the fake, which
# fails the install); otherwise it stops with apt-get's command.
run_course "$SCRATCH/grade.out" COURSE_UNAME=Linux COURSE_OS_RELEASE="$SCRATCH/debian.os-release" \
  COURSE_TEST_MISSING_PACKAGES="catch2" -- grade 01
[[ $RC -eq 2 ]] || fail "debian: grade exited $RC, not 2"
if [[ $(id -u) -eq 0 ]]; then
  grep -qx "apt-get install -y -qq --no-install-recommends catch2" "$CALLS" ||
    { fail "debian as root: grade did not run apt-get install for catch2:"; sed 's/^/    /' "$CALLS"; }
  ok "debian, root: grade installs the missing package with apt-get"
else
  expect_output "$SCRATCH/grade.out" "debian grade" "sudo apt-get install -y catch2"
  expect_no_package_manager "debian, not root: grade"
  ok "debian, not root: grade prints apt-get's command and installs nothing"
fi

# The aarch64 check: Debian's cross toolchain, so elsewhere it stops at
# once, and it prints the arm64 architecture step with its packages.
for platform in "macOS:COURSE_UNAME=Darwin" "Fedora:COURSE_OS_RELEASE=$SCRATCH/fedora.os-release"; do
  run_course "$SCRATCH/check.out" COURSE_UNAME=Linux "${platform#*:}" -- check --arch aarch64
  [[ $RC -eq 2 ]] || fail "${platform%%:*}: check --arch aarch64 exited $RC, not 2"
  expect_output "$SCRATCH/check.out" "${platform%%:*} check --arch" "runs on Debian or Ubuntu"
  expect_no_package_manager "${platform%%:*}: check --arch aarch64"
done
run_course "$SCRATCH/check.out" -- check --arch riscv64
[[ $RC -eq 2 ]] || fail "check --arch riscv64 exited $RC, not 2"
expect_output "$SCRATCH/check.out" "check --arch riscv64" "the architecture is aarch64"
ok "check --arch aarch64 refuses other platforms and architectures without running a package manager"
if [[ $(uname -m) == x86_64 && $(id -u) -ne 0 ]]; then
  run_course "$SCRATCH/check.out" COURSE_UNAME=Linux COURSE_OS_RELEASE="$SCRATCH/debian.os-release" \
    COURSE_TEST_MISSING_PACKAGES="libboost-context-dev:arm64" -- check --arch aarch64
  expect_output "$SCRATCH/check.out" "debian check --arch" \
    "sudo dpkg --add-architecture arm64 && sudo apt-get update && sudo apt-get install -y libboost-context-dev:arm64"
  ok "debian, not root: check --arch aarch64 prints the arm64 install command"
fi

if ((failures > 0)); then
  echo "$failures check(s) failed"
  exit 1
fi
echo "all platform checks passed"
