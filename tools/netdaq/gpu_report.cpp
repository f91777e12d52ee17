// The GPU part of `netdaq run`'s summary: what each rx queue's frame pipeline made of its
// packets (frames complete and incomplete, every packet accounted for, bytes to the GPU).
// The span-mode counters (control, no_stream, bytes_missing) show in the text only when
// non-zero, so a sequence-mode line reads as it always did; the JSON always has them.
#include "gpu_report.h"

#include <string>

#include "report.h"

namespace netdaq::cli {

void print_gpu_summary(std::FILE* out, const TrafficResult& r) {
  for (const auto& g : r.gpu) {
    const auto& s = g.stats;
    const double gbytes = g.seconds > 0 ? double(s.bytes_to_gpu) / g.seconds / 1e9 : 0;
    // Span modes count missing input bytes, slot modes missing packets (the other stays 0).
    std::string missing = format_count(s.packets_missing) + " packets missing";
    if (s.bytes_missing != 0) {
      missing = format_count(s.bytes_missing) + " bytes missing";
      if (s.packets_missing != 0) missing += ", " + format_count(s.packets_missing) + " packets";
    }
    const std::string why = g.malformed_reason.empty() ? "" : " (last: " + g.malformed_reason + ")";
    std::string span_results;
    if (s.control != 0) span_results += ", " + format_count(s.control) + " control";
    if (s.no_stream != 0) span_results += ", " + format_count(s.no_stream) + " no stream";
    std::fprintf(out,
                 "  gpu %s: frames %s complete, %s incomplete (%s, zero-filled), %s skipped, "
                 "%s dropped; packets %s in, %s placed, %s duplicate, %s late, %s malformed%s, %s no buffer%s; "
                 "%.2f GB/s to GPU in %s jobs (%s waits, %s GPU errors)\n",
                 g.queue.c_str(), format_count(s.frames_complete).c_str(), format_count(s.frames_incomplete).c_str(),
                 missing.c_str(), format_count(s.frames_skipped).c_str(), format_count(s.frames_dropped).c_str(),
                 format_count(s.packets_in).c_str(), format_count(s.packets_placed).c_str(),
                 format_count(s.duplicate).c_str(), format_count(s.late).c_str(), format_count(s.malformed).c_str(),
                 why.c_str(), format_count(s.no_buffer).c_str(), span_results.c_str(), gbytes, format_count(s.jobs).c_str(),
                 format_count(s.waits).c_str(), format_count(s.gpu_errors).c_str());
  }
  std::fflush(out);
}

nlohmann::ordered_json gpu_json(const TrafficResult& r) {
  auto arr = nlohmann::ordered_json::array();
  for (const auto& g : r.gpu) {
    const auto& s = g.stats;
    arr.push_back({{"rx_queue", g.queue},
                   {"frames_out", g.frames_out},
                   {"frames_complete", s.frames_complete},
                   {"frames_incomplete", s.frames_incomplete},
                   {"frames_skipped", s.frames_skipped},
                   {"frames_dropped", s.frames_dropped},
                   {"packets_in", s.packets_in},
                   {"packets_placed", s.packets_placed},
                   {"packets_missing", s.packets_missing},
                   {"bytes_missing", s.bytes_missing},
                   {"duplicate", s.duplicate},
                   {"late", s.late},
                   {"malformed", s.malformed},
                   {"no_buffer", s.no_buffer},
                   {"control", s.control},
                   {"no_stream", s.no_stream},
                   {"malformed_reason", g.malformed_reason},
                   {"bytes_to_gpu", s.bytes_to_gpu},
                   {"jobs", s.jobs},
                   {"waits", s.waits},
                   {"gpu_errors", s.gpu_errors},
                   {"seconds", g.seconds}});
  }
  return arr;
}

}  // namespace netdaq::cli
