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
    SECTION("untouched text") {
        const std::string plain = "__global__ void k(int* p) {\n    __shared__ int s[32];\n}\n";
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
