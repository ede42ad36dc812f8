// The analysis's Report (course_emu/analysis.hpp): the questions tests ask
// of it, and its text and CSV forms. What fills it is the recorder
// (recorder.cpp); what draws it, ./course show's page (page.cpp).
#include <course_emu/analysis.hpp>

#include "recorder.hpp"

#include <course_emu/detail/coordinates.hpp>

#include <sstream>
#include <string>

namespace course_emu::analysis {

KernelTotals Report::totals(std::string_view kernel) const {
    for (const KernelTotals& t : kernels) {
        if (t.kernel == kernel) return t;
    }
    return KernelTotals{std::string(kernel)};
}

SharedAccess Report::shared_of(std::string_view kernel, bool store) const {
    SharedAccess all{{std::string(kernel), {}, store}};
    for (const SharedAccess& s : shared) {
        if (s.kernel != kernel || s.store != store) continue;
        all.where = s.where;
        all.requests += s.requests;
        all.wavefronts += s.wavefronts;
        all.ideal_wavefronts += s.ideal_wavefronts;
        all.max_degree = std::max(all.max_degree, s.max_degree);
        all.partial_requests += s.partial_requests;
    }
    return all;
}

GlobalAccess Report::global_of(std::string_view kernel, bool store) const {
    GlobalAccess all{{std::string(kernel), {}, store}};
    for (const GlobalAccess& g : global) {
        if (g.kernel != kernel || g.store != store) continue;
        all.where = g.where;
        all.requests += g.requests;
        all.sectors += g.sectors;
        all.ideal_sectors += g.ideal_sectors;
        all.partial_requests += g.partial_requests;
    }
    return all;
}

DivergentLine Report::divergence_at(std::string_view kernel, int line) const {
    for (const DivergentLine& d : divergence) {
        if (d.kernel == kernel && d.where.line == line) return d;
    }
    return DivergentLine{std::string(kernel), {"", line}};
}

std::string Report::text() const {
    std::ostringstream out;
    char buffer[512];
    for (const KernelTotals& k : kernels) {
        out << "kernel " << k.kernel << " (" << k.launches << " launch" << (k.launches == 1 ? "" : "es") << ")\n";
        for (const SharedAccess& s : shared) {
            if (s.kernel != k.kernel) continue;
            // Conflict-free means no wavefront beyond the ideal: a warp's
            // 8-byte accesses need 2 wavefronts even without a conflict.
            char degree[64];
            if (s.conflicts() > 0) {
                std::snprintf(degree, sizeof degree, "worst %u-way bank conflict", s.max_degree);
            } else {
                std::snprintf(degree, sizeof degree, "conflict-free");
            }
            std::snprintf(buffer, sizeof buffer,
                          "  %s: shared %-5s %8llu requests, %5.2f wavefronts/request (ideal %4.2f), %s",
                          s.where.text().c_str(), s.store ? "store" : "load", s.requests,
                          s.requests ? double(s.wavefronts) / double(s.requests) : 0.0,
                          s.requests ? double(s.ideal_wavefronts) / double(s.requests) : 0.0, degree);
            out << buffer;
            if (s.partial_requests > 0) out << "; " << s.partial_requests << " by part of a warp (divergence)";
            out << "\n";
        }
        for (const GlobalAccess& g : global) {
            if (g.kernel != k.kernel) continue;
            std::snprintf(buffer, sizeof buffer, "  %s: global %-5s %8llu requests, %5.2f sectors/request (ideal %4.2f)",
                          g.where.text().c_str(), g.store ? "store" : "load", g.requests, g.sectors_per_request(),
                          g.requests ? double(g.ideal_sectors) / double(g.requests) : 0.0);
            out << buffer;
            if (g.sectors > g.ideal_sectors) out << " uncoalesced";
            if (g.partial_requests > 0) out << "; " << g.partial_requests << " by part of a warp (divergence)";
            out << "\n";
        }
        for (const DivergentLine& d : divergence) {
            if (d.kernel != k.kernel) continue;
            out << "  " << d.where.text() << ": divergent in " << d.divergent << " of " << d.warp_executions
                << " warp execution" << (d.warp_executions == 1 ? "" : "s") << ", ";
            if (d.min_lanes == d.max_lanes) out << d.min_lanes;
            else out << d.min_lanes << " to " << d.max_lanes;
            out << " of " << d.warp_lanes << " lanes take it\n";
        }
        for (const Race& x : races) {
            if (x.kernel != k.kernel) continue;
            out << "  " << (x.shared ? "shared" : "global") << "-memory race: " << x.first.text() << " ("
                << (x.first_writes ? "write" : "read") << ", block " << detail::format_index(x.first_block) << " thread "
                << detail::format_index(x.first_thread) << ") and " << x.second.text() << " ("
                << (x.second_writes ? "write" : "read") << ", block " << detail::format_index(x.second_block) << " thread "
                << detail::format_index(x.second_thread) << ") with no barrier between them; " << x.count << " time(s)\n";
        }
        for (const UninitialisedRead& u : uninitialised) {
            if (u.kernel != k.kernel) continue;
            out << "  " << u.where.text() << ": read of uninitialised " << (u.shared ? "shared" : "global")
                << " memory (block " << detail::format_index(u.block)
                << " thread " << detail::format_index(u.thread) << " first); " << u.count << " time(s)\n";
        }
    }
    if (truncated_blocks > 0) {
        out << "note: " << truncated_blocks << " block(s) made more than " << kMaxBlockAccesses
            << " accesses; only the first were grouped into warp requests\n";
    }
    return out.str();
}

std::string Report::csv() const {
    std::string out =
        "kernel,launches,shared_ld_requests,shared_ld_bank_conflicts,shared_st_requests,shared_st_bank_conflicts,"
        "global_ld_requests,global_ld_sectors,global_st_requests,global_st_sectors,divergent_splits\n";
    for (const KernelTotals& k : kernels) {
        out += k.kernel + "," + std::to_string(k.launches) + "," + std::to_string(k.shared_load_requests) + "," +
               std::to_string(k.shared_load_conflicts) + "," + std::to_string(k.shared_store_requests) + "," +
               std::to_string(k.shared_store_conflicts) + "," + std::to_string(k.global_load_requests) + "," +
               std::to_string(k.global_load_sectors) + "," + std::to_string(k.global_store_requests) + "," +
               std::to_string(k.global_store_sectors) + "," + std::to_string(k.divergent_splits) + "\n";
    }
    return out;
}

}  // namespace course_emu::analysis
