// netdaq.Config (load, from_yaml; from_dict is in __init__.py), netdaq.validate and
// netdaq.ReorderConfig (the rx.reorder block a gpu.FramePipeline takes).

#include <cstdio>
#include <filesystem>

#include "bindings.h"
#include "netdaq/video.h"

namespace netdaq::python {
namespace {

// Parses `text` into one of E's values 0..last by their to_string names; ValueError otherwise.
template <class E>
E parse_enum(const char* key, const std::string& text, E last) {
  std::string allowed;
  for (int v = 0; v <= static_cast<int>(last); ++v) {
    const char* name = to_string(static_cast<E>(v));
    if (text == name) return static_cast<E>(v);
    allowed += (v ? ", " : "") + std::string(name);
  }
  throw py::value_error(std::string(key) + " = '" + text + "': allowed are " + allowed);
}

// A read/write property held as an enum, seen from Python as its name.
template <class C, class E>
void enum_property(py::class_<C>& c, const char* key, E C::*member, E last) {
  c.def_property(
      key, [member](const C& r) { return std::string(to_string(r.*member)); },
      [key, member, last](C& r, const std::string& v) { r.*member = parse_enum(key, v, last); });
}

// A T{} with each keyword set as its attribute, so a dict and keywords read alike (TypeError
// naming an unknown key).
template <class T>
T from_keys(const char* cls, const py::dict& kw) {
  py::object o = py::cast(T{});
  for (auto [k, v] : kw) {
    if (!py::hasattr(o, k))
      throw py::type_error(std::string(cls) + " has no key '" + py::str(k).cast<std::string>() + "'");
    o.attr(k) = v;
  }
  return o.cast<T>();
}

// A nested block (fields, spead, vita49, fields.frame, ...): read in place
// (cfg.fields.frame.offset = 4 changes cfg), set from its object or a dict of its keys.
template <class C, class T>
void block_property(py::class_<C>& c, const char* key, T C::*member, const char* cls) {
  c.def_property(
      key, [member](C& r) -> T& { return r.*member; },
      [member, cls](C& r, const py::object& v) {
        r.*member = py::isinstance<py::dict>(v) ? from_keys<T>(cls, v.cast<py::dict>()) : v.cast<T>();
      });
}

// The `name` of every entry of a config list (interfaces, memory_regions).
template <class T>
std::vector<std::string> names_of(const std::vector<T>& list) {
  std::vector<std::string> names;
  for (const auto& e : list) names.push_back(e.name);
  return names;
}

}  // namespace

const ReorderConfig& reorder_entry(const Config& c, const std::string& iface, size_t index) {
  const InterfaceConfig* i = c.find_interface(iface);
  if (!i) throw Error(Errc::not_found, "no interface '" + iface + "' in " + c.source);
  if (index >= i->rx.reorder.size())
    throw Error(Errc::not_found, "interface '" + iface + "' has " + std::to_string(i->rx.reorder.size()) +
                                     " rx.reorder entries; asked for index " + std::to_string(index));
  return i->rx.reorder[index];
}

void bind_config(py::module_& m) {
  py::class_<Config>(m, "Config", "A validated netdaq configuration (docs/config.md).")
      .def_static("load", [](const std::filesystem::path& p) { return Config::load(p.string()); }, py::arg("path"),
                  "Reads and validates a YAML file; raises ConfigError with every issue.")
      .def_static("from_yaml", &Config::parse, py::arg("text"), py::arg("source") = "<string>",
                  "Parses and validates YAML text; `source` names it in messages.")
      .def("validate", &Config::validate, "Every issue (empty when valid); does not touch the system.")
      .def_readonly("source", &Config::source)
      .def_property_readonly("interfaces", [](const Config& c) { return names_of(c.interfaces); })
      .def_property_readonly("memory_regions", [](const Config& c) { return names_of(c.memory_regions); })
      .def("reorder", &reorder_entry, py::arg("interface"), py::arg("index") = 0,
           "A copy of an interface's rx.reorder entry.")
      .def("__repr__", [](const Config& c) {
        return "<netdaq.Config from " + c.source + ": " + std::to_string(c.interfaces.size()) + " interfaces>";
      });

  m.def(
      "validate",
      [](const std::filesystem::path& p) -> std::vector<ConfigIssue> {
        try {
          Config::load(p.string());
          return {};
        } catch (const ConfigError& e) {
          return e.issues();
        }
      },
      py::arg("path"), "Every issue of a config file (empty when valid), as `netdaq validate` prints them.");

  // The decoder blocks of the span modes (docs/gpu.md, "Frames from the sensor's headers").
  py::class_<PacketField> pf(m, "PacketField",
                             "A header field of rx.reorder.fields: (value of `bits` at `offset`) >> shift & mask.");
  pf.def(py::init([](const py::kwargs& kw) { return from_keys<PacketField>("PacketField", kw); }),
         "PacketField(offset=0, bits=32, byte_order='little', shift=0, mask=0xFFFF); bits 0: not declared.")
      .def_readwrite("offset", &PacketField::offset)
      .def_readwrite("bits", &PacketField::bits)
      .def_readwrite("shift", &PacketField::shift)
      .def_readwrite("mask", &PacketField::mask)
      .def_property_readonly("declared", &PacketField::declared);
  enum_property(pf, "byte_order", &PacketField::byte_order, ByteOrder::big);
  pf.def("__repr__", [](const PacketField& f) {
    if (!f.declared()) return std::string("<netdaq.PacketField not declared>");
    char mask[32];
    std::snprintf(mask, sizeof mask, "%#llx", static_cast<unsigned long long>(f.mask));
    return "<netdaq.PacketField offset " + std::to_string(f.offset) + ", " + std::to_string(f.bits) + " bits " +
           to_string(f.byte_order) + ", shift " + std::to_string(f.shift) + ", mask " + mask + ">";
  });

  py::class_<FieldPlacement> fp(m, "FieldPlacement", "rx.reorder.fields: the header fields of mode 'fields'.");
  fp.def(py::init([](const py::kwargs& kw) { return from_keys<FieldPlacement>("FieldPlacement", kw); }),
         "FieldPlacement(frame={...}, index={...}, ...): each a PacketField or a dict of its keys.");
  block_property(fp, "frame", &FieldPlacement::frame, "PacketField");
  block_property(fp, "index", &FieldPlacement::index, "PacketField");
  block_property(fp, "byte_offset", &FieldPlacement::byte_offset, "PacketField");
  block_property(fp, "stream", &FieldPlacement::stream, "PacketField");
  block_property(fp, "marker", &FieldPlacement::marker, "PacketField");
  block_property(fp, "timestamp", &FieldPlacement::timestamp, "PacketField");

  py::class_<SpeadOptions>(m, "SpeadOptions", "rx.reorder.spead: options of mode 'spead'.")
      .def(py::init([](const py::kwargs& kw) { return from_keys<SpeadOptions>("SpeadOptions", kw); }))
      .def_readwrite("stream_item", &SpeadOptions::stream_item);

  py::class_<Vita49Options>(m, "Vita49Options", "rx.reorder.vita49: options of mode 'vita49'.")
      .def(py::init([](const py::kwargs& kw) { return from_keys<Vita49Options>("Vita49Options", kw); }))
      .def_readwrite("samples_per_frame", &Vita49Options::samples_per_frame)
      .def_readwrite("sample_bytes", &Vita49Options::sample_bytes)
      .def_readwrite("sample_rate", &Vita49Options::sample_rate);

  // Mode roce (docs/roce-software.md): one RoceQueuePair per sensor, as the rdma engine's
  // peer file declares it.
  py::class_<RoceQueuePair>(m, "RoceQueuePair", "rx.reorder.roce.queue_pairs[]: one sensor's queue pair.")
      .def(py::init([](const py::kwargs& kw) { return from_keys<RoceQueuePair>("RoceQueuePair", kw); }),
           "RoceQueuePair(qpn=0x100, rkey=0x1234, base_va=..., slots=2, stride=0, slot_size=4194304, psn=0).")
      .def_readwrite("qpn", &RoceQueuePair::qpn)
      .def_readwrite("rkey", &RoceQueuePair::rkey)
      .def_readwrite("base_va", &RoceQueuePair::base_va)
      .def_readwrite("slots", &RoceQueuePair::slots)
      .def_readwrite("stride", &RoceQueuePair::stride)
      .def_readwrite("slot_size", &RoceQueuePair::slot_size)
      .def_readwrite("psn", &RoceQueuePair::psn)
      .def("__repr__", [](const RoceQueuePair& q) {
        char s[160];
        std::snprintf(s, sizeof s, "<netdaq.RoceQueuePair qpn %#x, rkey %#x, base_va %#llx, %u x %llu B>", q.qpn,
                      q.rkey, static_cast<unsigned long long>(q.base_va), q.slots,
                      static_cast<unsigned long long>(q.slot_size));
        return std::string(s);
      });

  py::class_<RoceOptions> ro(m, "RoceOptions", "rx.reorder.roce: options of mode 'roce'.");
  ro.def(py::init([](const py::kwargs& kw) { return from_keys<RoceOptions>("RoceOptions", kw); }),
         "RoceOptions(queue_pairs=[{...}], check_icrc=True, mtu=1024, metadata_bytes=0, psn_window=1024).")
      .def_readwrite("check_icrc", &RoceOptions::check_icrc)
      .def_readwrite("mtu", &RoceOptions::mtu)
      .def_readwrite("metadata_bytes", &RoceOptions::metadata_bytes)
      .def_readwrite("psn_window", &RoceOptions::psn_window);
  // queue_pairs: the entries themselves (opts.queue_pairs[0].rkey = 5 changes opts); set from a
  // list of RoceQueuePair or of dicts of their keys. A new entry is a new list (append is lost).
  ro.def_property(
      "queue_pairs",
      [](py::object self) {
        auto& o = self.cast<RoceOptions&>();
        py::list l;
        for (auto& qp : o.queue_pairs) l.append(py::cast(&qp, py::return_value_policy::reference_internal, self));
        return l;
      },
      [](RoceOptions& o, const py::iterable& items) {
        std::vector<RoceQueuePair> qps;
        for (auto item : items)
          qps.push_back(py::isinstance<py::dict>(item)
                            ? from_keys<RoceQueuePair>("RoceQueuePair", item.cast<py::dict>())
                            : item.cast<RoceQueuePair>());
        o.queue_pairs = std::move(qps);
      });

  // Mode rtp_video (docs/video.md): the stream's SDP format parameters.
  py::class_<VideoOptions> vo(m, "VideoOptions", "rx.reorder.video: the SDP format parameters of mode 'rtp_video'.");
  vo.def(py::init([](const py::kwargs& kw) { return from_keys<VideoOptions>("VideoOptions", kw); }),
         "VideoOptions(width=1920, height=1080, sampling='YCbCr-4:2:2', depth=10, exactframerate='60000/1001', "
         "interlaced=False, rows='field', payload_type=96, unpack='none').")
      .def_readwrite("width", &VideoOptions::width)
      .def_readwrite("height", &VideoOptions::height)
      .def_readwrite("depth", &VideoOptions::depth)
      .def_readwrite("interlaced", &VideoOptions::interlaced)
      .def_readwrite("rate_num", &VideoOptions::rate_num)
      .def_readwrite("rate_den", &VideoOptions::rate_den)
      .def_readwrite("payload_type", &VideoOptions::payload_type, "RTP payload type 0..127; -1: any");
  enum_property(vo, "sampling", &VideoOptions::sampling, VideoSampling::rgb);
  enum_property(vo, "unpack", &VideoOptions::unpack, VideoUnpack::fp16);
  // Interlaced: 'field' (ST 2110-20, rows within the field) or 'frame' (GStreamer's rtpvrawpay).
  enum_property(vo, "rows", &VideoOptions::rows, VideoRows::frame);
  // exactframerate as SDP writes it: 50 or "60000/1001" (sets rate_num and rate_den).
  vo.def_property(
      "exactframerate", [](const VideoOptions& v) { return exactframerate_text(v); },
      [](VideoOptions& v, const py::object& rate) {
        const std::string text = py::str(rate).cast<std::string>();
        if (!parse_exactframerate(text, v.rate_num, v.rate_den))
          throw py::value_error("exactframerate = '" + text + "': allowed are an integer (50) or N/D (60000/1001)");
      });
  vo.def_property_readonly("line_bytes", &video_line_bytes, "bytes of one line (pixel groups, RFC 4175)");
  vo.def_property_readonly("frame_bytes", &video_frame_bytes, "bytes of one frame (line_bytes x height)");
  vo.def("__repr__", [](const VideoOptions& v) {
    return "<netdaq.VideoOptions " + std::to_string(v.width) + "x" + std::to_string(v.height) +
           (v.interlaced ? "i " : "p ") + exactframerate_text(v) + " " + to_string(v.sampling) + " " +
           std::to_string(v.depth) + "-bit>";
  });

  py::class_<ReorderConfig> r(m, "ReorderConfig", "An rx.reorder block: packets -> frames in GPU memory (docs/gpu.md).");
  r.def(py::init([](const py::kwargs& kw) { return from_keys<ReorderConfig>("ReorderConfig", kw); }),
        "ReorderConfig(packets_per_frame=64, payload_size=8192, output='fp16', ...): the keys of rx.reorder; "
        "the blocks fields / spead / vita49 / roce / video take dicts of their keys.")
      .def_readwrite("name", &ReorderConfig::name)
      .def_readwrite("queue", &ReorderConfig::queue)
      .def_readwrite("gpu", &ReorderConfig::gpu)
      .def_readwrite("seq_offset", &ReorderConfig::seq_offset)
      .def_readwrite("seq_bits", &ReorderConfig::seq_bits)
      .def_readwrite("payload_offset", &ReorderConfig::payload_offset)
      .def_readwrite("payload_size", &ReorderConfig::payload_size)
      .def_readwrite("packets_per_frame", &ReorderConfig::packets_per_frame)
      .def_readwrite("max_open_frames", &ReorderConfig::max_open_frames)
      .def_readwrite("frame_buffers", &ReorderConfig::frame_buffers)
      .def_readwrite("frame_timeout_us", &ReorderConfig::frame_timeout_us)
      .def_readwrite("bursts_in_flight", &ReorderConfig::bursts_in_flight)
      .def_readwrite("job_packets", &ReorderConfig::job_packets)
      .def_readwrite("persistent_sms", &ReorderConfig::persistent_sms)
      .def_readwrite("job_timeout_us", &ReorderConfig::job_timeout_us)
      .def_readwrite("frame_bytes", &ReorderConfig::frame_bytes)
      .def_readwrite("granule", &ReorderConfig::granule)
      .def_readwrite("max_streams", &ReorderConfig::max_streams);
  block_property(r, "fields", &ReorderConfig::fields, "FieldPlacement");
  block_property(r, "spead", &ReorderConfig::spead, "SpeadOptions");
  block_property(r, "vita49", &ReorderConfig::vita49, "Vita49Options");
  block_property(r, "roce", &ReorderConfig::roce, "RoceOptions");
  block_property(r, "video", &ReorderConfig::video, "VideoOptions");
  enum_property(r, "mode", &ReorderConfig::mode, ReorderMode::rtp_video);
  enum_property(r, "seq_byte_order", &ReorderConfig::seq_byte_order, ByteOrder::big);
  enum_property(r, "input", &ReorderConfig::input, SampleFormat::fp32);
  enum_property(r, "output", &ReorderConfig::output, SampleFormat::fp32);
  enum_property(r, "sample_byte_order", &ReorderConfig::sample_byte_order, ByteOrder::big);
  enum_property(r, "staging", &ReorderConfig::staging, Staging::direct);
  enum_property(r, "frames", &ReorderConfig::frames, FrameTarget::host);
  enum_property(r, "launch", &ReorderConfig::launch, LaunchMode::rings);
  r.def("__repr__", [](const ReorderConfig& c) {
    const std::string shape = places_spans(c.mode)
                                  ? std::string(to_string(c.mode)) + ", frame_bytes " + std::to_string(c.frame_bytes)
                                  : std::to_string(c.packets_per_frame) + " x " + std::to_string(c.payload_size) + " B";
    return "<netdaq.ReorderConfig queue " + std::to_string(c.queue) + ", " + shape + ", " + to_string(c.input) +
           " -> " + to_string(c.output) + ">";
  });
}

}  // namespace netdaq::python
