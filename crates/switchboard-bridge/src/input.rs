//! From AG-UI messages to the outbound A2A message.
//!
//! (Filled in by the bridge work of issue 20: history, gating of
//! system/developer messages, tool results, metadata layering, the Engram
//! lane and `resume` → `a2a.hitl.formResponse`.)
