// netdaq.gpu: FramePipeline and Frame. A frame exports __dlpack__ so torch.from_dlpack and
// cupy.from_dlpack view its GPU memory in place (packets_per_frame x samples of the output
// dtype; span modes: the frame's samples, 1-D; rtp_video: the video's shape, and its planes
// when the pipeline unpacks them); its buffer goes back to the pipeline when the last Python
// object or tensor of it goes.
#include <dlpack/dlpack.h>

#include <chrono>
#include <mutex>
#include <thread>

#include "netdaq/gpu.h"
#include "netdaq/video.h"
#include "netdaq/video_unpack.h"
#include "rx.h"
#include "stats.h"

namespace netdaq::python {
namespace {

// The pipeline and the lock that orders its calls: frames are released from whatever thread
// drops the last tensor (a DLPack deleter may run without the GIL).
struct PipelineState {
  SessionPtr session;  // the queue's buffers outlive the bursts the pipeline holds
  std::mutex mu;
  std::unique_ptr<gpu::FramePipeline> pipeline;
};

struct FrameState {
  std::shared_ptr<PipelineState> pipe;
  gpu::Frame frame;
  ~FrameState() {
    if (!pipe) return;
    std::lock_guard lock(pipe->mu);
    frame.release();
  }
};

DLDataType dl_type(SampleFormat f) {
  switch (f) {
    case SampleFormat::int8: return {kDLInt, 8, 1};
    case SampleFormat::int16: return {kDLInt, 16, 1};
    case SampleFormat::fp16: return {kDLFloat, 16, 1};
    case SampleFormat::bf16: return {kDLBfloat, 16, 1};
    case SampleFormat::fp32: return {kDLFloat, 32, 1};
    case SampleFormat::raw:
    case SampleFormat::int4: return {kDLUInt, 8, 1};  // int4 stays packed: two samples a byte
  }
  return {kDLUInt, 8, 1};
}

// A DLPack capsule over device memory (up to 3 dimensions, strides in elements or none for
// C-contiguous); the tensor made from it holds the frame.
py::capsule export_dlpack(const std::shared_ptr<FrameState>& frame, void* data, int gpu, DLDataType dtype,
                          const std::vector<int64_t>& shape, const std::vector<int64_t>& strides) {
  struct Export {
    DLManagedTensor tensor{};
    int64_t shape[3]{};
    int64_t strides[3]{};
    std::shared_ptr<FrameState> frame;
  };
  auto* e = new Export;
  e->frame = frame;
  for (size_t d = 0; d < shape.size(); ++d) e->shape[d] = shape[d];
  for (size_t d = 0; d < strides.size(); ++d) e->strides[d] = strides[d];
  DLTensor& t = e->tensor.dl_tensor;
  t.data = data;
  t.device = {kDLCUDA, gpu};
  t.ndim = static_cast<int32_t>(shape.size());
  t.dtype = dtype;
  t.shape = e->shape;
  t.strides = strides.empty() ? nullptr : e->strides;
  t.byte_offset = 0;
  e->tensor.manager_ctx = e;
  e->tensor.deleter = [](DLManagedTensor* self) { delete static_cast<Export*>(self->manager_ctx); };
  // A capsule no consumer took (still named "dltensor") frees the export itself.
  return py::capsule(&e->tensor, "dltensor", [](PyObject* cap) {
    if (!PyCapsule_IsValid(cap, "dltensor")) return;
    auto* t = static_cast<DLManagedTensor*>(PyCapsule_GetPointer(cap, "dltensor"));
    t->deleter(t);
  });
}

// One plane of an unpacked video frame (Frame.planes): (height, samples) of uint16 or
// float16, lines `pitch` bytes apart; it holds the frame.
class PyPlane {
 public:
  PyPlane(std::shared_ptr<FrameState> st, void* data, int gpu, DLDataType dtype, int64_t height, int64_t width,
          int64_t pitch_elems)
      : st_(std::move(st)), data_(data), gpu_(gpu), dtype_(dtype), height_(height), width_(width), pitch_(pitch_elems) {}
  py::tuple shape() const { return py::make_tuple(height_, width_); }
  std::string dtype() const { return dtype_.code == kDLFloat ? "float16" : "uint16"; }
  uintptr_t data_ptr() const { return reinterpret_cast<uintptr_t>(data_); }
  int64_t pitch_bytes() const { return pitch_ * 2; }
  int gpu() const { return gpu_; }
  py::capsule dlpack(const py::object&) const {
    return export_dlpack(st_, data_, gpu_, dtype_, {height_, width_}, {pitch_, 1});
  }

 private:
  std::shared_ptr<FrameState> st_;
  void* data_;
  int gpu_;
  DLDataType dtype_;
  int64_t height_, width_, pitch_;
};

class PyFrame {
 public:
  PyFrame(std::shared_ptr<FrameState> st, const ReorderConfig& cfg) : st_(std::move(st)), cfg_(cfg) {}

  const gpu::Frame& get() const {
    if (!st_) throw Released("the frame was released: its buffer went back to the pipeline");
    return st_->frame;
  }
  DLDataType dtype() const {
    return cfg_.mode == ReorderMode::rtp_video ? DLDataType{kDLUInt, 8, 1} : dl_type(cfg_.output);
  }
  // Slot modes: one row per packet slot. Span modes: 1-D over size_bytes(), the frame's own
  // output bytes (a SPEAD heap may be smaller than the buffer's frame_bytes), since granules
  // need not divide a frame and frames of one pipeline differ in size.
  std::vector<int64_t> shape() const {
    const auto& f = get();
    const size_t bits = dtype().bits;
    if (cfg_.mode == ReorderMode::rtp_video) return video_shape();
    if (places_spans(cfg_.mode)) return {static_cast<int64_t>(f.size_bytes() * 8 / bits)};
    const size_t slot = f.size_bytes() / f.packets_expected();
    return {f.packets_expected(), static_cast<int64_t>(slot * 8 / bits)};
  }
  py::object timestamp(uint64_t gpu::FrameInfo::*part) const {
    const auto& i = get().info();
    return i.has_timestamp ? py::object(py::int_(i.*part)) : py::object(py::none());
  }
  py::dict items() const {
    py::dict d;
    for (const auto& it : get().items()) d[py::int_(it.id)] = it.value;
    return d;
  }
  py::array_t<bool> missing() const {
    const auto& f = get();
    py::array_t<bool> out(f.packets_expected());
    auto words = f.missing();
    for (uint32_t i = 0; i < f.packets_expected(); ++i)
      out.mutable_data()[i] = i / 64 < words.size() && (words[i / 64] >> (i % 64) & 1);
    return out;
  }
  // rtp_video: the pixel groups as bytes in the video's shape. 8-bit YCbCr-4:2:2: (height,
  // width / 2, 4), Cb Y0 Cr Y1 per pgroup; 8-bit RGB: (height, width, 3); others (height,
  // line_bytes).
  std::vector<int64_t> video_shape() const {
    const VideoOptions& v = cfg_.video;
    const int64_t h = v.height, w = v.width;
    if (v.depth == 8 && v.sampling == VideoSampling::ycbcr_422) return {h, w / 2, 4};
    if (v.depth == 8 && v.sampling == VideoSampling::rgb) return {h, w, 3};
    return {h, static_cast<int64_t>(video_line_bytes(v))};
  }
  // rtp_video: True per line missing any byte (zeros there).
  py::array_t<bool> lines_missing() const {
    const auto& f = get();
    if (cfg_.mode != ReorderMode::rtp_video) throw py::type_error("lines_missing: the frame is not of mode rtp_video");
    const VideoOptions& v = cfg_.video;
    std::vector<uint64_t> words((v.height + 63) / 64);
    video_missing_lines(v, f, words);
    py::array_t<bool> out(v.height);
    for (uint32_t l = 0; l < v.height; ++l) out.mutable_data()[l] = words[l / 64] >> (l % 64) & 1;
    return out;
  }
  // rtp_video with video.unpack: (Y, Cb, Cr) or (R, G, B), each DLPack-capable; None otherwise.
  py::object planes() const {
    const auto& f = get();
    if (!f.planes()) return py::none();
    const gpu::VideoPlanes& pl = *f.planes();
    const DLDataType t = pl.type == gpu::PlaneType::fp16 ? DLDataType{kDLFloat, 16, 1} : DLDataType{kDLUInt, 16, 1};
    py::list out;
    for (int k = 0; k < 3; ++k)
      out.append(PyPlane(st_, pl.data[k], cfg_.gpu, t, cfg_.video.height, gpu::plane_width(cfg_.video, k),
                         static_cast<int64_t>(pl.pitch[k] / 2)));
    return py::tuple(out);
  }
  void release() noexcept { st_.reset(); }

  // A DLPack capsule over the frame; the tensor made from it holds the frame.
  py::capsule dlpack(const py::object& stream) const {
    (void)stream;  // next_frame() hands out frames whose GPU work is done: no stream to wait on
    return export_dlpack(st_, get().data(), cfg_.gpu, dtype(), shape(), {});
  }

  const ReorderConfig& config() const noexcept { return cfg_; }

 private:
  std::shared_ptr<FrameState> st_;
  ReorderConfig cfg_;
};

class PyFramePipeline {
 public:
  PyFramePipeline(SessionPtr session, const std::string& iface, const py::object& reorder)
      : st_(std::make_shared<PipelineState>()) {
    st_->session = std::move(session);
    cfg_ = reorder_of(*st_->session, iface, reorder);
    py::gil_scoped_release nogil;
    st_->pipeline = std::make_unique<gpu::FramePipeline>(*st_->session, iface, cfg_);
  }

  void submit(PyRxBurst& b) {
    RxBurst burst = b.take("FramePipeline.submit");
    std::lock_guard lock(st_->mu);
    st_->pipeline->submit(std::move(burst));
  }

  // Polls the queue (when given) and submits what it gets until a frame is finished or
  // timeout_s passed; the GIL is released meanwhile.
  std::optional<PyFrame> next_frame(std::optional<PyRxQueue> queue, double timeout_s) {
    std::optional<gpu::Frame> got;
    {
      py::gil_scoped_release nogil;
      const auto deadline = std::chrono::steady_clock::now() + std::chrono::duration<double>(timeout_s);
      for (;;) {
        bool polled = false;
        {
          std::lock_guard lock(st_->mu);
          if (queue) {
            RxBurst b = queue->queue->poll();
            polled = !b.empty();
            if (polled) st_->pipeline->submit(std::move(b));
          }
          gpu::Frame f = st_->pipeline->next_frame();
          if (f) {
            got.emplace(std::move(f));
            break;
          }
        }
        if (std::chrono::steady_clock::now() >= deadline) break;
        if (!polled) std::this_thread::yield();
      }
    }
    if (!got) return std::nullopt;
    auto frame = std::make_shared<FrameState>();
    frame->pipe = st_;
    frame->frame = std::move(*got);
    return PyFrame(std::move(frame), cfg_);
  }

  void flush() {
    std::lock_guard lock(st_->mu);
    st_->pipeline->flush();
  }
  void synchronize() {
    py::gil_scoped_release nogil;
    std::lock_guard lock(st_->mu);
    st_->pipeline->synchronize();
  }
  // Under the lock: a frame released from another thread changes the counters' frame state.
  py::dict stats() const {
    std::lock_guard lock(st_->mu);
    return to_dict(st_->pipeline->stats());
  }
  py::list stream_stats() const {
    std::vector<gpu::StreamStats> v;
    {
      std::lock_guard lock(st_->mu);
      v = st_->pipeline->stream_stats();
    }
    py::list out;
    for (const auto& s : v) out.append(to_dict(s));
    return out;
  }
  size_t frame_bytes() const { return st_->pipeline->frame_bytes(); }
  std::string last_malformed() const {
    std::lock_guard lock(st_->mu);
    return st_->pipeline->last_malformed();
  }
  const ReorderConfig& config() const noexcept { return cfg_; }

 private:
  // None: the interface's first rx.reorder entry; an int: that entry; a ReorderConfig or a dict.
  static ReorderConfig reorder_of(const Session& s, const std::string& iface, const py::object& r) {
    if (r.is_none() || py::isinstance<py::int_>(r))
      return reorder_entry(s.config(), iface, r.is_none() ? 0 : r.cast<size_t>());
    if (py::isinstance<py::dict>(r))
      return py::module_::import("netdaq").attr("ReorderConfig")(**r.cast<py::dict>()).cast<ReorderConfig>();
    return r.cast<ReorderConfig>();
  }

  std::shared_ptr<PipelineState> st_;
  ReorderConfig cfg_;
};

py::dict device_dict(const gpu::DeviceInfo& d) {
  py::dict o;
  o["index"] = d.index;
  o["name"] = d.name;
  o["pci_bus_id"] = d.pci_bus_id;
  o["compute_capability"] = py::make_tuple(d.compute_major, d.compute_minor);
  o["multiprocessors"] = d.multiprocessors;
  o["memory_bytes"] = d.memory_bytes;
  o["dmabuf"] = d.dmabuf;
  o["peermem"] = d.peermem;
  return o;
}

}  // namespace

void bind_gpu(py::module_& m) {
  py::module_ g = m.def_submodule("gpu", "The GPU data plane: packets reordered into frames in GPU memory.");
  g.def("built_in", &gpu::built_in, "True when this build has the GPU data plane.");
  g.def("device_count", &gpu::device_count);
  g.def("unavailable_reason", &gpu::unavailable_reason, "Why GPU features cannot be used here ('' when they can).");
  // The keys of pipe.stats(), pipe.stream_stats()[i] and frame.info, known without a GPU
  // (column names for a log before the first frame).
  g.attr("PIPELINE_STATS_KEYS") = py::tuple(to_dict(gpu::PipelineStats{}).attr("keys")());
  g.attr("STREAM_STATS_KEYS") = py::tuple(to_dict(gpu::StreamStats{}).attr("keys")());
  g.attr("FRAME_INFO_KEYS") = py::tuple(to_dict(gpu::FrameInfo{}).attr("keys")());
  g.def("devices", [] {
    py::list out;
    for (const auto& d : gpu::devices()) out.append(device_dict(d));
    return out;
  });

  py::class_<PyFrame>(g, "Frame",
                      "A finished frame in GPU memory; torch.from_dlpack(frame) / cupy.from_dlpack(frame) view "
                      "it in place.")
      .def_property_readonly("index", [](const PyFrame& f) { return f.get().index(); })
      .def_property_readonly("complete", [](const PyFrame& f) { return f.get().complete(); })
      .def_property_readonly("packets_expected", [](const PyFrame& f) { return f.get().packets_expected(); })
      .def_property_readonly("packets_received", [](const PyFrame& f) { return f.get().packets_received(); })
      .def_property_readonly("nbytes", [](const PyFrame& f) { return f.get().size_bytes(); })
      .def_property_readonly("data_ptr", [](const PyFrame& f) { return reinterpret_cast<uintptr_t>(f.get().data()); },
                             "The frame's device pointer.")
      .def_property_readonly("shape", [](const PyFrame& f) { return py::tuple(py::cast(f.shape())); },
                             "(packets_expected, samples) in slot modes; (samples,) in span modes; the video's in rtp_video "
                             "(docs/python.md).")
      .def_property_readonly("stream", [](const PyFrame& f) { return f.get().stream(); },
                             "Span modes: the frame's stream (sensor); 0 in slot modes.")
      .def_property_readonly("bytes_expected", [](const PyFrame& f) { return f.get().info().bytes_expected; },
                             "Input bytes the frame should hold.")
      .def_property_readonly("bytes_received", [](const PyFrame& f) { return f.get().info().bytes_received; },
                             "Input bytes of it that arrived.")
      .def_property_readonly("granule", [](const PyFrame& f) { return f.get().info().granule; },
                             "Input bytes per presence unit (an entry of `missing`): payload_size in slot modes.")
      .def_property_readonly("timestamp", [](const PyFrame& f) { return f.timestamp(&gpu::FrameInfo::timestamp); },
                             "Span modes: the sensor's timestamp of the frame's first byte (VITA-49 integer part); "
                             "None without one.")
      .def_property_readonly("timestamp_frac",
                             [](const PyFrame& f) { return f.timestamp(&gpu::FrameInfo::timestamp_frac); },
                             "VITA-49: the fractional timestamp; None without a timestamp.")
      .def_property_readonly("items", &PyFrame::items, "SPEAD: the heap's immediate items {id: value}; {} otherwise.")
      .def_property_readonly("info", [](const PyFrame& f) { return to_dict(f.get().info()); },
                             "Every field of the frame's metadata (C++ FrameInfo) as a dict.")
      .def_property_readonly("dtype", [](const PyFrame& f) { return std::string(to_string(f.config().output)); })
      .def_property_readonly("gpu", [](const PyFrame& f) { return f.config().gpu; })
      .def_property_readonly("missing", &PyFrame::missing,
                             "Per packet slot (span modes: per granule): True where it is missing (zeros).")
      .def_property_readonly("lines_missing", &PyFrame::lines_missing,
                             "Mode rtp_video: per line, True where the line misses any byte (zeros there).")
      .def_property_readonly("planes", &PyFrame::planes,
                             "Mode rtp_video with video.unpack: (Y, Cb, Cr) or (R, G, B) planes in GPU memory, "
                             "each for torch.from_dlpack / cupy.from_dlpack ((height, width) or (height, width / 2) "
                             "for 4:2:2 chroma; uint16 or float16), holding the frame; None otherwise.")
      .def("__dlpack__", &PyFrame::dlpack, py::kw_only(), py::arg("stream") = py::none())
      .def("__dlpack_device__", [](const PyFrame& f) { return py::make_tuple(int{kDLCUDA}, f.config().gpu); })
      .def("release", &PyFrame::release, "Drops this object's hold; the buffer returns once no tensor views it.");

  py::class_<PyPlane>(g, "VideoPlane", "One plane of an unpacked video frame; from_dlpack views it in place.")
      .def_property_readonly("shape", &PyPlane::shape, "(height, samples per line)")
      .def_property_readonly("dtype", &PyPlane::dtype, "'uint16' or 'float16'")
      .def_property_readonly("data_ptr", &PyPlane::data_ptr)
      .def_property_readonly("pitch", &PyPlane::pitch_bytes, "Bytes from one line to the next.")
      .def("__dlpack__", &PyPlane::dlpack, py::kw_only(), py::arg("stream") = py::none())
      .def("__dlpack_device__", [](const PyPlane& p) { return py::make_tuple(int{kDLCUDA}, p.gpu()); });

  py::class_<PyFramePipeline>(g, "FramePipeline",
                              "Reorders an rx queue's packets into frames in GPU memory (docs/gpu.md).")
      .def(py::init<SessionPtr, const std::string&, const py::object&>(), py::arg("session"), py::arg("interface"),
           py::arg("reorder") = py::none())
      .def("submit", &PyFramePipeline::submit, py::arg("burst"),
           "Takes a received burst (no packet or view of it may be left).")
      .def("next_frame", &PyFramePipeline::next_frame, py::arg("queue") = py::none(), py::arg("timeout") = 0.0,
           "The next finished frame or None; with a queue, polls and submits its bursts until a frame is ready or "
           "`timeout` seconds passed (without the GIL).")
      .def("flush", &PyFramePipeline::flush, "Closes every open frame now (end of run).")
      .def("synchronize", &PyFramePipeline::synchronize)
      .def("stats", &PyFramePipeline::stats)
      .def("stream_stats", &PyFramePipeline::stream_stats,
           "Span modes: one dict per stream seen, in order of its first packet ([] in slot modes).")
      .def_property_readonly("frame_bytes", &PyFramePipeline::frame_bytes)
      .def_property_readonly("last_malformed", &PyFramePipeline::last_malformed,
                             "Span modes: why the last malformed packet was ('' when none was).")
      .def_property_readonly("config", &PyFramePipeline::config);
}

}  // namespace netdaq::python
