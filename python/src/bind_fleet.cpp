// netdaq.fleet: frames between processes over UCX (include/netdaq/fleet.h, docs/fleet.md).
// FrameSink sends any C-contiguous buffer and holds it until UCX no longer reads it;
// FrameReceiver and EventBuilder hand out frames whose bytes are read in place, as NumPy views
// or through DLPack (kDLCPU). A received frame's buffer, and the sender's credit, go back when
// the frame object and every view or tensor of it are gone: release() (or `with` exit) ends
// the frame object's own hold, so a view kept past it stays valid rather than reading reused
// memory.
#include <dlpack/dlpack.h>

#include <chrono>
#include <map>
#include <mutex>
#include <thread>

#include "bindings.h"
#include "netdaq/fleet.h"

namespace netdaq::python {
namespace {

namespace fl = netdaq::fleet;

// Bad settings are the caller's mistake: ValueError with the C++ side's message.
template <class F>
auto value_errors(F&& make) {
  try {
    return make();
  } catch (const Error& e) {
    if (e.code() == Errc::invalid_config) throw py::value_error(e.what());
    throw;
  }
}

template <class E>
E parse_enum(const char* key, const std::string& v, std::initializer_list<E> all) {
  std::string allowed;
  for (E e : all) {
    const std::string name = to_string(e);
    if (v == name || (name == "automatic" && v == "auto")) return e;
    allowed += (allowed.empty() ? "" : ", ") + (name == "automatic" ? std::string("auto") : name);
  }
  throw py::value_error(std::string("fleet ") + key + " '" + v + "': not one of " + allowed);
}

fl::Transport transport_of(const std::string& v) {
  return parse_enum("transport", v, {fl::Transport::automatic, fl::Transport::tcp, fl::Transport::shm});
}

fl::ReceiverConfig receiver_config(const std::string& listen, uint64_t max_bytes, uint32_t buffers,
                                   const std::string& transport, const std::string& devices) {
  return {.listen = fl::parse_address(listen), .max_bytes = max_bytes, .buffers = buffers,
          .transport = transport_of(transport), .devices = devices};
}

py::dict to_dict(const fl::FrameMeta& m) {
  py::dict d;
  d["stream"] = m.stream;
  d["frame"] = m.frame;
  d["offset"] = m.offset;
  d["frame_offset"] = m.frame_offset;
  d["built_bytes"] = m.built_bytes;
  d["bytes"] = m.bytes;
  d["bytes_present"] = m.bytes_present;
  d["first_ns"] = m.first_ns;
  d["last_ns"] = m.last_ns;
  d["sent_ns"] = m.sent_ns;
  d["node"] = m.node;
  d["granule"] = m.granule;
  d["complete"] = m.complete;
  return d;
}

py::dict to_dict(const fl::ReceiverStats& s) {
  py::dict d;
  d["connections"] = s.connections;
  d["senders"] = s.senders;
  d["disconnects"] = s.disconnects;
  d["fragments"] = s.fragments;
  d["placed"] = s.placed;
  d["bytes"] = s.bytes;
  d["no_buffer"] = s.no_buffer;
  d["too_big"] = s.too_big;
  d["malformed"] = s.malformed;
  d["late"] = s.late;
  d["duplicate"] = s.duplicate;
  d["receive_failed"] = s.receive_failed;
  return d;
}

py::dict to_dict(const fl::BuilderStats& s) {
  py::dict d;
  d["frames"] = s.frames;
  d["frames_complete"] = s.frames_complete;
  d["frames_incomplete"] = s.frames_incomplete;
  d["frames_timed_out"] = s.frames_timed_out;
  d["receiver"] = to_dict(s.receiver);
  py::list nodes;
  for (const auto& n : s.nodes) {
    py::dict nd;
    nd["node"] = n.node;
    nd["fragments"] = n.fragments;
    nd["bytes"] = n.bytes;
    nd["incomplete"] = n.incomplete;
    nd["missing"] = n.missing;
    nd["late"] = n.late;
    nd["duplicate"] = n.duplicate;
    nodes.append(nd);
  }
  d["nodes"] = nodes;
  return d;
}

py::dict to_dict(const fl::SinkDestinationStats& s) {
  py::dict d;
  d["address"] = s.address;
  d["connected"] = s.connected;
  d["fragments"] = s.fragments;
  d["acked"] = s.acked;
  d["bytes_acked"] = s.bytes_acked;
  d["refused"] = s.refused;
  d["no_credit"] = s.no_credit;
  d["peer_down"] = s.peer_down;
  d["in_flight_lost"] = s.in_flight_lost;
  d["in_flight"] = s.in_flight;
  d["connects"] = s.connects;
  d["disconnects"] = s.disconnects;
  d["acked_connection"] = s.acked_connection;
  return d;
}

py::dict to_dict(const fl::SinkStats& s) {
  py::dict d;
  d["frames"] = s.frames;
  d["total"] = to_dict(s.total);
  py::list dests;
  for (const auto& x : s.destinations) dests.append(to_dict(x));
  d["destinations"] = dests;
  return d;
}

// A receiver or builder and the lock that orders its calls: frames are released from whatever
// thread drops their last view (a DLPack deleter may run without the GIL), and receive()
// progresses without the GIL. Code holding `mu` never waits for the GIL.
constexpr auto kSettle = std::chrono::seconds(1);  // how long teardown waits for transfers under way

uint64_t receiving(const fl::ReceiverStats& s) {  // fragments whose data is still arriving
  return s.fragments - (s.placed + s.no_buffer + s.too_big + s.malformed + s.late + s.duplicate + s.receive_failed);
}
uint64_t receiving(const fl::FrameReceiver& r) { return receiving(r.stats()); }
uint64_t receiving(const fl::EventBuilder& b) { return receiving(b.stats().receiver); }

template <class R>
struct Endpoint {
  std::mutex mu;
  std::unique_ptr<R> rx;
  // Destroying a receiver while a fragment's data is still arriving crashes inside src/fleet
  // (UCX completes the receive during teardown): let what is under way finish first, bounded.
  ~Endpoint() {
    if (!rx) return;
    const auto deadline = std::chrono::steady_clock::now() + kSettle;
    while (receiving(*rx) != 0 && std::chrono::steady_clock::now() < deadline) rx->progress();
  }
};

// One handed-out frame; its buffer and credit go back when the last holder goes.
template <class R, class F>
struct Held {
  std::shared_ptr<Endpoint<R>> ep;
  F frame;
  ~Held() {
    std::lock_guard lock(ep->mu);
    ep->rx->release(frame);
  }
};

const std::byte kEmpty[8]{};  // the address a 0-byte view points at

// A 1-D read-only view of `bytes` that keeps `held` alive.
template <class H, class T>
py::array span_view(const std::shared_ptr<H>& held, const py::dtype& dtype, std::span<const T> s) {
  const void* data = s.empty() ? static_cast<const void*>(kEmpty) : static_cast<const void*>(s.data());
  return view_of(held, dtype, {static_cast<py::ssize_t>(s.size())}, {static_cast<py::ssize_t>(sizeof(T))}, data);
}

// A DLPack capsule over host bytes (1-D uint8); the tensor made from it holds the frame.
template <class H>
py::capsule export_dlpack_cpu(const std::shared_ptr<H>& held, std::span<const std::byte> bytes) {
  struct Export {
    DLManagedTensor tensor{};
    int64_t shape[1]{};
    std::shared_ptr<H> held;
  };
  auto* e = new Export;
  e->held = held;
  e->shape[0] = static_cast<int64_t>(bytes.size());
  DLTensor& t = e->tensor.dl_tensor;
  t.data = const_cast<std::byte*>(bytes.empty() ? kEmpty : bytes.data());
  t.device = {kDLCPU, 0};
  t.ndim = 1;
  t.dtype = {kDLUInt, 8, 1};
  t.shape = e->shape;
  t.strides = nullptr;
  t.byte_offset = 0;
  e->tensor.manager_ctx = e;
  e->tensor.deleter = [](DLManagedTensor* self) { delete static_cast<Export*>(self->manager_ctx); };
  return py::capsule(&e->tensor, "dltensor", [](PyObject* cap) {
    if (!PyCapsule_IsValid(cap, "dltensor")) return;  // a consumer took it
    auto* t = static_cast<DLManagedTensor*>(PyCapsule_GetPointer(cap, "dltensor"));
    t->deleter(t);
  });
}

// What Frame and BuiltFrame share: the hold, release, views and DLPack.
template <class R, class F>
class PyHeld {
 public:
  using H = Held<R, F>;
  explicit PyHeld(std::shared_ptr<H> h) : h_(std::move(h)) {}
  const F& get() const {
    if (!h_) throw Released("the fleet frame was released: its buffer went back to the receiver");
    return h_->frame;
  }
  const std::shared_ptr<H>& held() const {
    get();
    return h_;
  }
  void release() noexcept { h_.reset(); }
  bool released() const noexcept { return !h_; }
  py::array data() const { return span_view(held(), py::dtype::of<uint8_t>(), get().bytes); }
  py::capsule dlpack(const py::object&) const { return export_dlpack_cpu(held(), get().bytes); }

 protected:
  std::shared_ptr<H> h_;
};

using PyFleetFrame = PyHeld<fl::FrameReceiver, fl::InFrame>;
using PyBuiltFrame = PyHeld<fl::EventBuilder, fl::BuiltFrame>;

// FrameReceiver and EventBuilder in Python: progress, pop, receive(timeout), stats, close.
template <class R, class F>
class PyEndpoint {
 public:
  using Frame = PyHeld<R, F>;
  explicit PyEndpoint(std::unique_ptr<R> rx) : ep_(std::make_shared<Endpoint<R>>()) {
    port_ = rx->port();
    ep_->rx = std::move(rx);
  }
  uint16_t port() const { return port_; }
  bool closed() const noexcept { return !ep_; }
  // Ends the Python object's hold: the receiver stops listening when its last frame also goes.
  void close() {
    auto ep = std::move(ep_);
    py::gil_scoped_release nogil;
    ep.reset();  // may destroy the receiver: UCX teardown without the GIL
  }
  void progress() {
    auto e = ep();
    py::gil_scoped_release nogil;
    std::lock_guard lock(e->mu);
    e->rx->progress();
  }
  py::object pop() {
    auto e = ep();
    F f;
    bool got = false;
    {
      std::lock_guard lock(e->mu);  // never waits on the GIL's holder: see Endpoint
      got = e->rx->pop(f);
    }
    return got ? wrap(e, f) : py::none();
  }
  // Progresses until a frame comes (returned) or timeout_s passes (None), without the GIL.
  py::object receive(double timeout_s) {
    auto e = ep();
    const auto start = std::chrono::steady_clock::now();
    const auto limit = std::chrono::duration<double>(std::max(0.0, timeout_s));
    for (;;) {
      F f;
      bool got = false;
      bool out_of_time = false;
      {
        py::gil_scoped_release nogil;
        const auto slice_end = std::chrono::steady_clock::now() + std::chrono::milliseconds(50);
        for (;;) {
          {
            std::lock_guard lock(e->mu);
            e->rx->progress();
            got = e->rx->pop(f);
          }
          const auto now = std::chrono::steady_clock::now();
          out_of_time = now - start >= limit;
          if (got || out_of_time || now >= slice_end) break;
          std::this_thread::yield();
        }
      }
      if (got) return wrap(e, f);
      if (out_of_time) return py::none();
      if (PyErr_CheckSignals() != 0) throw py::error_already_set();  // Ctrl-C ends the wait
    }
  }
  template <class Fn>
  auto locked(Fn&& fn) {  // fn(R&) under the endpoint's lock
    auto e = ep();
    std::lock_guard lock(e->mu);
    return fn(*e->rx);
  }

 private:
  std::shared_ptr<Endpoint<R>> ep() const {  // a copy: close() from another thread leaves it valid
    if (!ep_) throw Error(Errc::state, "the fleet receiver was closed");
    return ep_;
  }
  // Held is built in place: a temporary's destructor would release the frame.
  py::object wrap(const std::shared_ptr<Endpoint<R>>& e, const F& f) {
    return py::cast(Frame(std::shared_ptr<Held<R, F>>(new Held<R, F>{e, f})));
  }

  std::shared_ptr<Endpoint<R>> ep_;
  uint16_t port_ = 0;
};

using PyFrameReceiver = PyEndpoint<fl::FrameReceiver, fl::InFrame>;
using PyEventBuilder = PyEndpoint<fl::EventBuilder, fl::BuiltFrame>;

// FrameSink in Python: each sent buffer is held (its Py_buffer export) until the sink hands
// its token back from done(), so UCX never reads memory Python has freed or resized.
class PyFrameSink {
 public:
  explicit PyFrameSink(fl::SinkConfig cfg) {
    py::gil_scoped_release nogil;  // connecting may take a moment
    sink_ = value_errors([&] { return std::make_unique<fl::FrameSink>(std::move(cfg)); });
  }
  ~PyFrameSink() { close(); }

  void send(const py::object& data, uint64_t stream, uint64_t frame, bool complete, const py::object& presence,
            uint32_t granule, const py::object& bytes_present, uint64_t first_ns, uint64_t last_ns) {
    sink();
    auto p = std::make_unique<Pending>();
    if (PyObject_GetBuffer(data.ptr(), &p->view, PyBUF_C_CONTIGUOUS) != 0)
      throw py::error_already_set();  // BufferError: not C-contiguous; TypeError: no buffer at all
    p->have_view = true;
    const auto len = static_cast<size_t>(p->view.len);
    if (!presence.is_none()) {
      auto words = py::array_t<uint64_t, py::array::c_style | py::array::forcecast>::ensure(presence);
      if (!words) throw py::value_error("send: presence must be an array of uint64 words");
      p->presence.assign(words.data(), words.data() + words.size());
      if (granule == 0) throw py::value_error("send: presence needs granule (bytes per presence bit) > 0");
    }
    fl::OutFrame f;
    f.stream = stream;
    f.frame = frame;
    f.bytes = {static_cast<const std::byte*>(p->view.buf), len};
    f.presence = p->presence;
    f.granule = p->presence.empty() ? 0 : granule;
    f.bytes_present = bytes_present.is_none() ? len : bytes_present.cast<uint64_t>();
    f.complete = complete;
    f.first_ns = first_ns;
    f.last_ns = last_ns;
    f.token = next_token_++;
    pending_.emplace(f.token, std::move(p));  // before send: a dropped frame's token comes back at once
    std::vector<uint64_t> done;
    {
      py::gil_scoped_release nogil;  // when_full wait may wait up to wait_ms
      std::lock_guard lock(mu_);
      if (sink_) sink_->send(f);  // closed meanwhile by another thread: close() let go of the buffer
      collect(done);
    }
    forget(done);
  }
  void progress() {
    sink();
    std::vector<uint64_t> done;
    {
      py::gil_scoped_release nogil;
      std::lock_guard lock(mu_);
      if (sink_) sink_->progress();
      collect(done);
    }
    forget(done);
  }
  bool drain(uint32_t timeout_ms) {
    sink();
    std::vector<uint64_t> done;
    bool drained = false;
    {
      py::gil_scoped_release nogil;
      std::lock_guard lock(mu_);
      drained = sink_ && sink_->drain(timeout_ms);
      collect(done);
    }
    forget(done);
    return drained;
  }
  py::dict stats() {
    std::lock_guard lock(mu_);
    return to_dict(sink().stats());
  }
  size_t pending() const noexcept { return pending_.size(); }
  // Waits up to kSettle for the sends under way (destroying a sink while UCX still sends
  // crashes inside src/fleet), then lets every held buffer go once UCX stops reading them.
  void close() {
    const size_t want = pending_.size();
    std::vector<uint64_t> done;
    {
      py::gil_scoped_release nogil;
      std::unique_ptr<fl::FrameSink> s;
      {
        std::lock_guard lock(mu_);
        const auto deadline = std::chrono::steady_clock::now() + kSettle;
        while (sink_ && done.size() < want && std::chrono::steady_clock::now() < deadline) {
          sink_->progress();
          collect(done);
        }
        s = std::move(sink_);
      }
      s.reset();
    }
    pending_.clear();
  }

 private:
  struct Pending {  // destroyed with the GIL held: PyBuffer_Release needs it
    Py_buffer view{};
    bool have_view = false;
    std::vector<uint64_t> presence;
    Pending() = default;
    Pending(const Pending&) = delete;
    Pending& operator=(const Pending&) = delete;
    ~Pending() {
      if (have_view) PyBuffer_Release(&view);
    }
  };
  fl::FrameSink& sink() {
    if (!sink_) throw Error(Errc::state, "the fleet sink was closed");
    return *sink_;
  }
  void collect(std::vector<uint64_t>& done) {  // under mu_
    uint64_t token = 0;
    while (sink_ && sink_->done(token)) done.push_back(token);
  }
  void forget(const std::vector<uint64_t>& done) {  // with the GIL
    for (uint64_t t : done) pending_.erase(t);
  }

  std::map<uint64_t, std::unique_ptr<Pending>> pending_;  // declared before sink_: outlives it
  std::mutex mu_;
  std::unique_ptr<fl::FrameSink> sink_;
  uint64_t next_token_ = 1;
};

std::vector<fl::Address> destinations_of(const py::object& d) {
  if (py::isinstance<py::str>(d)) return fl::parse_address_list(d.cast<std::string>());
  std::vector<fl::Address> out;
  for (const auto& a : d) out.push_back(fl::parse_address(py::str(a).cast<std::string>()));
  return out;
}

template <class P>
void bind_frame_common(py::class_<P>& c) {
  c.def_property_readonly("data", &P::data,
                          "The frame's bytes: a read-only 1-D uint8 NumPy view, no copy; it keeps the buffer "
                          "held after release() until the view goes.")
      .def_property_readonly("nbytes", [](const P& f) { return f.get().bytes.size(); })
      .def_property_readonly("buffer", [](const P& f) { return f.get().buffer; }, "The receiver's buffer index.")
      .def_property_readonly("released", &P::released)
      .def("release", &P::release,
           "Ends this object's hold (idempotent); the buffer and the sender's credit go back when every view "
           "and DLPack tensor of the frame is gone too.")
      .def("__enter__", [](py::object self) { return self; })
      .def("__exit__", [](P& f, const py::args&) { f.release(); })
      .def("__dlpack__", &P::dlpack, py::kw_only(), py::arg("stream") = py::none())
      .def("__dlpack_device__", [](const P&) { return py::make_tuple(int{kDLCPU}, 0); });
}

template <class P>
void bind_endpoint_common(py::class_<P>& c) {
  c.def_property_readonly("port", &P::port)
      .def_property_readonly("closed", &P::closed)
      .def("progress", &P::progress, "Progresses UCX: accepts senders, places fragments, returns credits.")
      .def("pop", &P::pop, "The next frame, or None (call progress() first).")
      .def("receive", &P::receive, py::arg("timeout_s") = 1.0,
           "Progresses until a frame comes (returned) or timeout_s passes (None); the GIL is released.")
      .def("close", &P::close,
           "Stops taking frames; the receiver stops listening when its last handed-out frame also goes.")
      .def("__enter__", [](py::object self) { return self; })
      .def("__exit__", [](P& r, const py::args&) { r.close(); });
}

}  // namespace

void bind_fleet(py::module_& m) {
  py::module_ f = m.def_submodule("fleet", "Frames between processes over UCX (docs/fleet.md).");

  py::class_<PyFleetFrame> frame(f, "Frame", "A frame (fragment) from FrameReceiver: its bytes in place and its "
                                             "FrameMeta; np.from_dlpack / torch.from_dlpack view it too.");
  bind_frame_common(frame);
  auto meta = [](uint64_t fl::FrameMeta::*field) {
    return [field](const PyFleetFrame& x) { return x.get().meta.*field; };
  };
  frame.def_property_readonly("stream", meta(&fl::FrameMeta::stream))
      .def_property_readonly("frame", meta(&fl::FrameMeta::frame))
      .def_property_readonly("offset", meta(&fl::FrameMeta::offset),
                             "Where these bytes go in the built frame (node order).")
      .def_property_readonly("frame_offset", meta(&fl::FrameMeta::frame_offset),
                             "Where they were in the sender's frame (route bytes: its range).")
      .def_property_readonly("built_bytes", meta(&fl::FrameMeta::built_bytes))
      .def_property_readonly("bytes_present", meta(&fl::FrameMeta::bytes_present))
      .def_property_readonly("first_ns", meta(&fl::FrameMeta::first_ns))
      .def_property_readonly("last_ns", meta(&fl::FrameMeta::last_ns))
      .def_property_readonly("sent_ns", meta(&fl::FrameMeta::sent_ns))
      .def_property_readonly("node", [](const PyFleetFrame& x) { return x.get().meta.node; })
      .def_property_readonly("granule", [](const PyFleetFrame& x) { return x.get().meta.granule; })
      .def_property_readonly("complete", [](const PyFleetFrame& x) { return x.get().meta.complete; })
      .def_property_readonly("meta", [](const PyFleetFrame& x) { return to_dict(x.get().meta); },
                             "Every FrameMeta field as a dict.")
      .def_property_readonly(
          "presence", [](const PyFleetFrame& x) { return span_view(x.held(), py::dtype::of<uint64_t>(), x.get().presence); },
          "Presence bits as sent (bit g of word g // 64: granule g arrived); a read-only uint64 view, empty "
          "when none travelled.");

  py::class_<PyBuiltFrame> built(f, "BuiltFrame", "A frame from EventBuilder: every node's fragment in place.");
  bind_frame_common(built);
  built.def_property_readonly("stream", [](const PyBuiltFrame& x) { return x.get().stream; })
      .def_property_readonly("frame", [](const PyBuiltFrame& x) { return x.get().frame; })
      .def_property_readonly("nodes_present", [](const PyBuiltFrame& x) { return x.get().nodes_present; },
                             "Bit n: node n's fragment came (missing fragments' bytes are zero).")
      .def_property_readonly("complete", [](const PyBuiltFrame& x) { return x.get().complete; })
      .def_property_readonly("first_ns", [](const PyBuiltFrame& x) { return x.get().first_ns; })
      .def_property_readonly("last_ns", [](const PyBuiltFrame& x) { return x.get().last_ns; })
      .def_property_readonly(
          "fragments",
          [](const PyBuiltFrame& x) {
            const auto& b = x.get();
            py::list out;
            for (size_t n = 0; n < b.fragments.size(); ++n)
              out.append(n < 64 && (b.nodes_present >> n & 1) ? py::object(to_dict(b.fragments[n])) : py::none());
            return out;
          },
          "Per node: its fragment's FrameMeta as a dict, None where it did not come.");

  py::class_<PyFrameReceiver> rx(f, "FrameReceiver", "Accepts frames from many FrameSinks.");
  rx.def(py::init([](const std::string& listen, uint64_t max_bytes, uint32_t buffers, const std::string& transport,
                     const std::string& devices) {
           auto cfg = receiver_config(listen, max_bytes, buffers, transport, devices);
           py::gil_scoped_release nogil;
           return std::make_unique<PyFrameReceiver>(
               value_errors([&] { return std::make_unique<fl::FrameReceiver>(cfg); }));
         }),
         py::arg("listen"), py::arg("max_bytes") = 1 << 20, py::arg("buffers") = 32, py::arg("transport") = "auto",
         py::arg("devices") = "")
      .def("stats", [](PyFrameReceiver& r) { return to_dict(r.locked([](auto& x) { return x.stats(); })); });
  bind_endpoint_common(rx);

  py::class_<PyEventBuilder> eb(f, "EventBuilder", "Builds one frame from the fragments of `nodes` FrameSinks.");
  eb.def(py::init([](const std::string& listen, uint32_t nodes, uint64_t max_bytes, uint32_t buffers,
                     uint32_t timeout_ms, const std::string& transport, const std::string& devices) {
           fl::BuilderConfig cfg{.receiver = receiver_config(listen, max_bytes, buffers, transport, devices),
                                 .nodes = nodes, .timeout_ms = timeout_ms};
           py::gil_scoped_release nogil;
           return std::make_unique<PyEventBuilder>(
               value_errors([&] { return std::make_unique<fl::EventBuilder>(cfg); }));
         }),
         py::arg("listen"), py::arg("nodes") = 1, py::arg("max_bytes") = 1 << 20, py::arg("buffers") = 32,
         py::arg("timeout_ms") = 500, py::arg("transport") = "auto", py::arg("devices") = "")
      .def("stats",
           [](PyEventBuilder& b) { return to_dict(b.locked([](auto& x) { return x.stats(); })); })
      .def(
          "flush",
          [](PyEventBuilder& b) { b.locked([](auto& x) { x.flush(); }); },
          "Hands every open frame out now (pop() them next).");
  bind_endpoint_common(eb);

  py::class_<PyFrameSink>(f, "FrameSink", "Sends frames (any C-contiguous buffer) to FrameReceivers or EventBuilders.")
      .def(py::init([](const py::object& destinations, uint32_t node, uint32_t nodes, const std::string& route,
                       uint32_t credits, const std::string& when_full, uint32_t wait_ms, uint32_t reconnect_ms,
                       const std::string& transport, const std::string& devices) {
             fl::SinkConfig cfg;
             cfg.destinations = destinations_of(destinations);
             cfg.node = node;
             cfg.nodes = nodes;
             cfg.route = parse_enum("route", route, {fl::Route::frame, fl::Route::stream, fl::Route::bytes});
             cfg.credits = credits;
             cfg.when_full = parse_enum("when_full", when_full, {fl::WhenFull::drop, fl::WhenFull::wait});
             cfg.wait_ms = wait_ms;
             cfg.reconnect_ms = reconnect_ms;
             cfg.transport = transport_of(transport);
             cfg.devices = devices;
             return std::make_unique<PyFrameSink>(std::move(cfg));
           }),
           py::arg("destinations"), py::arg("node") = 0, py::arg("nodes") = 1, py::arg("route") = "frame",
           py::arg("credits") = 8, py::arg("when_full") = "drop", py::arg("wait_ms") = 1000,
           py::arg("reconnect_ms") = 200, py::arg("transport") = "auto", py::arg("devices") = "")
      .def("send", &PyFrameSink::send, py::arg("data"), py::kw_only(), py::arg("stream") = 0, py::arg("frame") = 0,
           py::arg("complete") = true, py::arg("presence") = py::none(), py::arg("granule") = 0,
           py::arg("bytes_present") = py::none(), py::arg("first_ns") = 0, py::arg("last_ns") = 0,
           "Sends data's bytes as frame `frame` of `stream`; data is held (not copied) until UCX is done "
           "with it. Never blocks with when_full='drop'; waits up to wait_ms for a credit with 'wait'.")
      .def("progress", &PyFrameSink::progress, "Progresses UCX: completions, credits, reconnects; frees sent buffers.")
      .def("drain", &PyFrameSink::drain, py::arg("timeout_ms") = 1000,
           "Progresses until nothing is in flight or timeout_ms; True when drained.")
      .def("stats", &PyFrameSink::stats,
           "{'frames', 'total', 'destinations': [...]}: per destination fragments == acked + refused + "
           "no_credit + peer_down + in_flight_lost + in_flight.")
      .def_property_readonly("pending", &PyFrameSink::pending, "Sent buffers still held for UCX.")
      .def("close", &PyFrameSink::close)
      .def("__enter__", [](py::object self) { return self; })
      .def("__exit__", [](PyFrameSink& s, const py::args&) { s.close(); });
}

}  // namespace netdaq::python
