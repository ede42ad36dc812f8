/// @file translate.hpp
/// @brief Rewrites a CUDA source file into C++ that the host compiler accepts.
///
/// The emulator compiles students' .cu files with the host g++. Almost all of
/// CUDA's syntax is handled there by macros and headers; two constructs cannot
/// be parsed by a C++ compiler, and a third needs the runtime's help, so this
/// translator rewrites just those:
///
///  - Kernel launches. `EXPR<<<CFG>>>(ARGS)` becomes
///      ::course_emu::launch_site(__FILE__, __LINE__, "EXPR",
///          [&](auto&&... course_emu_args) { EXPR(...forwarded...); })
///        .config(CFG)(ARGS)
///    (on one line), where EXPR is a kernel name, optionally qualified with
///    `::` and optionally followed by one template argument list.
///  - Dynamic shared memory. `extern __shared__ TYPE NAME[];` becomes
///      TYPE* const NAME = ::course_emu::dynamic_shared<TYPE>();
///    with `__align__(...)`/`alignas(...)` dropped from TYPE.
///  - Static shared memory. `__shared__` is `static thread_local`, and the
///    runtime must know each variable to poison it at the start of every block
///    and to enforce the 48 KiB static limit. So after the `;` of each
///    declaration statement at function scope with `__shared__` among its
///    specifiers (anywhere: `static __shared__ float x[4];`,
///    `float __shared__ y[8];`, `__shared__ __align__(16) float4 v[32];`) and
///    one or more declarators `NAME[DIMS]...` (`*NAME` after a comma), the
///    translator appends, on the same line and once per NAME,
///      ` ::course_emu::shared_declared(&NAME, sizeof(NAME));`
///    Commas inside `<>`, `()` and `[]` do not separate declarators.
///    Each declarator with array dimensions, `NAME[DIMS]`, also becomes a
///    reference to memory that ends at a guard page (course_emu/static_shared.hpp):
///      `(&NAME)[DIMS] = ::course_emu::static_shared("NAME", __FILE__, __LINE__)`
///    unless the declaration has an alignment or attribute specifier.
///    Function scope is a function or lambda body and every brace nested in
///    it; the bodies of namespaces, classes, structs, unions and enums (also
///    local classes) and `extern "C" {` are not. A `{` opens a function body
///    when it follows a parameter list's `)` (possibly followed by `const`,
///    `noexcept(...)`, `mutable`, `__attribute__((...))`, `-> TYPE`, a
///    requires-clause, ...), a constructor's member initializer list, or a
///    lambda introducer `[...]`.
///
///  - `__constant__` variables. In a declaration `SPECIFIERS TYPE NAME[DIMS]...
///    [= INIT];` with `__constant__` among the specifiers and one declarator
///    (not `extern`), NAME becomes `course_emu_constant_NAME` (the storage,
///    which cudaMemcpyToSymbol fills) and after the `;` come
///      ` static_assert(sizeof(course_emu_constant_NAME) <= 65536, "...");`
///      ` [[maybe_unused]] static const auto& NAME = course_emu_constant_NAME;`
///    so that device code sees a const view: writing constant memory is a
///    compile error at the line of the write, as with nvcc.
///
/// Everything else is copied byte for byte, and every line keeps its number:
/// the output starts with `#include <cuda_runtime.h>` and `#line 1 "PATH"`, and
/// newlines inside a rewritten construct are emitted again right after the
/// replacement text, so the compiler reports errors at the original .cu line.
///
/// Comments, string and character literals (raw strings included) are never
/// rewritten, and neither are `<<`, `<<=`, `>>` or `operator<<<T>`. Preprocessor directives are copied as they are, except that the
/// body of a `#define` is translated like code (so a macro may launch kernels).
///
/// Known limitations, chosen to keep the translator a small lexer rather than
/// a C++ parser:
///  - The kernel expression must be a (qualified) name with at most one
///    template argument list. Member access (`obj.k<<<`), the `template`
///    disambiguator, parenthesized expressions and array elements are rejected
///    with an error; use a plain kernel name or a function pointer variable.
///  - The launch configuration ends at the first `>>>` outside parentheses,
///    brackets and braces, so a template argument list that closes with `>>>`
///    inside the configuration (`S<T<int>>>`) must be written `S<T<int> > >`.
///  - `extern __shared__` declarations are recognised only in the form
///    `extern SPECIFIERS TYPE NAME[];` with one declarator, where SPECIFIERS
///    (in any order, mixed into TYPE) are `__shared__` and alignment specifiers.
///    Other forms are left alone for the `__shared__` macro to handle.
///  - A construct interrupted by a preprocessor directive (for example an
///    `#ifdef` between the kernel name and `<<<`) is rejected (launch) or left
///    alone (shared). Directives inside the launch configuration are fine:
///    the configuration is copied verbatim.
///  - Static `__shared__` declarations are left alone, unregistered, when they
///    have an initializer (`= ...` or `{...}`, not valid CUDA anyway), a
///    declarator other than a name with non-empty array bounds (function
///    pointers, `(*p)[4]`, `a[]`, an unnamed `struct {...}`), a statement
///    keyword before them (`if (c) __shared__ int a;`, `else`, `do`,
///    `typedef`, `extern`), or a preprocessor directive among the specifiers
///    or names (one inside brackets, in an array bound, is fine). A
///    declaration produced by a macro (`#define` bodies are not touched) is
///    not registered either.
///  - Scopes are found by matching braces in the code outside directives, so
///    braces that only balance per `#if` branch (two function heads in
///    `#if`/`#else` sharing one body) or that come from macros can put a
///    later declaration in the wrong scope; so can class heads hidden behind
///    macros (`struct MY_ATTR S {` is read as an initializer, which matters
///    only at function scope, for a local class).
///  - Line splices (backslash-newline) inside a token are not undone.
#pragma once

#include <cstddef>
#include <stdexcept>
#include <string>
#include <string_view>

namespace course_emu {

/// Thrown for input the translator cannot handle. what() is
/// "PATH:LINE: REASON"; the parts are also available separately so that a
/// driver can format the message as a compiler diagnostic.
class translation_error : public std::runtime_error {
public:
    translation_error(std::string_view path, std::size_t line, std::string_view reason);

    const std::string& path() const noexcept { return path_; }
    std::size_t line() const noexcept { return line_; }
    const std::string& reason() const noexcept { return reason_; }

private:
    std::string path_;
    std::size_t line_;
    std::string reason_;
};

/// Translates the CUDA source text `source`. `original_path` is the path the
/// compiler should report (it goes into the `#line` directive and into error
/// messages). Throws translation_error on malformed input, such as a `<<<`
/// without a matching `>>>`.
std::string translate_cuda_source(std::string_view source, std::string_view original_path);

}  // namespace course_emu
