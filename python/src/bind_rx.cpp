// netdaq.RxQueue, netdaq.RxBurst and netdaq.Packet: packets read in place. Per-packet objects
// for convenience; the batch helpers (payloads, sizes, ...) touch every packet in C++.

#include <algorithm>
#include <cstring>

#include "rx.h"
#include "stats.h"

namespace netdaq::python {
namespace {

const py::dtype& u8() {
  static const py::dtype d = py::dtype::of<uint8_t>();
  return d;
}

py::array bytes_view(const std::shared_ptr<RxBurstState>& st, std::span<const std::byte> s) {
  return view_of(st, u8(), {static_cast<py::ssize_t>(s.size())}, {1}, s.data());
}

// One packet of a burst; raises ReleasedError once the burst is released.
struct PyPacket {
  std::shared_ptr<RxBurstState> state;
  size_t index;
  const Packet& get() const {
    if (state->closed) throw Released("the packet's burst was released: its buffer went back to the pool");
    return state->burst[index];
  }
};

// A column of one field of every packet, as a NumPy array.
template <class T, class F>
py::array_t<T> column(const PyRxBurst& b, F field) {
  const auto& st = b.state();
  py::array_t<T> out(static_cast<py::ssize_t>(b.size()));
  T* o = out.mutable_data();
  for (size_t i = 0; i < b.size(); ++i) o[i] = field(st->burst[i]);
  return out;
}

// All payloads as one (packets x size) view, when they are equal in size and evenly spaced.
py::array payloads(const PyRxBurst& b) {
  const auto& st = b.state();
  const RxBurst& burst = st->burst;
  if (b.size() == 0) return view_of(st, u8(), {0, 0}, {0, 1}, nullptr);
  const Packet& first = burst[0];
  const auto* base = reinterpret_cast<const char*>(first.data().data());
  const py::ssize_t len = first.size();
  const py::ssize_t stride = b.size() > 1 ? reinterpret_cast<const char*>(burst[1].data().data()) - base : len;
  for (size_t i = 0; i < b.size(); ++i) {
    const Packet& p = burst[i];
    if (p.segments() != 1 || static_cast<py::ssize_t>(p.size()) != len)
      throw py::buffer_error("payloads(): packet " + std::to_string(i) + " has " + std::to_string(p.size()) +
                             " bytes in " + std::to_string(p.segments()) + " segment(s), packet 0 " +
                             std::to_string(len) + " in 1; gather() copies packets of any size");
    if (reinterpret_cast<const char*>(p.data().data()) != base + stride * static_cast<py::ssize_t>(i))
      throw py::buffer_error("payloads(): packet " + std::to_string(i) +
                             " is not evenly spaced in the pool after packet 0 (its buffers were "
                             "recycled out of order); gather() copies them into one array");
  }
  return view_of(st, u8(), {static_cast<py::ssize_t>(b.size()), len}, {stride, 1}, base);
}

// Every packet's bytes (segments joined) into rows of `out` (packets x at least the largest
// packet, uint8), zero-padded; a new array when out is None. Returns the rows written.
py::array gather(const PyRxBurst& b, std::optional<py::array_t<uint8_t, py::array::c_style>> out) {
  const auto& st = b.state();
  const RxBurst& burst = st->burst;
  size_t width = 0;
  for (const Packet& p : burst) width = std::max<size_t>(width, p.size());
  const auto rows = static_cast<py::ssize_t>(b.size());
  if (!out) out.emplace(std::vector<py::ssize_t>{rows, static_cast<py::ssize_t>(width)});
  if (out->ndim() != 2 || out->shape(0) < rows || out->shape(1) < static_cast<py::ssize_t>(width))
    throw py::value_error("gather(): out must be a C-contiguous uint8 array of at least " + std::to_string(rows) +
                          " x " + std::to_string(width) + " (packets x largest packet)");
  uint8_t* o = out->mutable_data();
  const size_t pitch = out->shape(1);
  {
    py::gil_scoped_release nogil;
    for (size_t i = 0; i < b.size(); ++i) {
      uint8_t* row = o + i * pitch;
      size_t at = 0;
      for (unsigned s = 0; s < burst[i].segments(); ++s) {
        auto seg = burst[i].segment(s);
        std::memcpy(row + at, seg.data(), seg.size());
        at += seg.size();
      }
      std::memset(row + at, 0, pitch - at);
    }
  }
  return (*out)[py::make_tuple(py::slice(0, rows, 1), py::slice(0, out->shape(1), 1))];
}

// One fixed-size field at `offset` of every packet (segments joined), as an array of `dtype`:
// e.g. every sequence number of a burst without a Python loop.
py::array field(const PyRxBurst& b, size_t offset, const py::object& type) {
  const auto& st = b.state();
  const py::dtype dtype = py::dtype::from_args(type);
  const size_t width = dtype.itemsize();
  py::array out(dtype, std::vector<py::ssize_t>{static_cast<py::ssize_t>(b.size())});
  auto* o = static_cast<std::byte*>(out.mutable_data());
  for (size_t i = 0; i < b.size(); ++i) {
    const Packet& p = st->burst[i];
    if (p.size() < offset + width)
      throw py::value_error("field(" + std::to_string(offset) + "): packet " + std::to_string(i) + " has only " +
                            std::to_string(p.size()) + " bytes, the field needs " + std::to_string(offset + width));
    size_t at = offset, done = 0;
    for (unsigned s = 0; s < p.segments() && done < width; ++s) {
      auto seg = p.segment(s);
      if (at >= seg.size()) {
        at -= seg.size();
        continue;
      }
      const size_t n = std::min(width - done, seg.size() - at);
      std::memcpy(o + i * width + done, seg.data() + at, n);
      done += n;
      at = 0;
    }
  }
  return out;
}

}  // namespace

void bind_rx(py::module_& m) {
  py::class_<PyPacket>(m, "Packet", "A received packet, read in place; valid until its burst is released.")
      .def_property_readonly("payload", [](const PyPacket& p) { return bytes_view(p.state, p.get().data()); },
                             "The packet's bytes (segment 0 when header-data split) as a read-only uint8 view.")
      .def("segment", [](const PyPacket& p, unsigned i) { return bytes_view(p.state, p.get().segment(i)); })
      .def_property_readonly("segments", [](const PyPacket& p) { return p.get().segments(); })
      .def_property_readonly("frame", [](const PyPacket& p) { return bytes_view(p.state, p.get().frame()); },
                             "The whole Ethernet frame (afxdp, dpdk); empty for the socket engine.")
      .def_property_readonly("size", [](const PyPacket& p) { return p.get().size(); })
      .def_property_readonly("flow", [](const PyPacket& p) { return p.get().flow(); })
      .def_property_readonly("timestamp_ns", [](const PyPacket& p) { return p.get().timestamp_ns(); })
      .def_property_readonly("immediate", [](const PyPacket& p) { return p.get().immediate(); },
                             "The sender's 32-bit immediate data (rdma write_imm), or None.")
      .def_property_readonly("address",
                             [](const PyPacket& p) { return reinterpret_cast<uintptr_t>(p.get().data().data()); },
                             "Address of the packet's buffer (zero copy: payload's data pointer equals it).")
      .def("__len__", [](const PyPacket& p) { return p.get().size(); });

  py::class_<PyRxBurst>(m, "RxBurst",
                        "Received packets. Use as a context manager, or release(): the buffers go back to the "
                        "pool once no NumPy view of them is left.")
      .def("__len__", &PyRxBurst::size)
      .def("__bool__", [](const PyRxBurst& b) { return b.size() > 0 && !b.released(); })
      .def("__getitem__",
           [](const PyRxBurst& b, py::ssize_t i) {
             const auto n = static_cast<py::ssize_t>(b.size());
             if (i < 0) i += n;
             if (i < 0 || i >= n) throw py::index_error("packet " + std::to_string(i) + " of a burst of " + std::to_string(n));
             return PyPacket{b.state(), static_cast<size_t>(i)};
           })
      .def("__iter__",
           [](const PyRxBurst& b) {
             py::list l;
             for (size_t i = 0; i < b.size(); ++i) l.append(PyPacket{b.state(), i});
             return py::iter(l);
           })
      .def_property_readonly("bytes", &PyRxBurst::bytes, "The packets' bytes in all.")
      .def_property_readonly("released", &PyRxBurst::released)
      .def("release", &PyRxBurst::release)
      .def("__enter__", [](py::object self) { return self; })
      .def("__exit__", [](PyRxBurst& b, py::args) { b.release(); })
      .def("payloads", &payloads,
           "All payloads as one read-only (packets x bytes) view, without a copy; BufferError when the "
           "packets differ in size or are not evenly spaced in the pool (then use gather()).")
      .def("gather", &gather, py::arg("out").noconvert() = py::none(),
           "Copies every packet into the rows of one uint8 array (zero-padded) and returns those rows.")
      .def("field", &field, py::arg("offset"), py::arg("dtype"),
           "The `dtype` value at byte `offset` of every packet, as one array: field(8, '<u8') is every "
           "sequence number of the netdaq payload; big-endian fields take '>u4' etc.")
      .def("sizes", [](const PyRxBurst& b) { return column<uint32_t>(b, [](const Packet& p) { return p.size(); }); })
      .def("flows", [](const PyRxBurst& b) { return column<uint32_t>(b, [](const Packet& p) { return p.flow(); }); })
      .def("timestamps",
           [](const PyRxBurst& b) { return column<uint64_t>(b, [](const Packet& p) { return p.timestamp_ns(); }); })
      .def("immediates",
           [](const PyRxBurst& b) {
             return column<int64_t>(b, [](const Packet& p) { return p.immediate() ? int64_t{*p.immediate()} : -1; });
           },
           "Each packet's immediate data, -1 where it has none.")
      .def("addresses", [](const PyRxBurst& b) {
        return column<uint64_t>(b, [](const Packet& p) { return reinterpret_cast<uintptr_t>(p.data().data()); });
      });

  py::class_<PyRxQueue>(m, "RxQueue")
      .def("poll", [](const PyRxQueue& q) { return PyRxBurst(q.session, q.queue->poll()); },
           "Up to batch_size packets, or an empty burst; never blocks.")
      .def("stats", [](const PyRxQueue& q) { return to_dict(q.queue->stats()); })
      .def_property_readonly("finished", [](const PyRxQueue& q) { return q.queue->finished(); },
                             "True once a finite source (a capture file) was read to its end and every "
                             "packet was handed out or counted as dropped; always False for a network.")
      .def_property_readonly("name", [](const PyRxQueue& q) { return q.queue->name(); })
      .def_property_readonly("interface", [](const PyRxQueue& q) { return q.queue->interface(); })
      .def_property_readonly("batch_size", [](const PyRxQueue& q) { return q.queue->config().batch_size; })
      .def("__repr__", [](const PyRxQueue& q) { return "<netdaq.RxQueue " + q.queue->name() + ">"; });
}

}  // namespace netdaq::python
