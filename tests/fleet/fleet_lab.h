// A fleet's network for integration tests: a "switch" namespace holding a bridge, ingest and
// builder namespaces each with a port on it (the fleet's network, where UCX runs over TCP),
// and per ingest a sender namespace joined to it by a veth pair (the sensor's link). Names
// follow NetnsLab's (ndq<pid>_...), so a lab left by a crashed test is removed by the next
// lab; everything is removed by the destructor, also when a test fails.
#pragma once

#include <string>
#include <vector>

namespace ndqtest {

class FleetLab {
 public:
  struct Ingest {
    std::string ns, fabric_ip;        // on the bridge
    std::string fabric_veth;          // its port there
    std::string sensor_veth, sensor_ip;  // its end of the sensor link
    std::string sender_ns, sender_ip;    // the sensor's namespace and address
  };
  struct Builder {
    std::string ns, fabric_ip, fabric_veth;
  };

  // Throws std::runtime_error (the failing command and its output), removing what it made.
  FleetLab(unsigned ingests, unsigned builders);
  ~FleetLab();
  FleetLab(const FleetLab&) = delete;
  FleetLab& operator=(const FleetLab&) = delete;

  const Ingest& ingest(unsigned i) const { return ingests_.at(i); }
  const Builder& builder(unsigned b) const { return builders_.at(b); }
  const std::string& switch_ns() const { return switch_ns_; }
  const std::string& switch_ip() const { return switch_ip_; }  // the bridge's address (Prometheus)

 private:
  void teardown() noexcept;
  // Returns the namespace's end of the port.
  std::string add_port(const std::string& ns, const std::string& ip, const std::string& veth);
  std::vector<std::string> made_;  // namespaces to delete
  std::string switch_ns_, switch_ip_, net_;
  std::vector<Ingest> ingests_;
  std::vector<Builder> builders_;
};

}  // namespace ndqtest
