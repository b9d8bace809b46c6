//! protobuf (todo)
