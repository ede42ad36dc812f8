/// @file translate.cpp
/// @brief CUDA-to-C++ source translator: a small lexer plus three rewrite rules.
///
/// The source is first split into tokens that cover every byte (so comments,
/// literals and whitespace are known and can never be mistaken for code). The
/// rules then look at the code tokens only and record edits as byte ranges of
/// the original text (empty ranges for insertions); the output is the original
/// with those ranges replaced.
#include "translate.hpp"

#include <algorithm>
#include <iterator>
#include <utility>
#include <vector>

namespace course_emu {

translation_error::translation_error(std::string_view path, std::size_t line,
                                     std::string_view reason)
    : std::runtime_error(std::string(path) + ":" + std::to_string(line) + ": " +
                         std::string(reason)),
      path_(path),
      line_(line),
      reason_(reason) {}

namespace {

enum class Kind { Whitespace, Newline, Comment, Identifier, Number, Literal, Punct };

struct Token {
    Kind kind;
    std::size_t begin;
    std::size_t end;
    /// Index of the preprocessor directive the token belongs to, -1 if none.
    int directive;
};

bool is_trivia(const Token& t) {
    return t.kind == Kind::Whitespace || t.kind == Kind::Newline || t.kind == Kind::Comment;
}

std::size_t line_of(std::string_view source, std::size_t pos) {
    return 1 + static_cast<std::size_t>(std::count(source.begin(), source.begin() + pos, '\n'));
}

bool is_identifier_char(char c) {
    const auto u = static_cast<unsigned char>(c);
    // Bytes >= 0x80 are parts of UTF-8 encoded identifiers; gcc accepts '$'.
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
           c == '_' || c == '$' || u >= 0x80;
}

bool is_digit(char c) { return c >= '0' && c <= '9'; }

/// Splits the whole source into tokens, and tags the tokens of each
/// preprocessor directive. Only what matters for finding code is lexed
/// precisely; punctuation is one token per character.
class Lexer {
public:
    Lexer(std::string_view source, std::string_view path) : src_(source), path_(path) {}

    std::vector<Token> run() {
        std::vector<Token> tokens;
        bool at_line_start = true;  // only whitespace and comments so far on this line
        int directive = -1;
        int directive_count = 0;
        std::size_t pos = 0;
        while (pos < src_.size()) {
            const auto [kind, end] = next(pos);
            if (kind == Kind::Newline) {
                // An unspliced newline ends the directive (splices are whitespace).
                at_line_start = true;
                directive = -1;
            } else if (kind != Kind::Whitespace && kind != Kind::Comment) {
                if (at_line_start && kind == Kind::Punct && src_[pos] == '#') {
                    directive = directive_count++;
                }
                at_line_start = false;
            }
            tokens.push_back({kind, pos, end, kind == Kind::Newline ? -1 : directive});
            pos = end;
        }
        return tokens;
    }

private:
    [[noreturn]] void fail(std::size_t pos, std::string_view reason) const {
        throw translation_error(path_, line_of(src_, pos), reason);
    }

    char at(std::size_t pos) const { return pos < src_.size() ? src_[pos] : '\0'; }

    /// Length of a backslash-newline line splice starting at pos, or 0.
    std::size_t splice_length(std::size_t pos) const {
        if (at(pos) != '\\') return 0;
        if (at(pos + 1) == '\n') return 2;
        if (at(pos + 1) == '\r' && at(pos + 2) == '\n') return 3;
        return 0;
    }

    std::pair<Kind, std::size_t> next(std::size_t pos) const {
        const char c = src_[pos];
        if (c == '\n') return {Kind::Newline, pos + 1};
        if (c == ' ' || c == '\t' || c == '\r' || c == '\v' || c == '\f' || splice_length(pos)) {
            return {Kind::Whitespace, whitespace_end(pos)};
        }
        if (c == '/' && at(pos + 1) == '/') return {Kind::Comment, line_comment_end(pos)};
        if (c == '/' && at(pos + 1) == '*') return {Kind::Comment, block_comment_end(pos)};
        if (c == '"' || c == '\'') return {Kind::Literal, quoted_end(pos)};
        if (is_digit(c) || (c == '.' && is_digit(at(pos + 1)))) {
            return {Kind::Number, number_end(pos)};
        }
        if (is_identifier_char(c)) {
            std::size_t end = pos;
            while (end < src_.size() && is_identifier_char(src_[end])) ++end;
            const std::string_view word = src_.substr(pos, end - pos);
            // A raw string's prefix lexes as an identifier; the literal follows.
            if (at(end) == '"' &&
                (word == "R" || word == "u8R" || word == "uR" || word == "UR" || word == "LR")) {
                return {Kind::Literal, raw_string_end(end)};
            }
            return {Kind::Identifier, end};
        }
        return {Kind::Punct, pos + 1};
    }

    std::size_t whitespace_end(std::size_t pos) const {
        while (pos < src_.size()) {
            const char c = src_[pos];
            if (c == ' ' || c == '\t' || c == '\r' || c == '\v' || c == '\f') {
                ++pos;
            } else if (const std::size_t splice = splice_length(pos)) {
                pos += splice;
            } else {
                break;
            }
        }
        return pos;
    }

    /// A line comment runs to the next newline that is not spliced away; the
    /// newline itself is not part of it.
    std::size_t line_comment_end(std::size_t pos) const {
        while (pos < src_.size() && src_[pos] != '\n') {
            const std::size_t splice = splice_length(pos);
            pos += splice ? splice : 1;
        }
        return pos;
    }

    std::size_t block_comment_end(std::size_t pos) const {
        const std::size_t close = src_.find("*/", pos + 2);
        if (close == std::string_view::npos) fail(pos, "unterminated /* comment");
        return close + 2;
    }

    /// An ordinary string or character literal. One that is not closed on its
    /// line ends there, as in the compiler's own lexer: apostrophes in
    /// `#error don't` must not swallow the rest of the file.
    std::size_t quoted_end(std::size_t pos) const {
        const char quote = src_[pos];
        ++pos;
        while (pos < src_.size()) {
            const char c = src_[pos];
            if (c == quote) return pos + 1;
            if (c == '\n') return pos;
            if (c == '\\') {
                // Skip the escaped character; a spliced CRLF is skipped whole.
                pos += (at(pos + 1) == '\r' && at(pos + 2) == '\n') ? 3u : 2u;
            } else {
                ++pos;
            }
        }
        return src_.size();
    }

    /// pp-number: also covers digit separators (1'000) and exponents (1e-5),
    /// so their `'` and `-` are not lexed as a char literal or an operator.
    std::size_t number_end(std::size_t pos) const {
        ++pos;
        while (pos < src_.size()) {
            const char c = src_[pos];
            if ((c == 'e' || c == 'E' || c == 'p' || c == 'P') &&
                (at(pos + 1) == '+' || at(pos + 1) == '-')) {
                pos += 2;
            } else if (c == '\'' && is_identifier_char(at(pos + 1))) {
                pos += 2;
            } else if (is_identifier_char(c) || c == '.') {
                ++pos;
            } else {
                break;
            }
        }
        return pos;
    }

    /// R"delim( ... )delim" starting at the opening quote.
    std::size_t raw_string_end(std::size_t quote) const {
        const std::size_t open = src_.find('(', quote + 1);
        const std::string_view delim =
            open == std::string_view::npos ? std::string_view{}
                                           : src_.substr(quote + 1, open - quote - 1);
        if (open == std::string_view::npos || delim.size() > 16 ||
            delim.find_first_of(" \t\n\r\v\f)\\\"") != std::string_view::npos) {
            fail(quote, "invalid raw string literal delimiter");
        }
        const std::string terminator = ")" + std::string(delim) + "\"";
        const std::size_t close = src_.find(terminator, open + 1);
        if (close == std::string_view::npos) fail(quote, "unterminated raw string literal");
        return close + terminator.size();
    }

    std::string_view src_;
    std::string_view path_;
};

/// Replace the original bytes [begin, end) by text.
struct Edit {
    std::size_t begin;
    std::size_t end;
    std::string text;
};

/// Indices into the token vector of the code tokens one rule pass looks at.
using Segment = std::vector<std::size_t>;

std::string c_string_literal(std::string_view text) {
    std::string out = "\"";
    for (const char c : text) {
        if (c == '\\' || c == '"') out += '\\';
        out += c;
    }
    out += '"';
    return out;
}

class Translator {
public:
    Translator(std::string_view source, std::string_view path)
        : src_(source), path_(path), tokens_(Lexer(source, path).run()) {}

    std::string run() {
        const std::vector<Segment> all = segments();
        for (const Segment& segment : all) translate(segment);
        // Only code outside directives has function bodies; a `__shared__` in
        // a #define body is left to the macro.
        register_static_shared(all.front());
        translate_constants(all.front());
        // Edits never overlap: a replacement covers whole tokens, and an
        // insertion (begin == end) sits just after a `;`, which no replacement
        // covers. Ordering by (begin, end) puts an insertion before a
        // replacement that starts at the same byte.
        std::sort(edits_.begin(), edits_.end(), [](const Edit& a, const Edit& b) {
            return std::pair(a.begin, a.end) < std::pair(b.begin, b.end);
        });

        std::string out = "#include <cuda_runtime.h>\n#line 1 " + c_string_literal(path_) + "\n";
        std::size_t copied = 0;
        for (const Edit& edit : edits_) {
            out.append(src_.substr(copied, edit.begin - copied));
            out += edit.text;
            copied = edit.end;
        }
        out.append(src_.substr(copied));
        return out;
    }

private:
    /// The code outside directives forms one segment: directives between its
    /// tokens (an #ifdef inside a launch configuration) are skipped over and
    /// copied verbatim. Each #define body is a segment of its own; other
    /// directives are not translated.
    std::vector<Segment> segments() const {
        std::vector<Segment> segments(1);
        for (std::size_t i = 0; i < tokens_.size(); ++i) {
            const Token& t = tokens_[i];
            if (is_trivia(t)) continue;
            const std::size_t slot = static_cast<std::size_t>(t.directive + 1);
            if (slot >= segments.size()) segments.resize(slot + 1);
            segments[slot].push_back(i);
        }
        for (std::size_t slot = 1; slot < segments.size(); ++slot) {
            Segment& directive = segments[slot];
            const bool is_define = directive.size() >= 2 && text(tokens_[directive[1]]) == "define";
            // Drop `#` and `define`, or the whole directive if it is no #define.
            directive.erase(directive.begin(),
                            is_define ? directive.begin() + 2 : directive.end());
        }
        return segments;
    }

    void translate(const Segment& seg) {
        for (std::size_t i = 0; i < seg.size();) {
            if (is_triple(seg, i, '<') && !(i > 0 && is_word(tok(seg, i - 1), "operator"))) {
                i = translate_launch(seg, i);
            } else if (is_word(tok(seg, i), "extern")) {
                i = translate_extern_shared(seg, i);
            } else {
                ++i;
            }
        }
    }

    /// Rewrites the launch whose `<<<` starts at seg[open]; returns the
    /// segment index just past its `>>>`.
    std::size_t translate_launch(const Segment& seg, std::size_t open) {
        const std::size_t first = kernel_expression_start(seg, open);
        const std::size_t close = config_end(seg, open);
        if (interrupted(seg, first, open + 2)) {
            fail(seg, open, "a preprocessor directive between the kernel name and '<<<' is not supported");
        }
        const std::string expr = join(seg, first, open);
        const std::size_t begin = tok(seg, first).begin;
        const std::size_t end = tok(seg, open + 2).end;
        edits_.push_back(
            {begin, end,
             "::course_emu::launch_site(__FILE__, __LINE__, " + c_string_literal(expr) +
                 ", [&](auto&&... course_emu_args) { " + expr +
                 "(static_cast<decltype(course_emu_args)&&>(course_emu_args)...); }).config(" +
                 line_breaks(begin, end)});
        edits_.push_back({tok(seg, close).begin, tok(seg, close + 2).end, ")"});
        return close + 3;
    }

    /// Scans back from `<<<` over `[::]name[::name...][<template args>]` and
    /// returns the segment index of the expression's first token.
    std::size_t kernel_expression_start(const Segment& seg, std::size_t open) const {
        std::size_t first = open;
        if (first > 0 && is_punct(tok(seg, first - 1), '>')) {
            first = template_list_start(seg, first - 1, open);
        }
        if (first == 0 || tok(seg, first - 1).kind != Kind::Identifier) {
            fail(seg, open, "expected a kernel name before '<<<'");
        }
        --first;
        while (first >= 2 && is_scope(seg, first - 2)) {
            first -= 2;
            if (first == 0 || tok(seg, first - 1).kind != Kind::Identifier) break;
            --first;
        }
        // Anything but a name would be cut in half by the rewrite; say so
        // instead of producing code that fails to compile obscurely.
        if (first > 0) {
            const Token& before = tok(seg, first - 1);
            const bool arrow = is_punct(before, '>') && first >= 2 &&
                               is_punct(tok(seg, first - 2), '-') &&
                               tok(seg, first - 2).end == before.begin;
            if (is_punct(before, '.') || arrow || is_word(before, "template")) {
                fail(seg, open,
                     "unsupported kernel expression before '<<<': use a kernel name, "
                     "optionally qualified with '::' and with template arguments");
            }
        }
        return first;
    }

    /// seg[last] is the `>` closing a template argument list; returns the
    /// index of its `<`. Parenthesized arguments such as `(N > 2)` are skipped
    /// whole, since their `<`/`>` are comparisons.
    std::size_t template_list_start(const Segment& seg, std::size_t last, std::size_t open) const {
        int depth = 0;
        for (std::size_t i = last + 1; i-- > 0;) {
            const Token& t = tok(seg, i);
            if (is_punct(t, '>')) {
                ++depth;
            } else if (is_punct(t, '<')) {
                if (--depth == 0) return i;
            } else if (is_punct(t, ')')) {
                i = matching_open_paren(seg, i, open);
            } else if (is_punct(t, ';') || is_punct(t, '{') || is_punct(t, '}')) {
                break;
            }
        }
        fail(seg, open, "unbalanced template argument list before '<<<'");
    }

    std::size_t matching_open_paren(const Segment& seg, std::size_t close, std::size_t open) const {
        int depth = 0;
        for (std::size_t i = close + 1; i-- > 0;) {
            if (is_punct(tok(seg, i), ')')) ++depth;
            if (is_punct(tok(seg, i), '(') && --depth == 0) return i;
        }
        fail(seg, open, "unbalanced parentheses before '<<<'");
    }

    /// Returns the segment index of the `>>>` matching the `<<<` at seg[open]:
    /// the first one outside parentheses, brackets and braces. A `;` or an
    /// unbalanced closer at depth 0 cannot be inside a configuration, so the
    /// search stops there and the error names the line of the `<<<`.
    std::size_t config_end(const Segment& seg, std::size_t open) const {
        int depth = 0;
        for (std::size_t i = open + 3; i < seg.size(); ++i) {
            const Token& t = tok(seg, i);
            if (t.kind != Kind::Punct) continue;
            const char c = src_[t.begin];
            if (c == '(' || c == '[' || c == '{') {
                ++depth;
            } else if (c == ')' || c == ']' || c == '}') {
                if (depth-- == 0) break;
            } else if (c == ';' && depth == 0) {
                break;
            } else if (depth == 0 && is_triple(seg, i, '>')) {
                return i;
            }
        }
        fail(seg, open, "'<<<' without matching '>>>'");
    }

    /// Rewrites `extern __shared__ TYPE NAME[];` starting at the `extern` in
    /// seg[at]. Returns the segment index where scanning continues: past the
    /// declaration if it was rewritten, else just past `extern`.
    std::size_t translate_extern_shared(const Segment& seg, std::size_t at) {
        const std::size_t not_ours = at + 1;
        std::size_t semicolon = at + 1;
        while (semicolon < seg.size() && !is_punct(tok(seg, semicolon), ';')) {
            const Token& t = tok(seg, semicolon);
            // `extern "C" {` or an initializer: not a dynamic shared array.
            if (is_punct(t, '{') || is_punct(t, '}') || is_punct(t, '=')) return not_ours;
            ++semicolon;
        }
        if (semicolon == seg.size() || interrupted(seg, at, semicolon)) return not_ours;

        // Take out `__shared__` and alignment specifiers wherever they are;
        // what remains must be TYPE NAME [ ].
        std::vector<std::size_t> rest;
        int shared_count = 0;
        for (std::size_t i = at + 1; i < semicolon; ++i) {
            const Token& t = tok(seg, i);
            if (is_word(t, "__shared__")) {
                ++shared_count;
            } else if ((is_word(t, "__align__") || is_word(t, "alignas")) && i + 1 < semicolon &&
                       is_punct(tok(seg, i + 1), '(')) {
                i = matching_close_paren(seg, i + 1, semicolon);
                if (i == semicolon) return not_ours;
            } else {
                rest.push_back(i);
            }
        }
        const std::size_t n = rest.size();
        if (shared_count != 1 || n < 4 || tok(seg, rest[n - 3]).kind != Kind::Identifier ||
            !is_punct(tok(seg, rest[n - 2]), '[') || !is_punct(tok(seg, rest[n - 1]), ']')) {
            return not_ours;
        }
        const std::vector<std::size_t> type(rest.begin(), rest.end() - 3);
        // A bracket in TYPE means several declarators (`a[], b[]`) or a
        // multi-dimensional array: not the simple form this rule handles.
        for (const std::size_t i : type) {
            if (is_punct(tok(seg, i), '[') || is_punct(tok(seg, i), ']')) return not_ours;
        }

        const std::string type_text = join(seg, type);
        const std::size_t begin = tok(seg, at).begin;
        const std::size_t end = tok(seg, semicolon).end;
        edits_.push_back({begin, end,
                          type_text + "* const " + std::string(text(tok(seg, rest[n - 3]))) +
                              " = ::course_emu::dynamic_shared<" + type_text + ">();" +
                              line_breaks(begin, end)});
        return semicolon + 1;
    }

    /// Index of the `)` matching the `(` at seg[open_paren], or `limit` if
    /// there is none before it.
    std::size_t matching_close_paren(const Segment& seg, std::size_t open_paren,
                                     std::size_t limit) const {
        int depth = 0;
        for (std::size_t i = open_paren; i < limit; ++i) {
            if (is_punct(tok(seg, i), '(')) ++depth;
            if (is_punct(tok(seg, i), ')') && --depth == 0) return i;
        }
        return limit;
    }

    // ---- __constant__ variables ------------------------------------------

    /// Gives each `__constant__` variable a const view for device code: in a
    /// declaration statement `SPECIFIERS TYPE NAME[DIMS]... [= INIT];` with
    /// `__constant__` among the specifiers and one declarator, NAME becomes
    /// `course_emu_constant_NAME` (the storage, which cudaMemcpyToSymbol
    /// fills) and after the `;` come, on the same line,
    ///   ` static_assert(sizeof(course_emu_constant_NAME) <= 65536, "...");`
    ///   ` [[maybe_unused]] static const auto& NAME = course_emu_constant_NAME;`
    /// so that a kernel assigning to NAME is a compile error at its own line,
    /// as with nvcc. `extern` declarations, several declarators and
    /// declarations interrupted by a directive are left alone (writable).
    void translate_constants(const Segment& seg) {
        for (std::size_t i = 0; i < seg.size(); ++i) {
            if (is_word(tok(seg, i), "__constant__")) i = translate_constant(seg, i);
        }
    }

    /// Rewrites the declaration around the `__constant__` at seg[at] if it has
    /// the form above; returns the index from which to look further.
    std::size_t translate_constant(const Segment& seg, std::size_t at) {
        std::size_t start = at;
        while (start > 0 && !is_punct(tok(seg, start - 1), ';') && !is_punct(tok(seg, start - 1), '{') &&
               !is_punct(tok(seg, start - 1), '}')) {
            --start;
        }
        // The `;` that ends it (an initializer's braces and parentheses skipped),
        // and where the declarator ends: at `=`, at a brace initializer, or the `;`.
        std::size_t semicolon = at;
        std::size_t declarator_end = 0;
        int depth = 0;
        for (; semicolon < seg.size(); ++semicolon) {
            const Token& t = tok(seg, semicolon);
            if (depth == 0 && declarator_end == 0 && (is_punct(t, '=') || is_punct(t, '{'))) {
                declarator_end = semicolon;
            }
            if (depth == 0 && is_punct(t, ',') && declarator_end == 0) return at;  // several declarators
            if (is_punct(t, '(') || is_punct(t, '[') || is_punct(t, '{')) {
                ++depth;
            } else if (is_punct(t, ')') || is_punct(t, ']') || is_punct(t, '}')) {
                if (--depth < 0) return at;
            } else if (depth == 0 && is_punct(t, ';')) {
                break;
            }
        }
        if (semicolon == seg.size() || interrupted(seg, start, semicolon)) return at;
        if (declarator_end == 0) declarator_end = semicolon;
        for (std::size_t k = start; k < declarator_end; ++k) {
            if (is_word(tok(seg, k), "extern") || is_word(tok(seg, k), "typedef")) return semicolon;
        }
        const std::size_t name = declarator_name(seg, start, declarator_end);
        if (name == declarator_end || name <= at) return semicolon;
        bool has_type = false;  // `__constant__ float;` declares nothing
        for (std::size_t k = start; k < name; ++k) {
            const Token& t = tok(seg, k);
            has_type = has_type || (t.kind == Kind::Identifier && text(t) != "__constant__" &&
                                    !is_specifier_word(text(t)));
        }
        if (!has_type) return semicolon;
        const std::string original(text(tok(seg, name)));
        const std::string storage = "course_emu_constant_" + original;
        edits_.push_back({tok(seg, name).begin, tok(seg, name).end, storage});
        const std::size_t after = tok(seg, semicolon).end;
        edits_.push_back({after, after,
                          " static_assert(sizeof(" + storage + ") <= 65536, \"__constant__ " + original +
                              " is larger than the 64 KiB of constant memory\"); [[maybe_unused]] static const "
                              "auto& " + original + " = " + storage + ";"});
        return semicolon;
    }

    // ---- static __shared__ declarations at function scope ----------------

    /// Walks the code keeping track of braces, and appends a
    /// `::course_emu::shared_declared(&N, sizeof(N));` for each name N of a
    /// `__shared__` declaration statement at function scope.
    void register_static_shared(const Segment& seg) {
        struct Scope {
            bool function;          // a function body or a brace nested inside one
            int depth;              // open ( and [ since the brace
            std::size_t statement;  // segment index where the current statement starts
        };
        std::vector<Scope> scopes{{false, 0, 0}};
        std::size_t handled = 0;  // `__shared__` before this index belongs to a seen statement
        for (std::size_t i = 0; i < seg.size(); ++i) {
            const Token& t = tok(seg, i);
            Scope& top = scopes.back();
            if (t.kind == Kind::Identifier) {
                if (top.function && top.depth == 0 && i >= handled && text(t) == "__shared__") {
                    handled = register_declaration(seg, top.statement, i);
                }
                continue;
            }
            if (t.kind != Kind::Punct) continue;
            switch (src_[t.begin]) {
            case '(':
            case '[':
                ++top.depth;
                break;
            case ')':
            case ']':
                if (top.depth > 0) --top.depth;
                break;
            case '{': {
                const bool function = opens_function_scope(seg, i, top.function);
                scopes.push_back({function, 0, i + 1});  // invalidates top
                break;
            }
            case '}':
                // An unbalanced `}` (braces split by #if branches) is ignored.
                if (scopes.size() > 1) scopes.pop_back();
                if (scopes.back().depth == 0) scopes.back().statement = i + 1;
                break;
            case ';':
                if (top.depth == 0) top.statement = i + 1;
                break;
            case ':':
                // After a label (`case 1:`, `done:`) a new statement starts;
                // `::` and `?:` cannot come before a `__shared__` declaration.
                if (top.depth == 0 && !(i + 1 < seg.size() && is_scope(seg, i)) &&
                    !(i > 0 && is_scope(seg, i - 1))) {
                    top.statement = i + 1;
                }
                break;
            default:
                break;
            }
        }
    }

    /// The statement that starts at seg[start] contains `__shared__` at
    /// seg[at], outside parentheses. If it is a declaration of names with
    /// optional array dimensions, records the calls after its `;`. Returns
    /// the segment index from which `__shared__` starts a new statement.
    std::size_t register_declaration(const Segment& seg, std::size_t start, std::size_t at) {
        std::size_t semicolon = at;
        int depth = 0;
        for (; semicolon < seg.size(); ++semicolon) {
            const Token& t = tok(seg, semicolon);
            if (is_punct(t, '(') || is_punct(t, '[')) {
                ++depth;
            } else if (is_punct(t, ')') || is_punct(t, ']')) {
                if (--depth < 0) return at + 1;
            } else if (depth == 0 && (is_punct(t, '{') || is_punct(t, '}'))) {
                // `__shared__ struct { ... } s;` or a brace initializer.
                return at + 1;
            } else if (depth == 0 && is_punct(t, ';')) {
                break;
            }
        }
        if (semicolon == seg.size()) return at + 1;
        // A directive among the specifiers or names (`#if` choosing the type
        // or the name) could change what is declared; one inside brackets or
        // parentheses (an array bound) cannot.
        depth = 0;
        for (std::size_t i = start; i < semicolon; ++i) {
            const Token& t = tok(seg, i);
            if (is_punct(t, '(') || is_punct(t, '[')) ++depth;
            if (is_punct(t, ')') || is_punct(t, ']')) --depth;
            if (depth == 0 && interrupted(seg, i, i + 1)) return semicolon;
        }

        const std::vector<std::string_view> names = declared_names(seg, start, semicolon);
        if (names.empty()) return semicolon;
        guard_static_shared_arrays(seg, start, semicolon);
        std::string calls;
        for (const std::string_view name : names) {
            calls += " ::course_emu::shared_declared(&" + std::string(name) + ", sizeof(" +
                     std::string(name) + "));";
        }
        const std::size_t after = tok(seg, semicolon).end;
        edits_.push_back({after, after, calls});
        return semicolon;
    }

    /// Puts each array of the static `__shared__` declaration seg[start,
    /// semicolon) (one register_declaration accepted) in memory that ends at a
    /// guard page, so that an index past its end faults and is reported with
    /// the array's name, size and declaration: each declarator `NAME[DIMS]`
    /// becomes `(&NAME)[DIMS] = ::course_emu::static_shared("NAME", __FILE__,
    /// __LINE__)`, a reference to that memory. Declarations with an alignment
    /// or attribute specifier are left as they are (an attribute on a
    /// reference would be ignored, the alignment lost).
    void guard_static_shared_arrays(const Segment& seg, std::size_t start, std::size_t semicolon) {
        for (std::size_t i = start; i < semicolon; ++i) {
            const Token& t = tok(seg, i);
            if (t.kind != Kind::Identifier) continue;
            const std::string_view w = text(t);
            if (w == "alignas" || w == "__align__" || w == "__attribute__" || w == "_Alignas" || w == "__declspec") {
                return;
            }
        }
        // The declarators: split at the commas outside (), [] and <>.
        std::size_t part = start;
        int depth = 0;
        int angles = 0;
        for (std::size_t i = start; i <= semicolon; ++i) {
            const Token& t = tok(seg, i);
            const bool end = i == semicolon || (depth == 0 && angles == 0 && is_punct(t, ','));
            if (!end) {
                if (is_punct(t, '(') || is_punct(t, '[')) ++depth;
                if (is_punct(t, ')') || is_punct(t, ']')) --depth;
                if (depth == 0 && is_punct(t, '<')) ++angles;
                if (depth == 0 && is_punct(t, '>')) --angles;
                continue;
            }
            const std::size_t name = declarator_name(seg, part, i);
            if (name != i && name + 1 != i) {  // a name with dimensions after it
                const Token& n = tok(seg, name);
                edits_.push_back({n.begin, n.begin, "(&"});
                edits_.push_back({n.end, n.end, ")"});
                edits_.push_back({t.begin, t.begin,
                                  " = ::course_emu::static_shared(\"" + std::string(text(n)) +
                                      "\", __FILE__, __LINE__)"});
            }
            part = i + 1;
        }
    }

    /// The names declared by the statement seg[start, semicolon) if it has the
    /// form `SPECIFIERS-AND-TYPE NAME[DIMS]..., NAME[DIMS]...` with
    /// `__shared__` among the specifiers; otherwise none.
    std::vector<std::string_view> declared_names(const Segment& seg, std::size_t start,
                                                 std::size_t semicolon) const {
        // Split at the commas that separate declarators: not those inside
        // (), [] or a template argument list.
        std::vector<std::pair<std::size_t, std::size_t>> parts;
        std::size_t part = start;
        int depth = 0;
        int angles = 0;
        for (std::size_t i = start; i < semicolon; ++i) {
            const Token& t = tok(seg, i);
            if (t.kind == Kind::Literal || t.kind == Kind::Number) {
                if (depth == 0 && angles == 0) return {};
            }
            if (t.kind != Kind::Punct) continue;
            const char c = src_[t.begin];
            if (c == '(' || c == '[') {
                ++depth;
            } else if (c == ')' || c == ']') {
                --depth;
            } else if (depth > 0) {
                continue;
            } else if (c == '<') {
                ++angles;
            } else if (c == '>') {
                if (angles == 0) return {};
                --angles;
            } else if (angles > 0) {
                continue;
            } else if (c == '=') {
                return {};  // an initializer: not valid for shared memory, leave it
            } else if (c == ',') {
                parts.emplace_back(part, i);
                part = i + 1;
            }
        }
        if (angles != 0) return {};
        parts.emplace_back(part, semicolon);

        std::vector<std::string_view> names;
        for (std::size_t k = 0; k < parts.size(); ++k) {
            const auto [begin, end] = parts[k];
            const std::size_t name = declarator_name(seg, begin, end);
            if (name == end) return {};
            const bool prefix_ok = k == 0 ? is_shared_specifiers(seg, begin, name)
                                          : is_pointer_prefix(seg, begin, name);
            if (!prefix_ok) return {};
            names.push_back(text(tok(seg, name)));
        }
        return names;
    }

    /// seg[begin, end) ends with `NAME` followed by zero or more non-empty
    /// `[...]`: returns NAME's index, or `end` if it does not.
    std::size_t declarator_name(const Segment& seg, std::size_t begin, std::size_t end) const {
        std::size_t last = end;  // one past the name
        while (last > begin && is_punct(tok(seg, last - 1), ']')) {
            const std::size_t open = matching_opener(seg, last - 1, begin);
            if (open == last - 1 || open + 2 == last) return end;  // unmatched, or `[]`
            last = open;
        }
        if (last == begin) return end;
        const std::size_t name = last - 1;
        const Token& t = tok(seg, name);
        if (t.kind != Kind::Identifier || is_specifier_word(text(t))) return end;
        // `__shared__ ns::x;` names no variable of its own.
        if (name > begin && is_punct(tok(seg, name - 1), ':')) return end;
        return name;
    }

    /// Words that may stand among the declaration specifiers but name no type.
    static bool is_specifier_word(std::string_view w) {
        return w == "__shared__" || w == "static" || w == "thread_local" || w == "volatile" ||
               w == "const" || w == "register" || w == "inline" || w == "constexpr" ||
               w == "__restrict__" || w == "__restrict" || w == "__device__" ||
               w == "typename" || w == "alignas" || w == "__align__" || w == "__attribute__" ||
               w == "__declspec" || w == "_Alignas";
    }

    /// Keywords that show that a statement is no plain declaration.
    static bool is_statement_word(std::string_view w) {
        static constexpr std::string_view words[] = {
            "extern",   "typedef",  "using",     "return",        "if",       "else",
            "for",      "while",    "do",        "switch",        "case",     "default",
            "goto",     "break",    "continue",  "friend",        "operator", "new",
            "delete",   "throw",    "sizeof",    "alignof",       "static_assert",
            "co_return", "co_await", "co_yield", "asm",           "__asm__",  "try",
            "catch",    "namespace", "this",     "true",          "false",    "nullptr"};
        return std::find(std::begin(words), std::end(words), w) != std::end(words);
    }

    /// seg[begin, end) is declaration specifiers and a type, with `__shared__`
    /// among them: words, `::`, template argument lists, `*`, `&`, and
    /// `alignas(...)`, `__align__(...)`, `__attribute__((...))`,
    /// `decltype(...)`, `[[...]]`.
    bool is_shared_specifiers(const Segment& seg, std::size_t begin, std::size_t end) const {
        bool shared = false;
        bool type = false;
        for (std::size_t i = begin; i < end; ++i) {
            const Token& t = tok(seg, i);
            if (t.kind == Kind::Identifier) {
                const std::string_view w = text(t);
                if (is_statement_word(w)) return false;
                if (w == "__shared__") shared = true;
                if (w == "alignas" || w == "__align__" || w == "__attribute__" ||
                    w == "__declspec" || w == "_Alignas" || w == "decltype") {
                    if (i + 1 == end || !is_punct(tok(seg, i + 1), '(')) return false;
                    i = matching_close_paren(seg, i + 1, end);
                    if (i == end) return false;
                    if (w == "decltype") type = true;
                } else if (!is_specifier_word(w)) {
                    type = true;
                }
            } else if (is_punct(t, '<')) {
                i = template_list_end(seg, i, end);
                if (i == end) return false;
            } else if (i + 1 < end && is_scope(seg, i)) {
                ++i;
            } else if (i + 1 < end && is_punct(t, '[') && is_punct(tok(seg, i + 1), '[')) {
                i = matching_close_bracket(seg, i, end);  // an attribute [[...]]
                if (i == end) return false;
            } else if (!is_punct(t, '*') && !is_punct(t, '&')) {
                return false;  // `for (...)`, a label, an expression, ...
            }
        }
        return shared && type;
    }

    /// seg[begin, end) is what may precede a second declarator's name:
    /// `*`, `const`, `volatile`, `__restrict__`.
    bool is_pointer_prefix(const Segment& seg, std::size_t begin, std::size_t end) const {
        for (std::size_t i = begin; i < end; ++i) {
            const Token& t = tok(seg, i);
            if (is_punct(t, '*')) continue;
            if (t.kind != Kind::Identifier) return false;
            const std::string_view w = text(t);
            if (w != "const" && w != "volatile" && w != "__restrict__" && w != "__restrict") {
                return false;
            }
        }
        return true;
    }

    /// Index of the `>` closing the template argument list opened at
    /// seg[open], or `limit`. Parenthesized arguments are skipped whole.
    std::size_t template_list_end(const Segment& seg, std::size_t open, std::size_t limit) const {
        int depth = 0;
        for (std::size_t i = open; i < limit; ++i) {
            const Token& t = tok(seg, i);
            if (is_punct(t, '(')) {
                i = matching_close_paren(seg, i, limit);
                if (i == limit) return limit;
            } else if (is_punct(t, '<')) {
                ++depth;
            } else if (is_punct(t, '>') && --depth == 0) {
                return i;
            }
        }
        return limit;
    }

    /// Index of the `]` matching the `[` at seg[open], or `limit`.
    std::size_t matching_close_bracket(const Segment& seg, std::size_t open,
                                       std::size_t limit) const {
        int depth = 0;
        for (std::size_t i = open; i < limit; ++i) {
            if (is_punct(tok(seg, i), '[')) ++depth;
            if (is_punct(tok(seg, i), ']') && --depth == 0) return i;
        }
        return limit;
    }

    /// Index of the opener matching the `)` or `]` at seg[close], searching no
    /// further back than seg[floor]; `close` if there is none.
    std::size_t matching_opener(const Segment& seg, std::size_t close, std::size_t floor) const {
        const char closer = src_[tok(seg, close).begin];
        const char opener = closer == ')' ? '(' : '[';
        int depth = 0;
        for (std::size_t i = close + 1; i-- > floor;) {
            if (is_punct(tok(seg, i), closer)) ++depth;
            if (is_punct(tok(seg, i), opener) && --depth == 0) return i;
        }
        return close;
    }

    /// Whether the `{` at seg[brace] opens function scope: a function or
    /// lambda body, or any brace inside one, but not the body of a class,
    /// struct, union, enum or namespace, nor `extern "C" {`.
    bool opens_function_scope(const Segment& seg, std::size_t brace, bool in_function) const {
        // The head: the tokens of the declaration or statement the brace
        // belongs to, back to a `;`, a brace or an unclosed `(` or `[`.
        std::size_t head = brace;
        for (int depth = 0; head > 0; --head) {
            const Token& t = tok(seg, head - 1);
            if (is_punct(t, ')') || is_punct(t, ']')) {
                ++depth;
            } else if (is_punct(t, '(') || is_punct(t, '[')) {
                if (depth-- == 0) break;
            } else if (depth == 0 && (is_punct(t, ';') || is_punct(t, '{') || is_punct(t, '}'))) {
                break;
            }
        }

        bool has_extern = false;
        for (std::size_t i = head, depth = 0; i < brace; ++i) {
            const Token& t = tok(seg, i);
            if (is_punct(t, '(') || is_punct(t, '[')) ++depth;
            if ((is_punct(t, ')') || is_punct(t, ']')) && depth > 0) --depth;
            if (depth > 0 || t.kind != Kind::Identifier) continue;
            const std::string_view w = text(t);
            if (w == "namespace") return false;
            if (w == "extern") has_extern = true;
            if ((w == "struct" || w == "class" || w == "union" || w == "enum") &&
                class_head_ends_at(seg, i, brace)) {
                return false;
            }
        }
        if (has_extern && brace > head && tok(seg, brace - 1).kind == Kind::Literal) {
            return false;  // extern "C" {
        }
        if (in_function) return true;
        // `X() : a{x} {`: a constructor's member initializer list.
        if (brace > 0 && is_punct(tok(seg, brace - 1), '}')) return true;
        return is_function_body_head(seg, head, brace);
    }

    /// Whether the class key at seg[key] starts `KEY [attributes] [NAME]
    /// [final] [: BASES]` ending at the `{` at seg[brace].
    bool class_head_ends_at(const Segment& seg, std::size_t key, std::size_t brace) const {
        std::size_t i = key + 1;
        if (is_word(tok(seg, key), "enum") && i < brace &&
            (is_word(tok(seg, i), "class") || is_word(tok(seg, i), "struct"))) {
            ++i;
        }
        while (i < brace) {
            const Token& t = tok(seg, i);
            if ((is_word(t, "alignas") || is_word(t, "__align__") || is_word(t, "__attribute__") ||
                 is_word(t, "__declspec")) &&
                i + 1 < brace && is_punct(tok(seg, i + 1), '(')) {
                i = matching_close_paren(seg, i + 1, brace) + 1;
            } else if (i + 1 < brace && is_punct(t, '[') && is_punct(tok(seg, i + 1), '[')) {
                i = matching_close_bracket(seg, i, brace) + 1;
            } else {
                break;
            }
        }
        bool expect_name = true;
        while (i < brace) {
            const Token& t = tok(seg, i);
            if (is_scope(seg, i)) {
                i += 2;
                expect_name = true;
            } else if (t.kind == Kind::Identifier && !is_word(t, "final") && expect_name) {
                ++i;
                expect_name = false;
            } else if (is_punct(t, '<') && !expect_name) {
                i = template_list_end(seg, i, brace) + 1;
            } else {
                break;
            }
        }
        if (i < brace && is_word(tok(seg, i), "final")) ++i;
        if (i == brace) return true;
        return i < brace && is_punct(tok(seg, i), ':');  // a base clause
    }

    /// Outside function scope, whether the `{` at seg[brace] follows a
    /// parameter list (a function or lambda) or a lambda introducer, possibly
    /// with qualifiers, `noexcept(...)`, attributes, a trailing return type
    /// or a requires-clause in between.
    bool is_function_body_head(const Segment& seg, std::size_t head, std::size_t brace) const {
        std::size_t j = brace;  // the token looked at is seg[j - 1]
        while (j > head) {
            const std::size_t last = j - 1;
            const Token& t = tok(seg, last);
            if (is_punct(t, '&') ||
                (t.kind == Kind::Identifier &&
                 (text(t) == "const" || text(t) == "volatile" || text(t) == "noexcept" ||
                  text(t) == "override" || text(t) == "final" || text(t) == "mutable" ||
                  text(t) == "constexpr" || text(t) == "consteval" || text(t) == "try" ||
                  text(t) == "__device__" || text(t) == "__host__"))) {
                --j;
                continue;
            }
            if (is_punct(t, ')')) {
                const std::size_t open = matching_opener(seg, last, head);
                if (open == last) return false;
                if (open > head) {
                    const Token& before = tok(seg, open - 1);
                    if (is_word(before, "noexcept") || is_word(before, "throw") ||
                        is_word(before, "__attribute__") || is_word(before, "alignas") ||
                        is_word(before, "__align__") || is_word(before, "__declspec")) {
                        j = open - 1;
                        continue;
                    }
                }
                return true;  // a parameter list
            }
            if (is_punct(t, ']')) {
                const std::size_t open = matching_opener(seg, last, head);
                if (open == last) return false;
                if (open == head) return true;
                // After a name, `]` or `)` the brackets are array bounds or a
                // subscript (`int a[2]{1, 2}`); elsewhere a lambda introducer.
                const Token& before = tok(seg, open - 1);
                if (before.kind == Kind::Identifier) {
                    return is_word(before, "return") || is_word(before, "co_return") ||
                           is_word(before, "co_yield");
                }
                return !is_punct(before, ']') && !is_punct(before, ')');
            }
            // Jump back over a trailing return type or a requires-clause.
            bool found = false;
            int depth = 0;
            for (std::size_t k = last + 1; k-- > head;) {
                const Token& u = tok(seg, k);
                if (is_punct(u, ')') || is_punct(u, ']')) ++depth;
                if (is_punct(u, '(') || is_punct(u, '[')) --depth;
                if (depth != 0) continue;
                if (is_word(u, "requires")) {
                    j = k;
                    found = true;
                    break;
                }
                if (is_punct(u, '>') && k > head && is_punct(tok(seg, k - 1), '-') &&
                    tok(seg, k - 1).end == u.begin) {
                    j = k - 1;
                    found = true;
                    break;
                }
            }
            if (!found) return false;
        }
        return false;
    }

    // ---- helpers -------------------------------------------------------

    [[noreturn]] void fail(const Segment& seg, std::size_t i, std::string_view reason) const {
        throw translation_error(path_, line_of(src_, tok(seg, i).begin), reason);
    }

    const Token& tok(const Segment& seg, std::size_t i) const { return tokens_[seg[i]]; }

    std::string_view text(const Token& t) const { return src_.substr(t.begin, t.end - t.begin); }

    bool is_punct(const Token& t, char c) const {
        return t.kind == Kind::Punct && src_[t.begin] == c;
    }

    bool is_word(const Token& t, std::string_view word) const {
        return t.kind == Kind::Identifier && text(t) == word;
    }

    /// Three adjacent `c` tokens at seg[i]: `<<<` or `>>>`, not `< <<`.
    bool is_triple(const Segment& seg, std::size_t i, char c) const {
        return i + 2 < seg.size() && is_punct(tok(seg, i), c) && is_punct(tok(seg, i + 1), c) &&
               is_punct(tok(seg, i + 2), c) && tok(seg, i).end == tok(seg, i + 1).begin &&
               tok(seg, i + 1).end == tok(seg, i + 2).begin;
    }

    /// `::` at seg[i], seg[i + 1].
    bool is_scope(const Segment& seg, std::size_t i) const {
        return is_punct(tok(seg, i), ':') && is_punct(tok(seg, i + 1), ':') &&
               tok(seg, i).end == tok(seg, i + 1).begin;
    }

    /// True if code outside the segment (a directive) lies between seg[from]
    /// and seg[to]: the segment's tokens are then not all the code there is.
    bool interrupted(const Segment& seg, std::size_t from, std::size_t to) const {
        const auto code = std::count_if(tokens_.begin() + static_cast<std::ptrdiff_t>(seg[from]),
                                        tokens_.begin() + static_cast<std::ptrdiff_t>(seg[to]) + 1,
                                        [](const Token& t) { return !is_trivia(t); });
        return static_cast<std::size_t>(code) != to - from + 1;
    }

    /// The tokens' text, with any whitespace or comments between two of them
    /// collapsed to one space.
    std::string join(const Segment& seg, const std::vector<std::size_t>& indices) const {
        std::string out;
        for (std::size_t k = 0; k < indices.size(); ++k) {
            const Token& t = tok(seg, indices[k]);
            if (k > 0 && tok(seg, indices[k - 1]).end != t.begin) out += ' ';
            out += text(t);
        }
        return out;
    }

    std::string join(const Segment& seg, std::size_t from, std::size_t to) const {
        std::vector<std::size_t> indices;
        for (std::size_t i = from; i < to; ++i) indices.push_back(i);
        return join(seg, indices);
    }

    /// The line breaks in the original bytes [begin, end), each with the
    /// backslash of a line splice and a CR before it, so that emitting them
    /// after a replacement keeps every later line (also inside a #define) on
    /// its original number.
    std::string line_breaks(std::size_t begin, std::size_t end) const {
        std::string out;
        for (std::size_t i = begin; i < end; ++i) {
            if (src_[i] != '\n') continue;
            std::size_t from = i;
            if (from > begin && src_[from - 1] == '\r') --from;
            if (from > begin && src_[from - 1] == '\\') --from;
            out.append(src_.substr(from, i + 1 - from));
        }
        return out;
    }

    std::string_view src_;
    std::string_view path_;
    std::vector<Token> tokens_;
    std::vector<Edit> edits_;
};

}  // namespace

std::string translate_cuda_source(std::string_view source, std::string_view original_path) {
    return Translator(source, original_path).run();
}

}  // namespace course_emu
