/// @file translate_test.cpp
/// @brief Tests of the CUDA source translator (text in, text out).
#include "translate.hpp"

#include <course/catch.hpp>

#include <algorithm>
#include <string>
#include <string_view>

namespace {

constexpr std::string_view kHeader = "#include <cuda_runtime.h>\n#line 1 \"k.cu\"\n";

std::string translate(std::string_view source) {
    return course_emu::translate_cuda_source(source, "k.cu");
}

/// The translation without its two header lines.
std::string body(std::string_view source) {
    const std::string out = translate(source);
    REQUIRE(out.substr(0, kHeader.size()) == kHeader);
    return out.substr(kHeader.size());
}

/// What a launch of `expr` turns into, up to and including `.config(`.
std::string site(const std::string& expr) {
    return "::course_emu::launch_site(__FILE__, __LINE__, \"" + expr +
           "\", [&](auto&&... course_emu_args) { " + expr +
           "(static_cast<decltype(course_emu_args)&&>(course_emu_args)...); }).config(";
}

std::size_t newlines(std::string_view text) {
    return static_cast<std::size_t>(std::count(text.begin(), text.end(), '\n'));
}

/// What is appended after the `;` of a static shared declaration, per name.
std::string reg(const std::string& name) {
    return " ::course_emu::shared_declared(&" + name + ", sizeof(" + name + "));";
}

/// The array declarator `NAME[DIMS]` of a static shared declaration as the
/// translator rewrites it, up to its `,` or `;`: a reference bound to guarded memory.
std::string guarded(const std::string& name, const std::string& dims) {
    return "(&" + name + ")" + dims + " = ::course_emu::static_shared(\"" + name + "\", __FILE__, __LINE__)";
}

/// `statement` inside a kernel body, as source and as expected translation
/// when `names` are registered.
std::string in_kernel(const std::string& statement) {
    return "__global__ void k(float* p) {\n    " + statement + "\n    p[0] = 1;\n}\n";
}

}  // namespace

TEST_CASE("The output starts with the runtime include and a #line naming the original file",
          "[emu][translator]") {
    CHECK(course_emu::translate_cuda_source("int x;\n", "lessons/01/saxpy.cu") ==
          "#include <cuda_runtime.h>\n#line 1 \"lessons/01/saxpy.cu\"\nint x;\n");
    SECTION("backslashes and double quotes in the path are escaped") {
        CHECK(course_emu::translate_cuda_source("", R"(C:\a "b"\k.cu)") ==
              "#include <cuda_runtime.h>\n#line 1 \"C:\\\\a \\\"b\\\"\\\\k.cu\"\n");
    }
}

TEST_CASE("Each rule produces exactly the documented text", "[emu][translator]") {
    SECTION("launch") {
        CHECK(body("saxpy<<<blocks, 256>>>(n, a, x, y);\n") ==
              "::course_emu::launch_site(__FILE__, __LINE__, \"saxpy\", "
              "[&](auto&&... course_emu_args) { "
              "saxpy(static_cast<decltype(course_emu_args)&&>(course_emu_args)...); })"
              ".config(blocks, 256)(n, a, x, y);\n");
    }
    SECTION("shared") {
        CHECK(body("extern __shared__ float tile[];\n") ==
              "float* const tile = ::course_emu::dynamic_shared<float>();\n");
    }
    SECTION("static shared registration") {
        CHECK(body("__global__ void k() {\n    __shared__ int s[32];\n}\n") ==
              "__global__ void k() {\n"
              "    __shared__ int (&s)[32] = ::course_emu::static_shared(\"s\", __FILE__, __LINE__);"
              " ::course_emu::shared_declared(&s, sizeof(s));\n}\n");
    }
    SECTION("untouched text") {
        const std::string plain = "__global__ void k(int* p) {\n    p[threadIdx.x] = 0;\n}\n";
        CHECK(body(plain) == plain);
    }
}

TEST_CASE("A simple launch becomes a launch_site call followed by the untouched arguments",
          "[emu][translator]") {
    CHECK(body("k<<<1, 1>>>();") == site("k") + "1, 1)();");
    CHECK(body("  k <<<g, b>>> ( x );") == "  " + site("k") + "g, b) ( x );");
}

TEST_CASE("Launches with two, three and four configuration arguments keep them verbatim",
          "[emu][translator]") {
    CHECK(body("k<<<grid, block>>>(p);") == site("k") + "grid, block)(p);");
    CHECK(body("k<<<grid, block, bytes>>>(p);") == site("k") + "grid, block, bytes)(p);");
    CHECK(body("k<<<grid, block, bytes, stream>>>(p);") ==
          site("k") + "grid, block, bytes, stream)(p);");
}

TEST_CASE("Template kernels keep their template arguments, nested ones included",
          "[emu][translator]") {
    CHECK(body("reduce<float, 256><<<g, b>>>(x);") == site("reduce<float, 256>") + "g, b)(x);");
    CHECK(body("k<std::pair<int,int>, (N>2)><<<g, b>>>(x);") ==
          site("k<std::pair<int,int>, (N>2)>") + "g, b)(x);");
    CHECK(body("k<std::vector<std::pair<int, int>>><<<g, b>>>(x);") ==
          site("k<std::vector<std::pair<int, int>>>") + "g, b)(x);");
    SECTION("whitespace inside the kernel expression collapses to single spaces") {
        CHECK(body("reduce<  float,\t256 >  <<<g, b>>>(x);") ==
              site("reduce< float, 256 >") + "g, b)(x);");
    }
    SECTION("a char literal template argument is escaped in the name string") {
        CHECK(body(R"(k<'\\'><<<g, b>>>(x);)") ==
              "::course_emu::launch_site(__FILE__, __LINE__, \"k<'\\\\\\\\'>\", "
              "[&](auto&&... course_emu_args) { "
              "k<'\\\\'>(static_cast<decltype(course_emu_args)&&>(course_emu_args)...); })"
              ".config(g, b)(x);");
    }
}

TEST_CASE("Qualified kernel names are translated whole", "[emu][translator]") {
    CHECK(body("ns::k<<<g, b>>>(x);") == site("ns::k") + "g, b)(x);");
    CHECK(body("::k<<<g, b>>>(x);") == site("::k") + "g, b)(x);");
    CHECK(body("a::b::k<int><<<g, b>>>(x);") == site("a::b::k<int>") + "g, b)(x);");
    CHECK(body("x = y ? 1 : ::k<<<g, b>>>(x);") == "x = y ? 1 : " + site("::k") + "g, b)(x);");
    CHECK(body("if (n > 0) return k<<<g, b>>>(x);") ==
          "if (n > 0) return " + site("k") + "g, b)(x);");
}

TEST_CASE("The configuration ends at the first >>> outside parentheses", "[emu][translator]") {
    CHECK(body("k<<<dim3((n + 255) / 256), f(x, y)>>>(p);") ==
          site("k") + "dim3((n + 255) / 256), f(x, y))(p);");
    CHECK(body("k<<<n >> 1, sizeof(T) * 32>>>(p);") == site("k") + "n >> 1, sizeof(T) * 32)(p);");
    CHECK(body("k<<<std::min<int>(a, b), dim3{x, y}, s[i]>>>(p);") ==
          site("k") + "std::min<int>(a, b), dim3{x, y}, s[i])(p);");
    CHECK(body("k<<<g, b, 0, streams[i >> 1]>>>(p);") == site("k") + "g, b, 0, streams[i >> 1])(p);");
    SECTION("comments and literals inside the configuration are skipped") {
        CHECK(body("k<<<g /* >>> */, f(\">>>\", '>')>>>(p);") ==
              site("k") + "g /* >>> */, f(\">>>\", '>'))(p);");
    }
}

TEST_CASE("Multi-line launches keep every line on its original number", "[emu][translator]") {
    SECTION("configuration and arguments over several lines") {
        const std::string source =
            "void f() {\n"
            "    k<<<dim3(n,\n"
            "             m),\n"
            "        256>>>(a,\n"
            "               b);\n"
            "}\n";
        const std::string out = body(source);
        CHECK(newlines(out) == newlines(source));
        CHECK(out ==
              "void f() {\n"
              "    " + site("k") + "dim3(n,\n"
              "             m),\n"
              "        256)(a,\n"
              "               b);\n"
              "}\n");
    }
    SECTION("a kernel expression spread over lines emits its newlines after the call") {
        const std::string source = "k<\n  int>\n  <<<g, b>>>(x);\nnext;\n";
        const std::string out = body(source);
        CHECK(newlines(out) == newlines(source));
        CHECK(out == site("k< int>") + "\n\ng, b)(x);\nnext;\n");
    }
    SECTION("a comment between the kernel name and <<< is dropped, its newline kept") {
        CHECK(body("k // the kernel\n<<<g, b>>>(x);\n") == site("k") + "\ng, b)(x);\n");
    }
}

TEST_CASE("Launch syntax in comments and literals is left alone", "[emu][translator]") {
    const std::string untouched = GENERATE(as<std::string>{},
        "// k<<<1, 1>>>(x);\n",
        "/* k<<<1, 1>>>(x);\n   extern __shared__ float s[]; */\n",
        "const char* s = \"k<<<1, 1>>>(x);\";\n",
        "const char* s = \"say \\\"k<<<1, 1>>>\\\" \";\n",
        "char c = '<'; char d = '\\''; char e = '\"';\n",
        "auto r = R\"(k<<<1, 1>>>(x); \" )\";\n",
        "auto r = R\"cu(k<<<1, 1>>>(x); )\" )cu\";\n",
        "auto r = u8R\"(extern __shared__ float s[];)\";\n",
        "// a line comment \\\n continued: k<<<1, 1>>>(x);\n",
        "int n = 1'000'000; float f = 1e-5f;\n");
    CHECK(body(untouched) == untouched);

    SECTION("code after a literal holding quotes and launch syntax is still translated") {
        CHECK(body("f(\"<<<\\\"\", '\\''); k<<<g, b>>>(x);") ==
              "f(\"<<<\\\"\", '\\''); " + site("k") + "g, b)(x);");
        CHECK(body("int n = 1'000; k<<<n, 256>>>(x);") ==
              "int n = 1'000; " + site("k") + "n, 256)(x);");
    }
}

TEST_CASE("Two launches on one line are both translated", "[emu][translator]") {
    CHECK(body("a<<<1, 2>>>(x); b<<<3, 4>>>(y);\n") ==
          site("a") + "1, 2)(x); " + site("b") + "3, 4)(y);\n");
}

TEST_CASE("Shift operators and operator<<< are not launches", "[emu][translator]") {
    const std::string untouched = GENERATE(as<std::string>{},
        "std::cout << x << std::endl;\n",
        "x <<= 2; y >>= 3; z = a >> b;\n",
        "std::vector<std::vector<std::vector<int>>> v;\n",
        "template <> std::ostream& operator<<<int>(std::ostream&, const P<int>&);\n");
    CHECK(body(untouched) == untouched);
}

TEST_CASE("extern __shared__ arrays become pointers to dynamic shared memory",
          "[emu][translator]") {
    CHECK(body("extern __shared__ unsigned int s[];") ==
          "unsigned int* const s = ::course_emu::dynamic_shared<unsigned int>();");
    CHECK(body("extern __shared__ float2 s[];") ==
          "float2* const s = ::course_emu::dynamic_shared<float2>();");
    CHECK(body("extern __shared__ T s[];") == "T* const s = ::course_emu::dynamic_shared<T>();");
    CHECK(body("extern __shared__ std::pair<int, int> s[];") ==
          "std::pair<int, int>* const s = ::course_emu::dynamic_shared<std::pair<int, int>>();");
    CHECK(body("extern volatile __shared__ float s[];") ==
          "volatile float* const s = ::course_emu::dynamic_shared<volatile float>();");
    SECTION("alignment specifiers before or after __shared__ are dropped") {
        const std::string source = GENERATE(as<std::string>{},
            "extern __shared__ __align__(16) unsigned char smem[];",
            "extern __align__(16) __shared__ unsigned char smem[];",
            "extern __shared__ alignas(sizeof(float4)) unsigned char smem[];");
        CHECK(body(source) ==
              "unsigned char* const smem = ::course_emu::dynamic_shared<unsigned char>();");
    }
    SECTION("newlines inside the declaration follow the replacement") {
        const std::string source = "  extern __shared__\n    float\n    s [ ] ;\nnext;\n";
        const std::string out = body(source);
        CHECK(newlines(out) == newlines(source));
        CHECK(out == "  float* const s = ::course_emu::dynamic_shared<float>();\n\n\nnext;\n");
    }
    SECTION("inside a kernel body") {
        CHECK(body("__global__ void k() {\n  extern __shared__ int s[];\n  s[0] = 1;\n}\n") ==
              "__global__ void k() {\n  int* const s = ::course_emu::dynamic_shared<int>();\n"
              "  s[0] = 1;\n}\n");
    }
}

TEST_CASE("Other declarations with extern or __shared__ are left alone", "[emu][translator]") {
    const std::string untouched = GENERATE(as<std::string>{},
        "__shared__ float tile[32][32];\n",
        "static __shared__ int count;\n",
        "extern __shared__ float fixed[256];\n",
        "extern __shared__ int a[], b[];\n",
        "extern int global_array[];\n",
        "extern \"C\" { void f(); }\n",
        "extern const int n = 3;\n");
    CHECK(body(untouched) == untouched);
}

TEST_CASE("Malformed launches are errors naming the file and the line of the <<<",
          "[emu][translator]") {
    SECTION("no >>> at all") {
        CHECK_THROWS_WITH(translate("int x;\n\n  k<<<g, b(x);\n"),
                          "k.cu:3: '<<<' without matching '>>>'");
    }
    SECTION("the statement ends before any >>>") {
        CHECK_THROWS_WITH(translate("k<<<g, b;\nother<<<1, 1>>>(y);\n"),
                          "k.cu:1: '<<<' without matching '>>>'");
    }
    SECTION("an enclosing parenthesis closes first") {
        CHECK_THROWS_WITH(translate("\nf(k<<<g, b);\n"), "k.cu:2: '<<<' without matching '>>>'");
    }
    SECTION("nothing usable before <<<") {
        CHECK_THROWS_WITH(translate("<<<g, b>>>(x);"), "k.cu:1: expected a kernel name before '<<<'");
        CHECK_THROWS_WITH(translate("kernels[0]<<<g, b>>>(x);"),
                          "k.cu:1: expected a kernel name before '<<<'");
    }
    SECTION("member access and the template disambiguator") {
        const std::string source = GENERATE(as<std::string>{}, "obj.k<<<g, b>>>(x);",
                                            "p->k<<<g, b>>>(x);",
                                            "ns::template k<int><<<g, b>>>(x);");
        CHECK_THROWS_WITH(translate(source),
                          Catch::Matchers::StartsWith("k.cu:1: unsupported kernel expression"));
    }
    SECTION("the error is a std::runtime_error") {
        CHECK_THROWS_AS(translate("k<<<g"), std::runtime_error);
    }
}

TEST_CASE("Unterminated comments and raw strings are errors", "[emu][translator]") {
    CHECK_THROWS_WITH(translate("int x;\n/* never closed\n"), "k.cu:2: unterminated /* comment");
    CHECK_THROWS_WITH(translate("auto s = R\"x(never closed)\";\n"),
                      "k.cu:1: unterminated raw string literal");
}

TEST_CASE("Preprocessor directives are copied, #define bodies are translated",
          "[emu][translator]") {
    SECTION("other directives are left exactly as they are") {
        const std::string untouched = GENERATE(as<std::string>{},
            "#include <vector>\n",
            "#error don't use k<<<1, 1>>> here\nint x;\n",
            "  #  pragma k<<<\n",
            "#if A << 2 > B\n#endif\n");
        CHECK(body(untouched) == untouched);
    }
    SECTION("a launch in a macro body is translated, continuation lines included") {
        CHECK(body("#define LAUNCH(k, n) k<<<n, 1>>>()\n") ==
              "#define LAUNCH(k, n) " + site("k") + "n, 1)()\n");
        const std::string source = "#define LAUNCH(n) \\\n  k \\\n<<<n, \\\n  1>>>()\nx;\n";
        const std::string out = body(source);
        CHECK(newlines(out) == newlines(source));
        CHECK(out == "#define LAUNCH(n) \\\n  " + site("k") + "\\\nn, \\\n  1)()\nx;\n");
    }
    SECTION("a directive inside a launch configuration is kept in place") {
        const std::string source = "k<<<g,\n#ifdef BIG\n 512\n#else\n 256\n#endif\n>>>(x);\n";
        CHECK(body(source) == site("k") + "g,\n#ifdef BIG\n 512\n#else\n 256\n#endif\n)(x);\n");
    }
    SECTION("a # that does not start a line is ordinary code") {
        CHECK(body("f(); # k<<<g, b>>>(x);\n") == "f(); # " + site("k") + "g, b)(x);\n");
    }
}

TEST_CASE("Static __shared__ declarations in a function register each name after their semicolon",
          "[emu][translator][shared]") {
    SECTION("every placement of __shared__ and of qualifiers") {
        // The third column: the declaration as translated, when its arrays are
        // rewritten (those with an alignment or attribute are not).
        const auto [source, name, translated] = GENERATE(table<std::string, std::string, std::string>({
            {"__shared__ float tile[32][33];", "tile", "__shared__ float " + guarded("tile", "[32][33]") + ";"},
            {"__shared__ float tile[TILE][TILE + 1];", "tile",
             "__shared__ float " + guarded("tile", "[TILE][TILE + 1]") + ";"},
            {"__shared__ int total;", "total", ""},
            {"static __shared__ float x[4];", "x", "static __shared__ float " + guarded("x", "[4]") + ";"},
            {"float __shared__ y[8];", "y", "float __shared__ " + guarded("y", "[8]") + ";"},
            {"__shared__ volatile int flag;", "flag", ""},
            {"volatile __shared__ int flag;", "flag", ""},
            {"__shared__ __align__(16) float4 v[32];", "v", ""},
            {"__shared__ alignas(16) float v[4];", "v", ""},
            {"__shared__ alignas(sizeof(float4)) unsigned char bytes[64];", "bytes", ""},
            {"__shared__ MyStruct s;", "s", ""},
            {"__shared__ unsigned int counts[256];", "counts",
             "__shared__ unsigned int " + guarded("counts", "[256]") + ";"},
            {"__shared__ typename T::value_type buf[N];", "buf",
             "__shared__ typename T::value_type " + guarded("buf", "[N]") + ";"},
            {"__shared__ std::pair<int, float> p[2];", "p", "__shared__ std::pair<int, float> " + guarded("p", "[2]") + ";"},
            {"__shared__ std::array<float, (N > 2 ? 4 : 2)> a;", "a", ""},
            {"__shared__ ::ns::Pair<T, std::pair<int, int>> nested;", "nested", ""},
            {"__shared__ decltype(x) copy;", "copy", ""},
            {"__shared__ float* pointer;", "pointer", ""},
            {"[[maybe_unused]] __shared__ int unused;", "unused", ""},
            {"__shared__ float s[sizeof(int) * 8][f(1, 2)];", "s",
             "__shared__ float " + guarded("s", "[sizeof(int) * 8][f(1, 2)]") + ";"},
        }));
        CHECK(body(in_kernel(source)) == in_kernel((translated.empty() ? source : translated) + reg(name)));
    }
    SECTION("a declaration with several declarators registers each of them") {
        CHECK(body(in_kernel("__shared__ float a[4], b, c[2][2];")) ==
              in_kernel("__shared__ float " + guarded("a", "[4]") + ", b, " + guarded("c", "[2][2]") + ";" + reg("a") +
                        reg("b") + reg("c")));
        CHECK(body(in_kernel("__shared__ std::pair<int, float> p[2], q;")) ==
              in_kernel("__shared__ std::pair<int, float> " + guarded("p", "[2]") + ", q;" + reg("p") + reg("q")));
        CHECK(body(in_kernel("__shared__ float s[M][std::max(M, N)], *t;")) ==
              in_kernel("__shared__ float " + guarded("s", "[M][std::max(M, N)]") + ", *t;" + reg("s") + reg("t")));
    }
    SECTION("two declarations on one line, and code after the ';' stays after the calls") {
        CHECK(body(in_kernel("__shared__ int a; __shared__ int b;  // done")) ==
              in_kernel("__shared__ int a;" + reg("a") + " __shared__ int b;" + reg("b") +
                        "  // done"));
        CHECK(body("void f() { __shared__ int a;k<<<1, 1>>>(); }") ==
              "void f() { __shared__ int a;" + reg("a") + site("k") + "1, 1)(); }");
    }
    SECTION("a declaration split over lines gets the calls after its ';', lines kept") {
        const std::string source =
            "__global__ void k() {\n"
            "    __shared__ float\n"
            "        tile[TILE][TILE + 1]\n"
            "        , row[TILE];  // trailing\n"
            "    __shared__\n"
            "        int n\n"
            "    ;\n"
            "    tile[0][0] = 1;\n"
            "}\n";
        const std::string out = body(source);
        CHECK(newlines(out) == newlines(source));
        CHECK(out ==
              "__global__ void k() {\n"
              "    __shared__ float\n"
              "        (&tile)[TILE][TILE + 1]\n"
              "         = ::course_emu::static_shared(\"tile\", __FILE__, __LINE__), " + guarded("row", "[TILE]") +
              ";" + reg("tile") + reg("row") + "  // trailing\n"
              "    __shared__\n"
              "        int n\n"
              "    ;" + reg("n") + "\n"
              "    tile[0][0] = 1;\n"
              "}\n");
    }
    SECTION("a directive inside an array bound is kept") {
        const std::string source = "void f() {\n  __shared__ float s[\n#if BIG\n 512\n#else\n 256\n"
                                   "#endif\n  ];\n}\n";
        CHECK(body(source) == "void f() {\n  __shared__ float (&s)[\n#if BIG\n 512\n#else\n 256\n"
                              "#endif\n  ] = ::course_emu::static_shared(\"s\", __FILE__, __LINE__);" + reg("s") +
                                  "\n}\n");
    }
}

TEST_CASE("Static __shared__ declarations are registered in every kind of function body",
          "[emu][translator][shared]") {
    SECTION("nested blocks, loops and a switch in a kernel") {
        CHECK(body("__global__ void k(int n) {\n"
                   "  for (int i = 0; i < n; ++i) {\n"
                   "    if (i > 0) { __shared__ int a; }\n"
                   "    while (n) { { __shared__ float b[2]; } }\n"
                   "  }\n"
                   "  switch (n) { case 1: __shared__ int c; break; default: { __shared__ int d; } }\n"
                   "  done: __shared__ int e;\n"
                   "}\n") ==
              "__global__ void k(int n) {\n"
              "  for (int i = 0; i < n; ++i) {\n"
              "    if (i > 0) { __shared__ int a;" + reg("a") + " }\n"
              "    while (n) { { __shared__ float " + guarded("b", "[2]") + ";" + reg("b") + " } }\n"
              "  }\n"
              "  switch (n) { case 1: __shared__ int c;" + reg("c") +
              " break; default: { __shared__ int d;" + reg("d") + " } }\n"
              "  done: __shared__ int e;" + reg("e") + "\n"
              "}\n");
    }
    SECTION("device functions with qualifiers, attributes and trailing return types") {
        const std::string head = GENERATE(as<std::string>{},
            "__device__ void f()",
            "__device__ __forceinline__ float f(float x, int (*g)(int))",
            "static __device__ inline void f() noexcept",
            "__device__ void f() noexcept(true)",
            "void f() __attribute__((noinline))",
            "__device__ auto f() -> int",
            "__device__ auto f(int x) -> decltype(x)",
            "auto f() -> std::vector<std::pair<int, int>>",
            "__global__ void __launch_bounds__(256, 2) f(float* __restrict__ p)",
            "extern \"C\" __global__ void f()",
            "X::X(int a) : a_(a), b_{a}",
            "void S::f() const &",
            "bool operator<(const S& a, const S& b)",
            "void h() try",
            "template <typename T> void f(T) requires std::is_integral_v<T>");
        CHECK(body(head + " { __shared__ int s[4]; }") == head + " { __shared__ int " + guarded("s", "[4]") + ";" +
                                                           reg("s") + " }");
    }
    SECTION("templates") {
        const std::string source =
            "template <typename T, int BLOCK, class Op = std::plus<T>>\n"
            "__global__ void reduce(const T* in, T* out) {\n"
            "    __shared__ T partial[BLOCK];\n"
            "}\n";
        CHECK(body(source) ==
              "template <typename T, int BLOCK, class Op = std::plus<T>>\n"
              "__global__ void reduce(const T* in, T* out) {\n"
              "    __shared__ T " + guarded("partial", "[BLOCK]") + ";" + reg("partial") + "\n"
              "}\n");
    }
    SECTION("member functions defined in a class, also in a local class") {
        CHECK(body("template <class T> struct W {\n"
                   "  W() : a{1} { __shared__ T w; }\n"
                   "  __device__ void operator()(int) const { __shared__ T op[2]; }\n"
                   "  int a;\n"
                   "};\n") ==
              "template <class T> struct W {\n"
              "  W() : a{1} { __shared__ T w;" + reg("w") + " }\n"
              "  __device__ void operator()(int) const { __shared__ T " + guarded("op", "[2]") + ";" + reg("op") + " }\n"
              "  int a;\n"
              "};\n");
        CHECK(body("void f() { struct L { void g() { __shared__ int x; } }; }") ==
              "void f() { struct L { void g() { __shared__ int x;" + reg("x") + " } }; }");
    }
    SECTION("lambdas, inside functions and at namespace and class scope") {
        const std::string lambda = GENERATE(as<std::string>{},
            "[] { __shared__ int s; }",
            "[&](int i) { __shared__ int s; }",
            "[=]() mutable -> int { __shared__ int s; return 0; }",
            "[] __device__ (int i) { __shared__ int s; }",
            "[]<class T>(T t) noexcept { __shared__ int s; }");
        const std::string expected = lambda.substr(0, lambda.find("__shared__ int s;") + 17) +
                                     reg("s") + lambda.substr(lambda.find("__shared__ int s;") + 17);
        CHECK(body("void f() { auto g = " + lambda + "; }") ==
              "void f() { auto g = " + expected + "; }");
        CHECK(body("void f() { run(" + lambda + ", {1, 2}); }") ==
              "void f() { run(" + expected + ", {1, 2}); }");
        CHECK(body("auto g = " + lambda + ";") == "auto g = " + expected + ";");
        CHECK(body("int v = run(1, " + lambda + ");") == "int v = run(1, " + expected + ");");
        CHECK(body("struct S { F f = " + lambda + "; };") == "struct S { F f = " + expected + "; };");
    }
    SECTION("initializer lists inside a function are still function scope") {
        CHECK(body("void f() { int a[] = {1, 2}; S s{3}; __shared__ int x; g({1}, [] { "
                   "__shared__ int y; }); }") ==
              "void f() { int a[] = {1, 2}; S s{3}; __shared__ int x;" + reg("x") +
                  " g({1}, [] { __shared__ int y;" + reg("y") + " }); }");
    }
}

TEST_CASE("__shared__ outside function scope or outside a plain declaration is left alone",
          "[emu][translator][shared]") {
    SECTION("namespace, class, union, enum and extern \"C\" scope") {
        const std::string untouched = GENERATE(as<std::string>{},
            "__shared__ float tile[32][32];\n",
            "static __shared__ int count;\n",
            "namespace n { __shared__ int a; }\n",
            "namespace a::b { __shared__ int a; }\n",
            "inline namespace v1 { __shared__ int a; }\n",
            "namespace { __shared__ int a; }\n",
            "namespace n { namespace m { __shared__ int a[4], b; } }\n",
            "struct S { static __shared__ int a; };\n",
            "class __align__(16) C final : public Base<int, 2> { __shared__ int a; };\n",
            "template <class T> struct alignas(16) S { __shared__ T a; };\n",
            "template <class T> requires C<T> struct S { __shared__ T a; };\n",
            "union U { __shared__ int a; };\n",
            "enum class E : int { A, B }; __shared__ E e;\n",
            "extern \"C\" { __shared__ int a; }\n",
            "extern \"C++\" { namespace n { __shared__ int a; } }\n",
            "int arr[2]{1, 2}; __shared__ int a;\n",
            "S s = {1, {2, 3}}; __shared__ int a;\n",
            "void f(); __shared__ int a;\n",
            "void f() {} __shared__ int a;\n",
            "struct S { void f() {} __shared__ int a; };\n",
            "void f() { struct L { __shared__ int a; }; union { int i; }; }\n",
            "void f() { enum E { A, B }; }\n");
        CHECK(body(untouched) == untouched);
    }
    SECTION("comments, strings, #define bodies and parameter lists") {
        const std::string untouched = GENERATE(as<std::string>{},
            "void f() {\n  // __shared__ int a;\n}\n",
            "void f() {\n  /* __shared__ int a;\n  __shared__ int b; */\n}\n",
            "void f() {\n  const char* s = \"__shared__ int a;\";\n}\n",
            "void f() {\n  auto s = R\"(__shared__ int a;)\";\n}\n",
            "void f() {\n  char c = '_'; // __shared__ int a;\n}\n",
            "void f() {\n#define DECLARE __shared__ int a;\n  DECLARE\n}\n",
            "#define DECLARE(T) __shared__ T a[32]; use(a);\n",
            "void f(__shared__ int* p) {}\n",
            "void f() { g(sizeof(__shared__ int)); }\n",
            "void f() { for (__shared__ int i;;) {} }\n");
        CHECK(body(untouched) == untouched);
    }
    SECTION("declarations that are not names with array bounds") {
        const std::string untouched = GENERATE(as<std::string>{},
            "__shared__ int x = 0;",
            "__shared__ int a, b = 3;",
            "__shared__ float s[4] = {};",
            "__shared__ int x{0};",
            "__shared__ int x[];",
            "__shared__ struct { int a; } anonymous;",
            "__shared__ void (*callback)(int);",
            "__shared__ int (*rows)[4];",
            "__shared__ ns::x;",
            "__shared__ volatile flag;",
            "extern __shared__ float fixed[256];",
            "extern __shared__ int a[], b[];",
            "typedef __shared__ int shared_int;",
            "if (c) __shared__ int a;",
            "if (c) ns::T __shared__ a;",
            "for (;;) __shared__ int a;",
            "do __shared__ int a; while (0);",
            "if (c) {} else __shared__ int a;");
        CHECK(body(in_kernel(untouched)) == in_kernel(untouched));
    }
    SECTION("a directive that chooses the type or the name") {
        const std::string untouched =
            "void f() {\n  __shared__\n#if A\n  int\n#else\n  float\n#endif\n  x;\n}\n";
        CHECK(body(untouched) == untouched);
    }
    SECTION("extern __shared__ is still rewritten by its own rule, next to a static one") {
        CHECK(body(in_kernel("extern __shared__ float dyn[]; __shared__ int n;")) ==
              in_kernel("float* const dyn = ::course_emu::dynamic_shared<float>(); __shared__ int n;" +
                        reg("n")));
    }
}

namespace {

/// What follows the `;` of a `__constant__` declaration of NAME.
std::string constant_view(const std::string& name) {
    return " static_assert(sizeof(course_emu_constant_" + name + ") <= 65536, \"__constant__ " + name +
           " is larger than the 64 KiB of constant memory\"); [[maybe_unused]] static const auto& " + name +
           " = course_emu_constant_" + name + ";";
}

}  // namespace

TEST_CASE("__constant__ variables get writable storage and a const view for device code, lines kept",
          "[emu][translator][constant]") {
    CHECK(body("__constant__ float c_filter[81];\n") ==
          "__constant__ float course_emu_constant_c_filter[81];" + constant_view("c_filter") + "\n");
    CHECK(body("static __constant__ int c_n;") == "static __constant__ int course_emu_constant_c_n;" +
                                                     constant_view("c_n"));
    CHECK(body("namespace {\nconstexpr int N = 4;\n__constant__ float2 c_pairs[N][2] = {{}};\n}\n") ==
          "namespace {\nconstexpr int N = 4;\n__constant__ float2 course_emu_constant_c_pairs[N][2] = {{}};" +
              constant_view("c_pairs") + "\n}\n");
    CHECK(body("__constant__ double c_scale = 2.0; int x;") ==
          "__constant__ double course_emu_constant_c_scale = 2.0;" + constant_view("c_scale") + " int x;");
    const std::string split = "__constant__ float\n    c_w[\n 9];\n";
    CHECK(newlines(body(split)) == newlines(split));
    CHECK(body(split) == "__constant__ float\n    course_emu_constant_c_w[\n 9];" + constant_view("c_w") + "\n");
    SECTION("forms left alone: extern, several declarators, no name, comments and strings") {
        for (const std::string source :
             {"extern __constant__ float c_a[4];", "__constant__ float c_a[4], c_b[4];", "__constant__ float;",
              "// __constant__ float c_a[4];", "const char* s = \"__constant__ float c_a[4];\";"}) {
            CAPTURE(source);
            CHECK(body(source) == source);
        }
    }
}
