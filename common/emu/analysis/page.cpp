// `./course show`'s page (course_emu/analysis_page.hpp): the pictures of an
// analysis (Report::pictures) as one self-contained HTML file with inline
// SVG. Every figure is drawn from the emulator's record; nothing here is read
// back by a test.
#include <course_emu/analysis_page.hpp>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <map>
#include <set>
#include <sstream>
#include <string>
#include <vector>

namespace course_emu::analysis {
namespace {

std::string escape(const std::string& text) {
    std::string out;
    out.reserve(text.size());
    for (char c : text) {
        switch (c) {
            case '&': out += "&amp;"; break;
            case '<': out += "&lt;"; break;
            case '>': out += "&gt;"; break;
            case '"': out += "&quot;"; break;
            default: out += c;
        }
    }
    return out;
}

std::string number(double v) {
    char buffer[64];
    if (std::isnan(v)) return "NaN";
    std::snprintf(buffer, sizeof buffer, "%.7g", v);
    return buffer;
}

std::string index3(uint3 v, bool two_d, bool three_d) {
    if (three_d) return std::to_string(v.x) + "," + std::to_string(v.y) + "," + std::to_string(v.z);
    if (two_d) return std::to_string(v.x) + "," + std::to_string(v.y);
    return std::to_string(v.x);
}

// The text of source lines, read once per file.
class Sources {
public:
    const std::string* line(const std::string& path, int number) {
        if (path.empty() || number <= 0) return nullptr;
        auto it = files_.find(path);
        if (it == files_.end()) {
            std::vector<std::string> lines;
            std::ifstream in(path);
            for (std::string l; std::getline(in, l);) lines.push_back(l);
            it = files_.emplace(path, std::move(lines)).first;
        }
        if (static_cast<std::size_t>(number) > it->second.size()) return nullptr;
        return &it->second[number - 1];
    }

private:
    std::map<std::string, std::vector<std::string>> files_;
};

const char* const kStyle = R"(
body { font: 14px/1.4 system-ui, sans-serif; margin: 1.5em; color: #222; background: #fff; }
h1 { font-size: 1.5em; margin: 0 0 .2em; } h2 { border-bottom: 2px solid #ccc; margin-top: 2em; }
h3 { margin: 1.2em 0 .4em; } .sub, .note { color: #555; } .bad { color: #b00020; font-weight: 600; }
.good { color: #1b7a1b; font-weight: 600; }
.access { display: flex; gap: 1.2em; align-items: flex-start; margin: .6em 0 1.2em; }
.access .src { max-width: 40em; } pre { background: #f6f6f6; padding: .4em .6em; margin: .3em 0; white-space: pre-wrap; }
.listing { font: 12px/1.35 monospace; background: #f6f6f6; padding: .4em 0; }
.listing div { padding: 0 .6em; white-space: pre; } .listing .has { background: #fff4c2; }
.hot { outline: 3px solid #ff9800; } .listing a { text-decoration: none; }
svg text { font: 10px monospace; fill: #222; } svg .big { font: 12px sans-serif; }
.lane { fill: #cfe3ff; stroke: #4a78b5; } .lane.conflict, .lane.uncoalesced { fill: #ff8a80; stroke: #b00020; }
.bank { fill: #eee; stroke: #999; } .bank.used { fill: #c8e6c9; stroke: #2e7d32; } .bank.conflict { fill: #ff8a80; stroke: #b00020; }
.sector { fill: #fafafa; stroke: #aaa; } .sector.touched { fill: #c8e6c9; stroke: #2e7d32; }
.sector.touched.partial { fill: #ffcc80; stroke: #e65100; } .wire { stroke: #90a4ae; stroke-width: .7; }
.wire.conflict, .wire.uncoalesced { stroke: #d32f2f; }
.cell { fill: #e3f2fd; stroke: #90a4ae; } .cell.unwritten { fill: #fff; stroke: #b00020; stroke-dasharray: 3 2; }
.cell.race { fill: #ff8a80; stroke: #b00020; stroke-width: 2; } .cell.atomic { fill: #e1bee7; }
.mark { stroke: #333; stroke-width: .5; } .mark.parted { stroke: #ff6f00; stroke-width: 2.5; }
.mark.stuck { stroke: #b00020; stroke-width: 2.5; } .row { fill: #f4f4f4; }
.out.right { fill: #c8e6c9; } .out.untouched { fill: #9e9e9e; } .out.wrong.sev1 { fill: #fff59d; }
.out.wrong.sev2 { fill: #ffcc80; } .out.wrong.sev3 { fill: #ff7043; } .out.wrong.sev4 { fill: #b71c1c; }
.legend span { display: inline-block; width: 1em; height: 1em; vertical-align: middle; margin: 0 .3em 0 1em; border: 1px solid #888; }
button { margin: .2em .4em .2em 0; }
)";

// Hover: a figure and its source line light up together; the buttons switch
// between a line's worst and first request. The last statement leaves a
// marker that the check's headless render looks for (--dump-dom).
const char* const kScript = R"(
(function () {
  function pair(a, b) {
    if (!a || !b) return;
    [a, b].forEach(function (x) {
      x.addEventListener('mouseenter', function () { a.classList.add('hot'); b.classList.add('hot'); });
      x.addEventListener('mouseleave', function () { a.classList.remove('hot'); b.classList.remove('hot'); });
    });
  }
  document.querySelectorAll('[data-src]').forEach(function (fig) {
    pair(fig, document.getElementById(fig.getAttribute('data-src')));
  });
  document.querySelectorAll('button[data-show]').forEach(function (b) {
    b.addEventListener('click', function () {
      var box = b.parentNode;
      box.querySelectorAll('svg[data-sample]').forEach(function (s) {
        s.style.display = s.getAttribute('data-sample') === b.getAttribute('data-show') ? '' : 'none';
      });
    });
  });
  var status = document.getElementById('page-status');
  status.textContent = 'page script ran: ' + document.querySelectorAll('svg').length + ' figures';
})();
)";

// Colours of source lines in the timelines.
const char* const kPalette[] = {"#42a5f5", "#66bb6a", "#ffa726", "#ab47bc", "#26c6da", "#d4e157",
                                "#ec407a", "#8d6e63", "#78909c", "#5c6bc0"};

class Page {
public:
    Page(const Report& report, const PageOptions& options) : r_(report), o_(options) {}

    std::string make() {
        out_ << "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\"><title>" << escape(o_.title)
             << "</title>\n<style>" << kStyle << "</style></head>\n<body>\n<h1>" << escape(o_.title) << "</h1>\n";
        if (!o_.subtitle.empty()) out_ << "<p class=\"sub\">" << escape(o_.subtitle) << "</p>\n";
        out_ << "<p class=\"sub\">Drawn by the course's CPU emulator from what it recorded (docs/emulator.md, "
                "\"Pictures of what a kernel did\"). Hover over a figure or a source line to see the other.</p>\n";
        std::vector<std::string> kernels;
        for (const KernelTotals& k : r_.kernels) kernels.push_back(k.kernel);
        if (!r_.pictures.outputs.empty()) {
            out_ << "<p class=\"bad\">" << r_.pictures.outputs.size()
                 << " wrong output(s): <a href=\"#outputs\">drawn at the end</a>.</p>\n";
        }
        out_ << "<p>Kernels: ";
        for (std::size_t i = 0; i < kernels.size(); ++i) {
            out_ << (i ? ", " : "") << "<a href=\"#k" << i << "\">" << escape(kernels[i]) << "</a>";
        }
        if (kernels.empty()) out_ << "none ran instrumented";
        out_ << "</p>\n";
        for (std::size_t i = 0; i < kernels.size(); ++i) kernel_section(i, kernels[i]);
        outputs_section();
        if (skipped_ > 0) {
            out_ << "<p class=\"note\">" << skipped_ << " figure(s) left out to keep this page under "
                 << o_.max_bytes / 1000 << " kB.</p>\n";
        }
        out_ << "<p id=\"page-status\" class=\"note\">page script did not run</p>\n<script>" << kScript
             << "</script>\n</body></html>\n";
        return out_.str();
    }

private:
    bool room() {
        if (static_cast<std::size_t>(out_.tellp()) < o_.max_bytes) return true;
        ++skipped_;
        return false;
    }

    std::string path_of(const std::string& file) const {
        for (const RequestPicture& p : r_.pictures.requests) {
            if (p.where.file == file && !p.path.empty()) return p.path;
        }
        return "";
    }

    void kernel_section(std::size_t k, const std::string& kernel) {
        const std::string id = "k" + std::to_string(k);
        out_ << "<section id=\"" << id << "\">\n<h2>kernel " << escape(kernel) << "</h2>\n";
        const KernelTotals t = r_.totals(kernel);
        out_ << "<p class=\"sub\">" << t.launches << " launch" << (t.launches == 1 ? "" : "es") << "; shared loads "
             << t.shared_load_requests << " requests (" << t.shared_load_conflicts << " extra wavefronts), stores "
             << t.shared_store_requests << " (" << t.shared_store_conflicts << "); global loads "
             << t.global_load_requests << " requests (" << t.global_load_sectors << " sectors), stores "
             << t.global_store_requests << " (" << t.global_store_sectors << ")</p>\n";
        findings(kernel);

        std::vector<const RequestPicture*> pictures;
        for (const RequestPicture& p : r_.pictures.requests) {
            if (p.kernel == kernel) pictures.push_back(&p);
        }
        std::set<std::pair<std::string, int>> with_figure;
        if (!pictures.empty()) {
            out_ << "<h3>Warp access maps</h3>\n<p class=\"note\">Per source line, the worst warp request the "
                    "line made (the first one where it differs: the buttons switch): its lanes, top, against the "
                    "32 banks of shared memory or the 32-byte sectors of global memory (a row of four is one "
                    "128-byte line), bottom.</p>\n";
            for (std::size_t i = 0; i < pictures.size(); ++i) {
                if (!room()) break;
                access_figure(id, i, *pictures[i]);
                with_figure.insert({pictures[i]->where.file, pictures[i]->where.line});
            }
        }
        for (const WriterMap& m : r_.pictures.writers) {
            if (m.kernel == kernel && room()) writer_figure(id, m);
        }
        for (const BarrierTimeline& tl : r_.pictures.timelines) {
            if (tl.kernel == kernel && room()) timeline_figure(id, tl);
        }
        listing(id, pictures);
        out_ << "</section>\n";
    }

    void findings(const std::string& kernel) {
        std::ostringstream list;
        for (const Race& x : r_.races) {
            if (x.kernel != kernel) continue;
            list << "<li class=\"bad\">" << (x.shared ? "shared" : "global") << "-memory race: "
                 << escape(x.first.text()) << " (" << (x.first_writes ? "write" : "read") << ", block "
                 << index3(x.first_block, true, true) << " thread " << index3(x.first_thread, true, true) << ") and "
                 << escape(x.second.text()) << " (" << (x.second_writes ? "write" : "read") << ", block "
                 << index3(x.second_block, true, true) << " thread " << index3(x.second_thread, true, true)
                 << ") with no barrier between them; " << x.count << " time(s)</li>\n";
        }
        for (const UninitialisedRead& u : r_.uninitialised) {
            if (u.kernel != kernel) continue;
            list << "<li class=\"bad\">" << escape(u.where.text()) << ": read of uninitialised "
                 << (u.shared ? "shared" : "global") << " memory; " << u.count << " time(s)</li>\n";
        }
        for (const DivergentLine& d : r_.divergence) {
            if (d.kernel != kernel) continue;
            list << "<li>" << escape(d.where.text()) << ": divergent in " << d.divergent << " of "
                 << d.warp_executions << " warp executions</li>\n";
        }
        const std::string text = list.str();
        if (!text.empty()) out_ << "<ul>\n" << text << "</ul>\n";
    }

    // ---- warp access maps

    void access_figure(const std::string& id, std::size_t i, const RequestPicture& p) {
        const std::string fig = id + "-a" + std::to_string(i);
        const std::string src = id + "-L" + std::to_string(p.where.line);
        out_ << "<div class=\"access\" id=\"" << fig << "\"><div>";
        const bool both = p.first.cost != p.worst.cost || p.first.block.x != p.worst.block.x ||
                          p.first.warp != p.worst.warp;
        if (both) {
            out_ << "<button data-show=\"worst\">worst request</button><button data-show=\"first\">first "
                    "request</button><br>";
        }
        request_svg(p, p.worst, "worst", src, true);
        if (both) request_svg(p, p.first, "first", src, false);
        out_ << "</div><div class=\"src\"><a href=\"#" << src << "\">" << escape(p.where.text()) << "</a>: "
             << (p.shared ? "shared" : "global") << " " << (p.atomic ? "atomic" : p.store ? "store" : "load") << ", "
             << p.requests
             << " warp request" << (p.requests == 1 ? "" : "s");
        if (const std::string* text = sources_.line(p.path, p.where.line)) out_ << "<pre>" << escape(*text) << "</pre>";
        const RequestSample& s = p.worst;
        if (p.atomic) {
            if (s.cost > s.ideal) {
                out_ << "<p class=\"bad\">" << s.cost << "-way contention: " << s.cost << " lanes update words of "
                     << "one bank, and are served one after another where " << s.ideal << " step"
                     << (s.ideal == 1 ? "" : "s") << " would do. Red lanes on one word (one bin) collide however "
                     << "the memory is laid out: an atomic is no broadcast.</p>";
            } else {
                out_ << "<p class=\"good\">no contention: " << s.cost << " step" << (s.cost == 1 ? "" : "s") << "</p>";
            }
        } else if (p.shared) {
            if (s.cost > s.ideal) {
                out_ << "<p class=\"bad\">" << s.cost << "-way bank conflict: " << s.cost
                     << " wavefronts where " << s.ideal << " would do. The red lanes read or write different words "
                     << "of one bank.</p>";
            } else {
                out_ << "<p class=\"good\">conflict-free: " << s.cost << " wavefront" << (s.cost == 1 ? "" : "s")
                     << "</p>";
            }
        } else {
            if (s.cost > s.ideal) {
                out_ << "<p class=\"bad\">uncoalesced: " << s.cost << " sectors touched where " << s.ideal
                     << " would hold the same bytes. The red lanes fetch sectors mostly empty of what they "
                     << "asked for.</p>";
            } else {
                out_ << "<p class=\"good\">coalesced: " << s.cost << " sector" << (s.cost == 1 ? "" : "s")
                     << ", the ideal</p>";
            }
        }
        out_ << "</div></div>\n";
    }

    void request_svg(const RequestPicture& p, const RequestSample& s, const char* which, const std::string& src,
                     bool shown) {
        const double lane_w = 18, left = 40;
        std::ostringstream body;
        std::string flagged_class = p.shared ? "conflict" : "uncoalesced";
        const bool bad = s.cost > s.ideal;
        std::vector<double> lane_x(32);
        for (unsigned l = 0; l < 32; ++l) lane_x[l] = left + l * lane_w;
        std::vector<std::string> lane_class(32, "");
        std::vector<std::vector<double>> wires(32);  // per lane: x of its targets
        double height = 0;
        if (p.shared) {
            // Distinct words per bank. A bank conflicts when it holds more
            // words than the ideal wavefronts (8-byte accesses by 32 lanes are
            // 64 words, 2 to a bank, in the ideal 2 wavefronts: no conflict).
            // Atomics count every lane's word: lanes on one word collide too.
            std::map<unsigned, std::multiset<std::uint64_t>> words;
            for (const LaneAccess& a : s.lanes) {
                for (std::uint64_t w = a.address / 4; w <= (a.address + a.size - 1) / 4; ++w) {
                    if (p.atomic || words[w % 32].count(w) == 0) words[w % 32].insert(w);
                }
            }
            const double bank_y = 90;
            for (unsigned b = 0; b < 32; ++b) {
                const auto it = words.find(b);
                const std::size_t n = it == words.end() ? 0 : it->second.size();
                const char* cls = n == 0 ? "bank" : n > s.ideal ? "bank conflict" : "bank used";
                body << "<rect class=\"" << cls << "\" x=\"" << lane_x[b] << "\" y=\"" << bank_y
                     << "\" width=\"16\" height=\"16\"><title>bank " << b << ": " << n
                     << (p.atomic ? " atomic update" : " distinct word") << (n == 1 ? "" : "s") << "</title></rect>";
                if (n > 1) {
                    body << "<text x=\"" << lane_x[b] + 8 << "\" y=\"" << bank_y + 28 << "\" text-anchor=\"middle\">"
                         << n << "</text>";
                }
            }
            for (const LaneAccess& a : s.lanes) {
                bool conflict = false;
                for (std::uint64_t w = a.address / 4; w <= (a.address + a.size - 1) / 4; ++w) {
                    conflict = conflict || words[w % 32].size() > s.ideal;
                    wires[a.lane].push_back(lane_x[w % 32] + 8);
                }
                lane_class[a.lane] = conflict ? "lane conflict" : "lane";
            }
            body << "<text x=\"4\" y=\"" << bank_y + 12 << "\">bank</text>";
            height = bank_y + 40;
        } else {
            // The 128-byte lines touched, four sectors each, 8 lines to a row.
            std::map<std::uint64_t, unsigned> requested;  // sector -> bytes asked for in it
            std::set<std::uint64_t> lines;
            for (const LaneAccess& a : s.lanes) {
                for (std::uint64_t b = a.address; b < a.address + a.size; ++b) ++requested[b / 32];
                lines.insert(a.address / 128);
                lines.insert((a.address + a.size - 1) / 128);
            }
            std::vector<std::uint64_t> line_list(lines.begin(), lines.end());
            const std::size_t shown_lines = std::min<std::size_t>(line_list.size(), 32);
            std::map<std::uint64_t, double> sector_x;
            const double sector_w = 14, line_gap = 8, top = 90;
            for (std::size_t i = 0; i < shown_lines; ++i) {
                const double x0 = left + (i % 8) * (4 * sector_w + line_gap);
                const double y0 = top + (i / 8) * 30;
                for (unsigned q = 0; q < 4; ++q) {
                    const std::uint64_t sector = line_list[i] * 4 + q;
                    const auto it = requested.find(sector);
                    const char* cls = it == requested.end()       ? "sector"
                                      : it->second < 32 && bad    ? "sector touched partial"
                                                                  : "sector touched";
                    sector_x[sector] = x0 + q * sector_w + sector_w / 2;
                    body << "<rect class=\"" << cls << "\" x=\"" << x0 + q * sector_w << "\" y=\"" << y0
                         << "\" width=\"" << sector_w << "\" height=\"14\"><title>sector " << q << " of line 0x"
                         << std::hex << line_list[i] * 128 << std::dec << ": "
                         << (it == requested.end() ? 0 : it->second) << " of 32 bytes asked for</title></rect>";
                }
            }
            body << "<text x=\"4\" y=\"" << top + 11 << "\">sector</text>";
            if (line_list.size() > shown_lines) {
                body << "<text x=\"" << left << "\" y=\"" << top + 4 * 30 + 10 << "\">(" << line_list.size() - shown_lines
                     << " more lines)</text>";
            }
            height = top + ((shown_lines + 7) / 8) * 30 + 20;
            for (const LaneAccess& a : s.lanes) {
                bool partial = false;
                for (std::uint64_t q = a.address / 32; q <= (a.address + a.size - 1) / 32; ++q) {
                    partial = partial || requested[q] < 32;
                    if (sector_x.count(q)) wires[a.lane].push_back(sector_x[q]);
                }
                lane_class[a.lane] = bad && partial ? "lane uncoalesced" : "lane";
            }
        }
        std::ostringstream lanes;
        for (unsigned l = 0; l < 32; ++l) {
            if (lane_class[l].empty()) {
                lanes << "<rect class=\"idle\" x=\"" << lane_x[l] << "\" y=\"20\" width=\"16\" height=\"16\" "
                      << "fill=\"none\" stroke=\"#ddd\"><title>lane " << l << ": not in this request</title></rect>";
                continue;
            }
            const bool flagged = lane_class[l] != "lane";
            for (double x : wires[l]) {
                lanes << "<line class=\"wire" << (flagged ? " " + flagged_class : "") << "\" x1=\"" << lane_x[l] + 8
                      << "\" y1=\"36\" x2=\"" << x << "\" y2=\"90\"/>";
            }
            const LaneAccess* a = nullptr;
            for (const LaneAccess& x : s.lanes) {
                if (x.lane == l) a = &x;
            }
            lanes << "<rect class=\"" << lane_class[l] << "\" x=\"" << lane_x[l] << "\" y=\"20\" width=\"16\" "
                  << "height=\"16\"><title>lane " << l;
            if (a != nullptr) {
                if (p.shared) lanes << ": word " << a->address / 4 << ", bank " << a->address / 4 % 32;
                else lanes << ": byte 0x" << std::hex << a->address << std::dec << ", sector " << a->address / 32 % 4;
                lanes << ", " << a->size << " bytes";
            }
            lanes << "</title></rect>";
            if (l % 4 == 0) lanes << "<text x=\"" << lane_x[l] + 8 << "\" y=\"16\" text-anchor=\"middle\">" << l << "</text>";
        }
        lanes << "<text x=\"4\" y=\"32\">lane</text>";
        const double width = left + 32 * lane_w + 10;
        out_ << "<svg xmlns=\"http://www.w3.org/2000/svg\" class=\"request\" data-figure=\""
             << (p.atomic ? "atomic" : p.shared ? "shared" : "global")
             << "\" data-kernel=\"" << escape(p.kernel) << "\" data-line=\"" << p.where.line << "\" data-store=\""
             << (p.store ? 1 : 0) << "\" data-sample=\"" << which << "\" data-cost=\"" << s.cost << "\" data-ideal=\""
             << s.ideal << "\" data-src=\"" << src << "\" width=\"" << width << "\" height=\"" << height + 16 << "\""
             << (shown ? "" : " style=\"display:none\"") << ">";
        out_ << "<text class=\"big\" x=\"4\" y=\"" << height + 10 << "\">" << which << " request: block "
             << index3(s.block, true, true) << ", warp " << s.warp << ", " << s.lanes.size() << " lanes: ";
        if (p.atomic) out_ << s.cost << "-way (" << s.cost << " steps, ideal " << s.ideal << ")";
        else if (p.shared && s.cost > s.ideal) out_ << s.cost << "-way (" << s.cost << " wavefronts, ideal " << s.ideal << ")";
        else if (p.shared) out_ << s.cost << " wavefront" << (s.cost == 1 ? "" : "s") << " (ideal " << s.ideal << ")";
        else out_ << s.cost << " sectors (ideal " << s.ideal << ")";
        out_ << "</text>" << lanes.str() << body.str() << "</svg>\n";
    }

    // ---- who wrote what

    void writer_figure(const std::string& id, const WriterMap& m) {
        const bool two_d = m.grid.y > 1 || m.block.y > 1, three_d = m.grid.z > 1 || m.block.z > 1;
        // Up to 16 elements past the last one written (a loop that stops one
        // short shows; the guard elements after a test's output do not fill the figure).
        const std::uint64_t last = m.elements.empty() ? 0 : m.elements.back().index + 1;
        const std::uint64_t count = std::min<std::uint64_t>(
            {m.allocation_bytes / m.element_bytes, last + 16, kMaxDrawn});
        const unsigned per_row = 16;
        const double cw = two_d ? 62 : 44, ch = 30;
        unsigned races = 0, unwritten = 0;
        std::ostringstream cells;
        std::size_t e = 0;
        for (std::uint64_t i = 0; i < count; ++i) {
            const double x = 40 + (i % per_row) * cw, y = 22 + (i / per_row) * ch;
            while (e < m.elements.size() && m.elements[e].index < i) ++e;
            if (e < m.elements.size() && m.elements[e].index == i) {
                const WrittenElement& w = m.elements[e];
                const char* cls = w.race ? "cell race" : w.atomic ? "cell atomic" : "cell";
                races += w.race;
                cells << "<rect class=\"" << cls << "\" x=\"" << x << "\" y=\"" << y << "\" width=\"" << cw - 2
                      << "\" height=\"" << ch - 2 << "\"><title>element " << i << ": last written by block "
                      << index3(w.block, two_d, three_d) << " thread " << index3(w.thread, two_d, three_d) << "; "
                      << w.writers << " writer" << (w.writers == 1 ? "" : "s") << (w.race ? ", a race" : "")
                      << (w.atomic ? ", by atomics" : "") << "</title></rect><text x=\"" << x + 3 << "\" y=\""
                      << y + 11 << "\">b" << index3(w.block, two_d, three_d) << "</text><text x=\"" << x + 3
                      << "\" y=\"" << y + 23 << "\">t" << index3(w.thread, two_d, three_d) << "</text>";
            } else {
                ++unwritten;
                cells << "<rect class=\"cell unwritten\" x=\"" << x << "\" y=\"" << y << "\" width=\"" << cw - 2
                      << "\" height=\"" << ch - 2 << "\"><title>element " << i << ": not written by this launch"
                      << "</title></rect>";
            }
            if (i % per_row == 0) cells << "<text x=\"2\" y=\"" << y + 17 << "\">" << i << "</text>";
        }
        out_ << "<h3 id=\"" << id << "-writers\">Who wrote what: launch " << m.launch << " &lt;&lt;&lt;(" << m.grid.x << "," << m.grid.y << ","
             << m.grid.z << "), (" << m.block.x << "," << m.block.y << "," << m.block.z << ")&gt;&gt;&gt;, a "
             << m.allocation_bytes << "-byte allocation in " << m.element_bytes << "-byte elements</h3>\n";
        out_ << "<p class=\"note\">Each element: the block (b) and thread (t) that wrote it last.";
        if (races > 0) out_ << " <span class=\"bad\">" << races << " element(s) written by two threads with no barrier "
                            << "between them (red): a race.</span>";
        if (unwritten > 0) out_ << " " << unwritten << " element(s) not written by this launch (dashed).";
        if (m.truncated || count < m.allocation_bytes / m.element_bytes) {
            out_ << " (Elements 0 to " << count - 1 << " of the allocation's " << m.allocation_bytes / m.element_bytes
                 << " drawn.)";
        }
        out_ << "</p>\n<svg xmlns=\"http://www.w3.org/2000/svg\" class=\"writers\" data-figure=\"writers\" data-kernel=\""
             << escape(m.kernel) << "\" data-races=\"" << races << "\" data-unwritten=\"" << unwritten << "\" width=\""
             << 44 + per_row * cw << "\" height=\"" << 30 + ((count + per_row - 1) / per_row) * ch << "\">"
             << cells.str() << "</svg>\n";
    }

    // ---- barrier timelines

    void timeline_figure(const std::string& id, const BarrierTimeline& tl) {
        const std::size_t threads = tl.threads.size();
        const bool by_warp = threads > 64;
        const std::size_t rows = by_warp ? (threads + 31) / 32 : threads;
        std::size_t columns = 0;
        for (const auto& t : tl.threads) columns = std::max(columns, t.size());
        const std::size_t shown_columns = std::min<std::size_t>(columns, 48);
        const double cw = 20, rh = by_warp ? 18 : 11, left = 60, top = 20;
        unsigned stuck = 0, parted = 0;
        // Threads of the block that made a c-th arrival: fewer than all means
        // the others exited (or never ran) while these went on or waited.
        std::vector<std::size_t> arrived(shown_columns, 0);
        for (const auto& t : tl.threads) {
            for (std::size_t c = 0; c < std::min(t.size(), shown_columns); ++c) ++arrived[c];
        }
        std::ostringstream marks;
        for (std::size_t row = 0; row < rows; ++row) {
            const double y = top + row * rh;
            marks << "<rect class=\"row\" x=\"" << left << "\" y=\"" << y << "\" width=\"" << shown_columns * cw
                  << "\" height=\"" << rh - 1 << "\"/><text x=\"2\" y=\"" << y + rh - 3 << "\">"
                  << (by_warp ? "warp " : "t") << row << "</text>";
            const std::size_t from = by_warp ? row * 32 : row, to = by_warp ? std::min(threads, row * 32 + 32) : row + 1;
            for (std::size_t c = 0; c < shown_columns; ++c) {
                // The arrivals of this row's threads at their c-th sync, and of the whole block.
                std::map<std::pair<unsigned, unsigned>, unsigned> here;  // (line, kind) -> threads
                unsigned missing = 0, waiting = 0;
                for (std::size_t t = from; t < to; ++t) {
                    if (c >= tl.threads[t].size()) {
                        ++missing;
                        continue;
                    }
                    const SyncMark& m = tl.threads[t][c];
                    ++here[{m.line, m.kind}];
                    waiting += !m.released;
                }
                if (here.empty()) continue;
                const auto top_line = std::max_element(here.begin(), here.end(), [](const auto& a, const auto& b) {
                    return a.second < b.second;
                })->first;
                // Parted: this row's threads went different ways, or differ from the block's majority here.
                bool split = here.size() > 1 || (missing > 0 && by_warp) || arrived[c] < threads;
                if (!split) split = top_line != majority(tl, c);
                const char* kind = top_line.second == 0 ? "barrier" : top_line.second == 1 ? "warp" : "grid";
                std::string cls = std::string("mark ") + kind + (waiting > 0 ? " stuck" : "") + (split ? " parted" : "");
                stuck += waiting > 0;
                parted += split;
                const SourceLine& where = tl.lines[top_line.first];
                const double x = left + c * cw;
                const char* fill = kPalette[top_line.first % (sizeof kPalette / sizeof *kPalette)];
                if (top_line.second == 0) {
                    marks << "<rect class=\"" << cls << "\" x=\"" << x + 3 << "\" y=\"" << y << "\" width=\"14\" height=\""
                          << rh - 2 << "\" fill=\"" << fill << "\">";
                } else {
                    marks << "<circle class=\"" << cls << "\" cx=\"" << x + 10 << "\" cy=\"" << y + rh / 2 - 0.5
                          << "\" r=\"" << (rh - 2) / 2 << "\" fill=\"" << fill << "\">";
                }
                marks << "<title>" << (by_warp ? "warp " : "thread ") << row << ", sync " << c + 1 << ": " << kind
                      << " at " << escape(where.text());
                if (here.size() > 1) marks << " (lanes at " << here.size() << " different places)";
                if (missing > 0 && by_warp) marks << " (" << missing << " lanes never got here)";
                if (arrived[c] < threads) marks << " (" << threads - arrived[c] << " threads of the block never got here)";
                if (waiting > 0) marks << "; " << waiting << " still waiting when the block ended";
                marks << "</title>" << (top_line.second == 0 ? "</rect>" : "</circle>");
            }
        }
        const bool two_d = tl.block_dim.y > 1 || tl.block_dim.z > 1;
        out_ << "<h3 id=\"" << id << "-timeline\">Barrier timeline: block " << index3(tl.block, true, true) << " (" << threads << " threads"
             << (two_d ? ", rows by linear thread index" : "") << ")</h3>\n<p class=\"note\">Each row a "
             << (by_warp ? "warp" : "thread") << ", each column its next arrival: squares __syncthreads(), "
             << "circles warp collectives, coloured by source line (";
        for (std::size_t i = 0; i < tl.lines.size(); ++i) {
            out_ << (i ? ", " : "") << "<span style=\"color:" << kPalette[i % (sizeof kPalette / sizeof *kPalette)]
                 << "\">&#9632;</span> " << escape(tl.lines[i].text());
        }
        out_ << ").";
        if (stuck > 0) out_ << " <span class=\"bad\">Red-rimmed marks: threads still waiting there when the block "
                            << "stopped (barrier divergence or deadlock).</span>";
        if (parted > 0) out_ << " <span class=\"bad\">Orange-rimmed marks: where threads parted (different barriers "
                             << "at the same step, or some never arrived).</span>";
        if (columns > shown_columns) out_ << " (First " << shown_columns << " of " << columns << " steps.)";
        out_ << "</p>\n<svg xmlns=\"http://www.w3.org/2000/svg\" class=\"timeline\" data-figure=\"timeline\" "
             << "data-kernel=\"" << escape(tl.kernel) << "\" data-stuck=\"" << stuck << "\" data-parted=\"" << parted
             << "\" width=\"" << left + shown_columns * cw + 10 << "\" height=\"" << top + rows * rh + 10 << "\">"
             << "<text x=\"" << left << "\" y=\"12\">sync 1 &#8594;</text>" << marks.str() << "</svg>\n";
    }

    // The (line, kind) most threads of the block reached at their c-th sync.
    static std::pair<unsigned, unsigned> majority(const BarrierTimeline& tl, std::size_t c) {
        std::map<std::pair<unsigned, unsigned>, unsigned> count;
        for (const auto& t : tl.threads) {
            if (c < t.size()) ++count[{t[c].line, t[c].kind}];
        }
        return std::max_element(count.begin(), count.end(), [](const auto& a, const auto& b) {
            return a.second < b.second;
        })->first;
    }

    // ---- the source lines of a kernel's figures

    void listing(const std::string& id, const std::vector<const RequestPicture*>& pictures) {
        std::map<std::string, std::set<int>> lines;  // path -> lines with a figure
        for (const RequestPicture* p : pictures) {
            if (!p->path.empty()) lines[p->path].insert(p->where.line);
        }
        for (const auto& [path, marked] : lines) {
            const int from = std::max(1, *marked.begin() - 2), to = std::min(*marked.rbegin() + 2, from + 80);
            const std::string file = path.substr(path.rfind('/') == std::string::npos ? 0 : path.rfind('/') + 1);
            out_ << "<h3>Source: " << escape(file) << "</h3>\n<div class=\"listing\">";
            for (int l = from; l <= to; ++l) {
                const std::string* text = sources_.line(path, l);
                if (text == nullptr) break;
                if (marked.count(l)) {
                    // The first figure of this line: lines of one kernel in two files share ids
                    // only when their numbers do, and then link to the first.
                    std::size_t fig = 0;
                    for (std::size_t i = 0; i < pictures.size(); ++i) {
                        if (pictures[i]->where.line == l) {
                            fig = i;
                            break;
                        }
                    }
                    out_ << "<div class=\"has\" id=\"" << id << "-L" << l << "\"><a href=\"#" << id << "-a" << fig
                         << "\" title=\"its figure\">" << l << "&#9656;</a> " << escape(*text) << "</div>";
                } else {
                    out_ << "<div>" << l << "  " << escape(*text) << "</div>";
                }
            }
            out_ << "</div>\n";
        }
    }

    // ---- wrong outputs

    void outputs_section() {
        if (r_.pictures.outputs.empty()) return;
        out_ << "<section id=\"outputs\">\n<h2>Wrong outputs</h2>\n<p class=\"note\">Each output a test found wrong, "
                "as the test's comparison saw it: <span class=\"legend\"><span style=\"background:#c8e6c9\"></span>right"
                "<span style=\"background:#fff59d\"></span>off by under 0.1%<span style=\"background:#ffcc80\"></span>"
                "under 10%<span style=\"background:#ff7043\"></span>under 10x<span style=\"background:#b71c1c\"></span>"
                "more, or NaN<span style=\"background:#9e9e9e\"></span>never written (still the poison)</span>. "
                "Long outputs are drawn a cell per range, coloured by its worst element.</p>\n";
        for (const show::ComparedOutput& o : r_.pictures.outputs) {
            if (!room()) break;
            output_figure(o);
        }
        out_ << "</section>\n";
    }

    static int severity(double e, double g) {
        if (!std::isfinite(g) || !std::isfinite(e)) return 4;
        const double rel = std::fabs(g - e) / std::max(std::fabs(e), 1e-30);
        return rel < 1e-3 ? 1 : rel < 0.1 ? 2 : rel < 10 ? 3 : 4;
    }

    void output_figure(const show::ComparedOutput& o) {
        const std::size_t n = o.got.size();
        const bool grid = o.columns > 0 && n % o.columns == 0 && n / o.columns > 1;
        const std::size_t cols = grid ? o.columns : std::min<std::size_t>(n, 64);
        const std::size_t rows = grid ? n / o.columns : (n + 63) / 64;
        // At most 32 x 32 cells (a strip: 64 x 16): a cell stands for a range of rows and columns.
        const std::size_t most_c = grid ? 32 : 64, most_r = grid ? 32 : 16;
        const std::size_t step_c = (cols + most_c - 1) / most_c, step_r = (rows + most_r - 1) / most_r;
        const std::size_t cells_c = (cols + step_c - 1) / std::max<std::size_t>(step_c, 1);
        const std::size_t cells_r = (rows + step_r - 1) / std::max<std::size_t>(step_r, 1);
        const double cs = std::max(8.0, std::min(16.0, 640.0 / static_cast<double>(std::max(cells_c, cells_r))));
        std::size_t wrong = 0, untouched = 0;
        std::vector<std::size_t> first_wrong;
        for (std::size_t i = 0; i < n; ++i) {
            if (o.state[i] == show::kRight) continue;
            ++(o.state[i] == show::kUntouched ? untouched : wrong);
            if (first_wrong.size() < 5) first_wrong.push_back(i);
        }
        std::ostringstream cells;
        for (std::size_t r = 0; r < cells_r; ++r) {
            // A run of cells of one class in a row is one rectangle, its title the run's first wrong element.
            int run_class = -1;
            std::size_t run_from = 0, run_i = 0;
            auto flush = [&](std::size_t c_end) {
                if (run_class >= 0) {
                    cells << "<rect class=\"out "
                          << (run_class == 0 ? std::string("right")
                              : run_class == 5 ? std::string("untouched")
                                               : "wrong sev" + std::to_string(run_class))
                          << "\" x=\"" << 50 + run_from * cs << "\" y=\"" << 20 + r * cs << "\" width=\""
                          << (c_end - run_from) * cs << "\" height=\"" << cs << "\"";
                    if (run_class == 0) {
                        cells << "/>";
                    } else {
                        cells << "><title>" << escape(o.name) << "[" << run_i << "]";
                        if (grid) cells << " (row " << run_i / o.columns << ", column " << run_i % o.columns << ")";
                        cells << ": expected " << number(o.expected[run_i]) << ", got " << number(o.got[run_i])
                              << (run_class == 5 ? " (never written)" : "");
                        if (c_end - run_from > 1 || step_c > 1 || step_r > 1) cells << ", and more like it to the right";
                        cells << "</title></rect>";
                    }
                }
                run_class = -1;
            };
            for (std::size_t c = 0; c < cells_c; ++c) {
                int worst = 0;  // 0 right, 1-4 severity, 5 untouched
                std::size_t worst_i = 0;
                for (std::size_t rr = r * step_r; rr < std::min(rows, (r + 1) * step_r); ++rr) {
                    for (std::size_t cc = c * step_c; cc < std::min(cols, (c + 1) * step_c); ++cc) {
                        const std::size_t i = rr * cols + cc;
                        if (i >= n || o.state[i] == show::kRight) continue;
                        const int s = o.state[i] == show::kUntouched ? 5 : severity(o.expected[i], o.got[i]);
                        if (s > worst) {
                            worst = s;
                            worst_i = i;
                        }
                    }
                }
                if (r * step_r * cols + c * step_c >= n) break;  // past the end of a strip
                if (worst != run_class) {
                    flush(c);
                    run_class = worst;
                    run_from = c;
                    run_i = worst_i;
                }
            }
            flush(std::min(cells_c, (n - r * step_r * cols + step_c - 1) / step_c));
            if (r % 8 == 0) {
                cells << "<text x=\"2\" y=\"" << 20 + r * cs + cs - 1 << "\">"
                      << (grid ? "row " : "") << r * step_r * (grid ? 1 : cols) << "</text>";
            }
        }
        // Labels of the first wrong elements, under the figure.
        const double below = 20 + cells_r * cs + 14;
        std::ostringstream labels;
        for (std::size_t k = 0; k < first_wrong.size(); ++k) {
            const std::size_t i = first_wrong[k];
            const std::size_t rr = i / cols / step_r, cc = (i % cols) / step_c;
            const double x = 50 + cc * cs + cs / 2, y = 20 + rr * cs + cs / 2;
            labels << "<circle class=\"label\" cx=\"" << x << "\" cy=\"" << y << "\" r=\"2\" fill=\"#000\"/>"
                   << "<text class=\"label\" x=\"4\" y=\"" << below + k * 13 << "\">" << escape(o.name) << "[" << i << "]";
            if (grid) labels << " (row " << i / o.columns << ", column " << i % o.columns << ")";
            labels << ": expected " << number(o.expected[i]) << ", got " << number(o.got[i])
                   << (o.state[i] == show::kUntouched ? " (never written)" : "") << "</text>";
        }
        out_ << "<h3>" << escape(o.name) << " in test \"" << escape(o.test) << "\"</h3>\n<p class=\"note\">" << n
             << " elements" << (grid ? " (" + std::to_string(rows) + " x " + std::to_string(o.columns) + ")" : "")
             << ": " << wrong << " wrong, " << untouched << " never written";
        if (step_c > 1 || step_r > 1) out_ << "; a cell is " << step_r << " x " << step_c << " elements";
        out_ << ".</p>\n<svg xmlns=\"http://www.w3.org/2000/svg\" class=\"output\" data-figure=\"output\" data-name=\""
             << escape(o.name) << "\" data-wrong=\"" << wrong << "\" data-untouched=\"" << untouched << "\" width=\""
             << std::max(60 + cells_c * cs, 520.0) << "\" height=\"" << below + first_wrong.size() * 13 + 6 << "\">"
             << cells.str() << labels.str() << "</svg>\n";
    }

    static constexpr std::uint64_t kMaxDrawn = 512;  // elements of a writer map drawn

    const Report& r_;
    const PageOptions& o_;
    std::ostringstream out_;
    Sources sources_;
    std::size_t skipped_ = 0;
};

}  // namespace

std::string html_page(const Report& report, const PageOptions& options) { return Page(report, options).make(); }

}  // namespace course_emu::analysis
