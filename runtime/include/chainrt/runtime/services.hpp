// chainrt runtime: ROS 2 services and clients on rcl (rcl_service_t / rcl_client_t).
//
// Scheduling: a service's requests and a client's responses are inputs like a subscription's
// messages (SubscriptionBase: the rmw "new request/response" listener enlists the entity, an
// executor thread takes the inputs into a preallocated ring and queues ONE callback instance
// with the deadline of its chain instance). So a request or a response is dispatched by the
// ready queue under the policy of the executor (FP priority of its CallbackOptions, EDF
// deadline of its Stamp), never inline in a middleware thread.
//  - Service: the request's stamp comes from the optional `stamp_of(request)` extractor (none:
//    no chain, deadline infinite); the callback fills the response, which is sent when it
//    returns.
//  - Client: async_send_request() remembers the stamp of the callback that sends it
//    (current_stamp()); the response callback runs with that stamp, so a response that is
//    part of a chain inherits the chain instance's release and absolute deadline (EDF paper
//    Sec. IV-B) and a chain may end in it (it is a leaf like any callback).
// Dispatch path: no allocation by chainrt after start (rings and the pending-request table are
// preallocated; async_send_request takes a short mutex of its client; when `max_pending`
// requests are outstanding it refuses with -1 instead of growing). The user's Request and
// Response types may allocate in their own fields.
#pragma once

#include <rcl/client.h>
#include <rcl/error_handling.h>
#include <rcl/graph.h>
#include <rcl/service.h>
#include <rosidl_typesupport_cpp/service_type_support.hpp>

#include <atomic>
#include <chrono>
#include <functional>
#include <mutex>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include "chainrt/runtime/node.hpp"

namespace chainrt::runtime {

namespace detail {
[[noreturn]] void throw_rcl_error(const std::string& what);  // node.cpp: message + rcl error
}  // namespace detail

template <class Srv>
class Service : public SubscriptionBase {
 public:
  using Request = typename Srv::Request;
  using Response = typename Srv::Response;
  using Callback = std::function<void(const Request&, Response&)>;
  using StampOf = std::function<Stamp(const Request&)>;

  // `depth`: requests queued before the oldest is dropped (KEEP_LAST).
  Service(Node& node, const std::string& name, Callback cb, CallbackOptions options,
          StampOf stamp_of = nullptr, std::size_t depth = 10)
      : SubscriptionBase(node, CallbackKind::Service, name, depth, std::move(options)),
        cb_(std::move(cb)),
        stamp_of_(std::move(stamp_of)) {
    srv_ = rcl_get_zero_initialized_service();
    rcl_service_options_t o = rcl_service_get_default_options();
    o.qos.depth = depth_;
    if (rcl_service_init(&srv_, node.get(), rosidl_typesupport_cpp::get_service_type_support_handle<Srv>(),
                         name.c_str(), &o) != RCL_RET_OK)
      detail::throw_rcl_error("service '" + name + "'");
  }
  ~Service() override {
    if (rcl_service_set_on_new_request_callback(&srv_, nullptr, nullptr) != RCL_RET_OK) rcl_reset_error();
    if (rcl_service_fini(&srv_, node_->get()) != RCL_RET_OK) rcl_reset_error();
  }
  // The service name after remapping and namespace expansion.
  std::string service_name() const {
    const char* n = rcl_service_get_service_name(&srv_);
    return n ? n : topic_;
  }
  std::uint64_t send_errors() const noexcept { return send_errors_.load(std::memory_order_relaxed); }

  void invoke(int slot) override {
    Response& res = responses_[slot];
    res = Response();
    cb_(requests_[slot], res);
    if (rcl_send_response(&srv_, &headers_[slot], &res) != RCL_RET_OK) {
      rcl_reset_error();
      send_errors_.fetch_add(1, std::memory_order_relaxed);  // the client is gone
    }
  }

 protected:
  void* slot_message(int slot) noexcept override { return &requests_[slot]; }
  void resize_slots(std::size_t n) override {
    requests_.resize(n);
    responses_.resize(n);
    headers_.resize(n);
  }
  Stamp stamp_of_slot(int slot) noexcept override {
    if (!stamp_of_) return Stamp{};
    try {
      return stamp_of_(requests_[slot]);
    } catch (...) {
      return Stamp{};
    }
  }
  rcl_ret_t take_into(int slot) noexcept override {
    try {
      return rcl_take_request(&srv_, &headers_[slot], &requests_[slot]);
    } catch (...) {
      return RCL_RET_ERROR;
    }
  }
  rcl_ret_t attach_listener(void (*fn)(const void*, std::size_t), const void* user) override {
    return rcl_service_set_on_new_request_callback(&srv_, fn, user);
  }

 private:
  rcl_service_t srv_;
  Callback cb_;
  StampOf stamp_of_;
  std::vector<Request> requests_;
  std::vector<Response> responses_;
  std::vector<rmw_request_id_t> headers_;
  std::atomic<std::uint64_t> send_errors_{0};  // instances may run in parallel (reentrant group)
};

template <class Srv>
class Client : public SubscriptionBase {
 public:
  using Request = typename Srv::Request;
  using Response = typename Srv::Response;
  // Called with the response and the sequence number async_send_request() returned.
  using Callback = std::function<void(const Response&, std::int64_t)>;

  Client(Node& node, const std::string& name, Callback cb, CallbackOptions options,
         std::size_t max_pending = 16)
      : SubscriptionBase(node, CallbackKind::Client, name, max_pending, std::move(options)),
        cb_(std::move(cb)),
        pending_(max_pending == 0 ? 1 : max_pending) {
    client_ = rcl_get_zero_initialized_client();
    rcl_client_options_t o = rcl_client_get_default_options();
    o.qos.depth = depth_;
    if (rcl_client_init(&client_, node.get(), rosidl_typesupport_cpp::get_service_type_support_handle<Srv>(),
                        name.c_str(), &o) != RCL_RET_OK)
      detail::throw_rcl_error("client of '" + name + "'");
  }
  ~Client() override {
    if (rcl_client_set_on_new_response_callback(&client_, nullptr, nullptr) != RCL_RET_OK) rcl_reset_error();
    if (rcl_client_fini(&client_, node_->get()) != RCL_RET_OK) rcl_reset_error();
  }

  // Send a request; its response is dispatched to the callback with the stamp of the calling
  // callback instance. Returns the sequence number, or -1 when the middleware refused it or
  // `max_pending` requests await their responses. Thread-safe; no allocation by chainrt.
  std::int64_t async_send_request(const Request& request) noexcept {
    std::lock_guard<std::mutex> lk(pending_mutex_);  // also orders the response's lookup after us
    Pending* free_entry = nullptr;
    for (auto& p : pending_)
      if (p.sequence < 0) {
        free_entry = &p;
        break;
      }
    if (!free_entry) {
      ++refused_;
      return -1;
    }
    std::int64_t seq = -1;
    if (rcl_send_request(&client_, &request, &seq) != RCL_RET_OK) {
      rcl_reset_error();
      ++refused_;
      return -1;
    }
    free_entry->sequence = seq;
    free_entry->stamp = current_stamp();
    return seq;
  }
  // Drop the bookkeeping of a request whose response is no longer wanted (e.g. a timeout).
  void forget(std::int64_t sequence) noexcept {
    std::lock_guard<std::mutex> lk(pending_mutex_);
    for (auto& p : pending_)
      if (p.sequence == sequence) p.sequence = -1;
  }
  std::size_t pending() const noexcept {
    std::lock_guard<std::mutex> lk(pending_mutex_);
    std::size_t n = 0;
    for (auto& p : pending_) n += p.sequence >= 0;
    return n;
  }
  std::uint64_t refused() const noexcept { return refused_.load(); }
  bool service_is_ready() const {
    bool ok = false;
    if (rcl_service_server_is_available(node_->get(), &client_, &ok) != RCL_RET_OK) {
      rcl_reset_error();
      return false;
    }
    return ok;
  }
  // Waits (sleeping, off the dispatch path) until a server is matched or `timeout` passed.
  bool wait_for_service(Duration timeout) const {
    const Duration end = now_ns() + timeout;
    while (!service_is_ready()) {
      if (now_ns() > end) return false;
      std::this_thread::sleep_for(std::chrono::milliseconds(5));
    }
    return true;
  }
  std::string service_name() const {
    const char* n = rcl_client_get_service_name(&client_);
    return n ? n : topic_;
  }

  void invoke(int slot) override { cb_(responses_[slot], headers_[slot].sequence_number); }

 protected:
  void* slot_message(int slot) noexcept override { return &responses_[slot]; }
  void resize_slots(std::size_t n) override {
    responses_.resize(n);
    headers_.resize(n);
  }
  Stamp stamp_of_slot(int slot) noexcept override {
    std::lock_guard<std::mutex> lk(pending_mutex_);
    for (auto& p : pending_)
      if (p.sequence == headers_[slot].sequence_number) {
        p.sequence = -1;
        return p.stamp;
      }
    return Stamp{};  // forgotten, or sent by another client: no chain instance
  }
  rcl_ret_t take_into(int slot) noexcept override {
    try {
      return rcl_take_response(&client_, &headers_[slot], &responses_[slot]);
    } catch (...) {
      return RCL_RET_ERROR;
    }
  }
  rcl_ret_t attach_listener(void (*fn)(const void*, std::size_t), const void* user) override {
    return rcl_client_set_on_new_response_callback(&client_, fn, user);
  }

 private:
  struct Pending {
    std::int64_t sequence = -1;
    Stamp stamp;
  };
  rcl_client_t client_;
  Callback cb_;
  std::vector<Response> responses_;
  std::vector<rmw_request_id_t> headers_;
  mutable std::mutex pending_mutex_;
  std::vector<Pending> pending_;
  std::atomic<std::uint64_t> refused_{0};
};

// ------------------------------------------------------------- Node::create_service / client
template <class Srv, class Callback, class... Args>
std::shared_ptr<Service<Srv>> Node::create_service(const std::string& name, Callback cb,
                                                   CallbackOptions options, Args&&... args) {
  if (options.name.empty()) options.name = name_ + "/" + name;
  auto s = std::make_shared<Service<Srv>>(*this, name, typename Service<Srv>::Callback(std::move(cb)),
                                          std::move(options), std::forward<Args>(args)...);
  adopt(s);
  return s;
}

template <class Srv, class Callback>
std::shared_ptr<Client<Srv>> Node::create_client(const std::string& name, Callback on_response,
                                                 CallbackOptions options, std::size_t max_pending) {
  if (options.name.empty()) options.name = name_ + "/" + name + "/client";
  auto c = std::make_shared<Client<Srv>>(*this, name, typename Client<Srv>::Callback(std::move(on_response)),
                                         std::move(options), max_pending);
  adopt(c);
  return c;
}

}  // namespace chainrt::runtime
