// The extension module netdaq._netdaq; python/netdaq/__init__.py is its public face.
#include "bindings.h"
#include "run_block.h"

PYBIND11_MODULE(_netdaq, m) {
  m.doc() = "netdaq: packets from NICs into CPU and GPU memory (docs/python.md)";
  // Config files written for the CLI (examples/*.yaml) carry its `run:` block; Python loads them too.
  netdaq::cli::register_run_block();
  m.attr("__version__") = netdaq::version();
  m.def("engines", &netdaq::engines, "Names of the engines compiled into this build.");
  netdaq::python::bind_errors(m);
  netdaq::python::bind_config(m);
  netdaq::python::bind_rx(m);
  netdaq::python::bind_tx(m);
  netdaq::python::bind_session(m);
  netdaq::python::bind_gpu(m);
#ifdef NETDAQ_HAVE_FLEET
  netdaq::python::bind_fleet(m);
#endif
}
