// A peer that speaks UCX but not netdaq's fleet header: the receiver refuses its fragments as
// malformed, and where the header still names the sender's slot, the refused credit goes back.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstring>

#include "fleet/ucx_context.h"
#include "fleet/wire.h"
#include "fleet_test_util.h"

namespace {

using namespace fleettest;
using namespace netdaq::fleet::detail;

struct RawPeer {
  RawPeer() : ucx(Transport::tcp, "") {}
  static ucs_status_t on_credit(void* arg, const void* header, size_t length, void*, size_t,
                                const ucp_am_recv_param_t*) {
    auto* self = static_cast<RawPeer*>(arg);
    Credit c;
    if (decode_credit(header, length, c)) self->credits.push_back(c);
    return UCS_OK;
  }
  static void on_sent(void* request, ucs_status_t, void*) { ucp_request_free(request); }
  void send(const void* header, size_t length, const void* data, size_t bytes) {
    ucp_request_param_t p{};
    p.op_attr_mask = UCP_OP_ATTR_FIELD_CALLBACK | UCP_OP_ATTR_FIELD_FLAGS;
    p.cb.send = &RawPeer::on_sent;
    p.flags = UCP_AM_SEND_FLAG_REPLY;
    ucs_status_ptr_t r = ucp_am_send_nbx(ep, am_fragment, header, length, data, bytes, &p);
    ASSERT_FALSE(UCS_PTR_IS_ERR(r));
  }
  UcxWorker ucx;
  ucp_ep_h ep = nullptr;
  std::vector<Credit> credits;
};

TEST(fleet_malformed, ForeignHeadersAreRefusedAndCounted) {
  FrameReceiver rx({.listen = loopback(0), .max_bytes = 4096, .buffers = 4, .transport = Transport::tcp});
  RawPeer peer;
  peer.ucx.set_handler(am_credit, &RawPeer::on_credit, &peer);
  SockAddr sa = resolve(loopback(rx.port()));
  ucp_ep_params_t ep{};
  ep.field_mask = UCP_EP_PARAM_FIELD_FLAGS | UCP_EP_PARAM_FIELD_SOCK_ADDR | UCP_EP_PARAM_FIELD_ERR_HANDLING_MODE;
  ep.flags = UCP_EP_PARAMS_FLAGS_CLIENT_SERVER;
  ep.sockaddr.addr = reinterpret_cast<const sockaddr*>(&sa.storage);
  ep.sockaddr.addrlen = sa.length;
  ep.err_mode = UCP_ERR_HANDLING_MODE_PEER;
  ASSERT_EQ(ucp_ep_create(peer.ucx.worker(), &ep, &peer.ep), UCS_OK);
  auto step = [&] {
    peer.ucx.progress();
    rx.progress();
  };
  static const char junk[64] = "not a fleet header";
  static const std::byte data[100] = {};
  peer.send(junk, sizeof junk, data, sizeof data);  // no magic: refused, no credit can go back
  // A fleet header whose presence count disagrees with its length: refused, credit back.
  std::vector<std::byte> h(kMaxFragmentHeaderBytes);
  FrameMeta m{.frame = 42, .bytes = sizeof data, .bytes_present = sizeof data, .granule = 8};
  const size_t n = encode_fragment(m, 0x700000003ull, 2, h.data());
  peer.send(h.data(), n - 8, data, sizeof data);
  // A good header whose bytes disagree with the data that came. (Its own buffer: UCX reads a
  // header until the send completes, and this endpoint may not be connected yet.)
  std::vector<std::byte> h2(kMaxFragmentHeaderBytes);
  const size_t good = encode_fragment(m, 0x700000004ull, 0, h2.data());
  peer.send(h2.data(), good, data, 10);
  ASSERT_TRUE(pump_until(step, [&] { return rx.stats().fragments == 3 && peer.credits.size() == 2; }));
  const ReceiverStats r = rx.stats();
  EXPECT_EQ(r.malformed, 3u);
  EXPECT_EQ(r.placed, 0u);
  for (const Credit& c : peer.credits) {
    EXPECT_EQ(c.status, CreditStatus::refused);
    EXPECT_EQ(c.reason, RefusalReason::malformed);
  }
  // Each refusal names the slot its header gave (in whatever order the two came).
  EXPECT_EQ(std::min(peer.credits[0].seq, peer.credits[1].seq), 0x700000003ull);
  EXPECT_EQ(std::max(peer.credits[0].seq, peer.credits[1].seq), 0x700000004ull);
  InFrame in;
  EXPECT_FALSE(rx.pop(in));
  close_endpoint(peer.ucx, peer.ep, true);
}

}  // namespace
