// Steps to undo a start that failed part way, run newest first.
//
// Each step that succeeded pushes its undo; a failure returns and the destructor undoes what was
// done. A start that completes calls Dismiss, and nothing is undone.
#ifndef CUSCOPE_LIB_CUPTI_UNDO_STACK_H_
#define CUSCOPE_LIB_CUPTI_UNDO_STACK_H_

#include <functional>
#include <utility>
#include <vector>

namespace cuscope::cupti {

class UndoStack {
 public:
  UndoStack() = default;
  ~UndoStack() {
    for (auto it = steps_.rbegin(); it != steps_.rend(); ++it) (*it)();
  }
  UndoStack(const UndoStack&) = delete;
  UndoStack& operator=(const UndoStack&) = delete;

  void Push(std::function<void()> undo) { steps_.push_back(std::move(undo)); }
  void Dismiss() { steps_.clear(); }

 private:
  std::vector<std::function<void()>> steps_;
};

}  // namespace cuscope::cupti

#endif  // CUSCOPE_LIB_CUPTI_UNDO_STACK_H_
