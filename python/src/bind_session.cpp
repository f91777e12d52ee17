// netdaq.Session: a context manager over the C++ Session. Opening and stopping release the
// GIL (they can take seconds: DPDK's EAL, worker threads, RDMA connections).

#include <filesystem>

#include "netdaq/metrics.h"
#include "rx.h"
#include "stats.h"

namespace netdaq::python {
namespace {

SessionPtr open(Config c) {
  py::gil_scoped_release nogil;
  return std::make_shared<Session>(std::move(c));
}

}  // namespace

void bind_session(py::module_& m) {
  py::class_<Session, SessionPtr>(m, "Session",
                                  "Opens every queue of a Config. `with Session(cfg) as s:` stops it at the end; "
                                  "its memory goes when the last burst, view or pipeline of it goes.")
      .def(py::init(&open), py::arg("config"))
      .def(py::init([](const std::filesystem::path& p) { return open(Config::load(p.string())); }), py::arg("path"))
      .def("__enter__", [](py::object self) { return self; })
      .def("__exit__", [](Session& s, py::args) {
        py::gil_scoped_release nogil;
        s.stop();
      })
      .def("stop", &Session::stop, py::call_guard<py::gil_scoped_release>(),
           "Stops workers and engines; idempotent.")
      .def(
          "rx_queue",
          [](const SessionPtr& s, const std::string& iface, uint16_t id) { return PyRxQueue{s, &s->rx_queue(iface, id)}; },
          py::arg("interface"), py::arg("id") = 0)
      .def(
          "tx_queue", [](const SessionPtr& s, const std::string& iface, uint16_t id) { return make_tx_queue(s, s->tx_queue(iface, id)); },
          py::arg("interface"), py::arg("id") = 0)
      .def("rx_queues",
           [](const SessionPtr& s) {
             std::vector<PyRxQueue> out;
             for (RxQueue* q : s->rx_queues()) out.push_back(PyRxQueue{s, q});
             return out;
           })
      .def("tx_queues",
           [](const SessionPtr& s) {
             py::list out;
             for (TxQueue* q : s->tx_queues()) out.append(make_tx_queue(s, *q));
             return out;
           })
      .def("stats",
           [](const Session& s) {
             py::list out;
             for (const auto& q : s.stats()) out.append(to_dict(q));
             return out;
           },
           "Every queue's counters as dicts; each lost packet is under one reason of 'drops'.")
      .def("flow_stats",
           [](const Session& s) {
             py::list out;
             for (const auto& f : s.flow_stats()) out.append(to_dict(f));
             return out;
           })
      .def("prometheus_text", [](const Session& s) { return prometheus_text(s); },
           "The Prometheus text exposition of stats() and flow_stats() (docs/metrics.md).")
      .def_property_readonly("config", [](const Session& s) { return s.config(); });
}

}  // namespace netdaq::python
