// A thread-safe set of live objects behind opaque API handles, so that a stale or foreign
// handle is rejected with an error instead of being dereferenced.
#ifndef NCCLWATCH_SIM_CUDART_HANDLE_REGISTRY_H_
#define NCCLWATCH_SIM_CUDART_HANDLE_REGISTRY_H_

#include <mutex>
#include <set>

namespace ncclsim {

template <typename T>
class HandleRegistry {
 public:
  void Add(const T* object) {
    std::lock_guard<std::mutex> lock(mu_);
    live_.insert(object);
  }
  // False if `object` was not live.
  bool Remove(const T* object) {
    std::lock_guard<std::mutex> lock(mu_);
    return live_.erase(object) == 1;
  }
  // The object behind `handle`, or null if it is not live.
  template <typename Handle>
  T* Lookup(Handle handle) const {
    T* object = reinterpret_cast<T*>(handle);
    std::lock_guard<std::mutex> lock(mu_);
    return live_.count(object) ? object : nullptr;
  }
  size_t size() const {
    std::lock_guard<std::mutex> lock(mu_);
    return live_.size();
  }

 private:
  mutable std::mutex mu_;
  std::set<const T*> live_;
};

}  // namespace ncclsim

#endif  // NCCLWATCH_SIM_CUDART_HANDLE_REGISTRY_H_
