// singa-thread-check: drives SINGA 0.3.0's own message-queue table and Context
// from several threads at once, the way one SINGA process does when its stub
// opens a connection to another process while its workers send (and the driver
// registers worker threads while they start). Without the project's patch
// 0003 this crashes (SIGSEGV) or corrupts the tables within seconds; with it,
// it prints the counts and exits 0. Exit 1: a count came out wrong; killed by
// SIGALRM: it hung.
//
// Built against the distributed libsinga (same -D flags, so the classes have
// the library's layout) and shipped in the image for the test that runs it.

#include <pthread.h>
#include <unistd.h>

#include <atomic>
#include <cstdio>
#include <cstring>
#include <thread>
#include <vector>

#include "singa/comm/msg.h"
#include "singa/comm/socket.h"
#include "singa/proto/common.pb.h"
#include "singa/utils/context.h"
#include "singa/utils/singleton.h"

namespace {

constexpr int kSenders = 4;
constexpr int kMessagesPerSender = 50000;   // at least; senders go on until every queue is added
constexpr int kQueuesAdded = 100000;
constexpr int kDevicesSetUp = 200000;

// One "stub" that adds queues (new Dealers, as for new peer processes) while
// sender threads push into the stub's queue and the main thread drains it.
bool MessageTableHoldsUnderConcurrentGrowth() {
  singa::Router router;                      // the stub's queue (-1)
  std::vector<singa::Dealer*> senders;
  for (int i = 0; i < kSenders; i++)         // created before the threads, as Worker::Setup does
    senders.push_back(new singa::Dealer(singa::Addr(0, i, singa::kWorkerParam)));
  std::atomic<bool> go{false}, all_added{false};
  std::atomic<long> sent{0};
  std::vector<std::thread> threads;
  for (int i = 0; i < kSenders; i++) {
    threads.emplace_back([&, i] {
      while (!go.load()) {}
      for (long n = 0; n < kMessagesPerSender || !all_added.load(); n++) {
        auto* msg = new singa::Msg(singa::Addr(0, i, singa::kWorkerParam), singa::Addr(-1, -1, singa::kStub));
        msg->set_type(singa::kGet);
        senders[i]->Send(&msg);
        sent++;
      }
      auto* last = new singa::Msg(singa::Addr(0, i, singa::kWorkerParam), singa::Addr(-1, -1, singa::kStub));
      last->set_type(singa::kStop);
      senders[i]->Send(&last);
    });
  }
  std::vector<singa::Dealer*> added;
  threads.emplace_back([&] {
    while (!go.load()) {}
    for (int n = 0; n < kQueuesAdded; n++)   // Addr's id field has 8 bits
      added.push_back(new singa::Dealer(singa::Addr(1 + n / 200, n % 200, singa::kServer)));
    all_added.store(true);
  });
  go.store(true);
  long received = 0;
  for (int stopped = 0; stopped < kSenders;) {
    singa::Msg* msg = router.Receive(100);
    if (msg->type() == singa::kStop) stopped++;
    else received++;
    delete msg;
  }
  for (auto& t : threads) t.join();
  std::printf("message table: %s messages received while %d queues were added\n",
              received == sent.load() ? "all" : "NOT ALL", kQueuesAdded);
  for (auto* d : senders) delete d;
  for (auto* d : added) delete d;
  return received == sent.load() && singa::msgQueues.size() == static_cast<size_t>(1 + kSenders + kQueuesAdded);
}

std::thread::id FakeThreadId(unsigned long n) {
  static_assert(sizeof(std::thread::id) == sizeof(pthread_t), "std::thread::id wraps a pthread_t");
  std::thread::id id;
  pthread_t handle = static_cast<pthread_t>(n);
  std::memcpy(static_cast<void*>(&id), &handle, sizeof handle);
  return id;
}

// The driver's SetupDevice for many threads while running threads poll their
// own device id and create their own random generators.
bool ContextHoldsUnderConcurrentSetup() {
  auto* context = Singleton<singa::Context>::Instance();
  std::atomic<bool> done{false};
  std::atomic<long> lookups{0};
  std::vector<std::thread> threads;
  for (int i = 0; i < kSenders; i++) {
    threads.emplace_back([&] {
      while (!done.load()) {
        context->device_id();
        context->rand_generator();
        lookups++;
      }
    });
  }
  for (int n = 0; n < kDevicesSetUp; n++)
    context->SetupDevice(FakeThreadId(0x100000UL + n), -1);
  done.store(true);
  for (auto& t : threads) t.join();
  int found = 0;
  for (int n = 0; n < kDevicesSetUp; n++)
    found += context->device_id(FakeThreadId(0x100000UL + n)) == -1;
  std::printf("context: %d threads set up while %ld lookups ran\n", found, lookups.load());
  return found == kDevicesSetUp;
}

}  // namespace

// Usage: singa-thread-check [queues|context]   (no argument: both)
int main(int argc, char** argv) {
  alarm(120);
  const char* only = argc > 1 ? argv[1] : "";
  bool ok = true;
  if (std::strcmp(only, "context") != 0) ok = MessageTableHoldsUnderConcurrentGrowth() && ok;
  if (std::strcmp(only, "queues") != 0) ok = ContextHoldsUnderConcurrentSetup() && ok;
  std::printf("%s\n", ok ? "ok" : "WRONG COUNTS");
  return ok ? 0 : 1;
}
