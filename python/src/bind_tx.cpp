// netdaq.TxQueue and netdaq.TxBurst: buffers from the queue's pool, filled from Python
// objects (one copy, the unavoidable one), then sent. Nothing of a TX buffer is exported, so
// no view can outlive the moment the engine owns it.

#include <cstring>

#include "bindings.h"
#include "stats.h"

namespace netdaq::python {
namespace {

struct PyTxQueue {
  SessionPtr session;
  TxQueue* queue;
};

class PyTxBurst {
 public:
  PyTxBurst(SessionPtr s, TxBurst b) : session_(std::move(s)), burst_(std::move(b)) {}

  TxBurst& get() {
    if (released_) throw Released("the TX burst was released or fully sent");
    return burst_;
  }
  size_t size() const noexcept { return released_ ? 0 : burst_.size(); }
  bool released() const noexcept { return released_; }

  // Copies a C-contiguous buffer into packet i and sets its size.
  void set(size_t i, const py::buffer& data) {
    TxBurst& b = get();
    if (i >= b.size()) throw py::index_error("packet " + std::to_string(i) + " of a TX burst of " + std::to_string(b.size()));
    py::buffer_info info = data.request();
    if (!is_contiguous(info)) throw py::value_error("set(): the data must be C-contiguous");
    const auto len = static_cast<size_t>(info.size * info.itemsize);
    check_fits(b[i], i, len);
    copy_into(b[i], static_cast<const std::byte*>(info.ptr), len);
  }

  // Row r of a 2-D C-contiguous array into packet r (sizes[r] bytes of it when given).
  size_t fill(const py::buffer& rows, std::optional<std::vector<uint32_t>> sizes) {
    TxBurst& b = get();
    py::buffer_info info = rows.request();
    if (info.ndim != 2 || !is_contiguous(info))
      throw py::value_error("fill(): a C-contiguous 2-D array (packets x bytes per packet) is needed");
    const size_t n = std::min<size_t>(b.size(), info.shape[0]);
    const size_t row_bytes = info.shape[1] * info.itemsize;
    if (sizes && sizes->size() < n) throw py::value_error("fill(): fewer sizes than rows");
    for (size_t i = 0; i < n; ++i) {
      const size_t len = sizes ? (*sizes)[i] : row_bytes;
      if (len > row_bytes) throw py::value_error("fill(): sizes[" + std::to_string(i) + "] is larger than a row");
      check_fits(b[i], i, len);
    }
    py::gil_scoped_release nogil;  // `info` keeps the array's buffer; the copies may be megabytes
    for (size_t i = 0; i < n; ++i)
      copy_into(b[i], static_cast<const std::byte*>(info.ptr) + i * row_bytes, sizes ? (*sizes)[i] : row_bytes);
    return n;
  }

  size_t send() {
    size_t n = get().send();
    if (burst_.empty()) released_ = true;
    return n;
  }
  void release() noexcept {
    burst_.release();
    released_ = true;
  }

 private:
  static bool is_contiguous(const py::buffer_info& info) {
    py::ssize_t expect = info.itemsize;
    for (py::ssize_t d = info.ndim - 1; d >= 0; --d) {
      if (info.shape[d] > 1 && info.strides[d] != expect) return false;
      expect *= info.shape[d];
    }
    return true;
  }
  static void check_fits(Packet& p, size_t i, size_t len) {
    if (len > p.buffer().size())
      throw py::value_error("packet " + std::to_string(i) + ": " + std::to_string(len) +
                            " bytes do not fit its buffer of " + std::to_string(p.buffer().size()));
  }
  static void copy_into(Packet& p, const std::byte* src, size_t len) noexcept {
    std::memcpy(p.buffer().data(), src, len);
    p.set_size(static_cast<uint32_t>(len));
  }

  SessionPtr session_;  // the pool's memory outlives the burst
  TxBurst burst_;
  bool released_ = false;
};

}  // namespace

py::object make_tx_queue(SessionPtr s, TxQueue& q) { return py::cast(PyTxQueue{std::move(s), &q}); }

void bind_tx(py::module_& m) {
  py::class_<PyTxBurst>(m, "TxBurst",
                        "Buffers from a TX queue's pool: fill them (set, fill), then send(); what is not sent "
                        "stays for another send() or is counted tx_unsent on release().")
      .def("__len__", &PyTxBurst::size)
      .def("__bool__", [](const PyTxBurst& b) { return b.size() > 0; })
      .def_property_readonly("released", &PyTxBurst::released)
      .def("set", &PyTxBurst::set, py::arg("index"), py::arg("data"), "Copies bytes-like data into packet `index`.")
      .def("fill", &PyTxBurst::fill, py::arg("rows"), py::arg("sizes") = py::none(),
           "Copies row i of a 2-D array into packet i (sizes[i] bytes of it when given); returns the rows used.")
      .def("send", &PyTxBurst::send, "Hands what the engine accepts now to it; returns how many were accepted.")
      .def("release", &PyTxBurst::release)
      .def("__enter__", [](py::object self) { return self; })
      .def("__exit__", [](PyTxBurst& b, py::args) { b.release(); });

  py::class_<PyTxQueue>(m, "TxQueue")
      .def("allocate", [](const PyTxQueue& q, size_t n) { return PyTxBurst(q.session, q.queue->allocate(n)); },
           py::arg("n"), "Up to n buffers (fewer when the pool runs low, counted pool_empty).")
      .def(
          "send",
          [](const PyTxQueue& q, const py::buffer& rows, std::optional<std::vector<uint32_t>> sizes) {
            py::buffer_info info = rows.request();
            if (info.ndim != 2) throw py::value_error("send(): a 2-D array (packets x bytes per packet) is needed");
            PyTxBurst b(q.session, q.queue->allocate(info.shape[0]));
            b.fill(rows, std::move(sizes));
            size_t n = b.size() ? b.send() : 0;
            b.release();
            return n;
          },
          py::arg("rows"), py::arg("sizes") = py::none(),
          "allocate + fill + send: returns the packets accepted; the rest are released (tx_unsent) or were "
          "never allocated (pool_empty).")
      .def("stats", [](const PyTxQueue& q) { return to_dict(q.queue->stats()); })
      .def_property_readonly("name", [](const PyTxQueue& q) { return q.queue->name(); })
      .def_property_readonly("interface", [](const PyTxQueue& q) { return q.queue->interface(); })
      .def_property_readonly("buffer_size", [](const PyTxQueue& q) { return q.queue->buffer_size(); })
      .def("__repr__", [](const PyTxQueue& q) { return "<netdaq.TxQueue " + q.queue->name() + ">"; });
}

}  // namespace netdaq::python
