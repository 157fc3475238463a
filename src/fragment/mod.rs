//! The fragment endpoint `/fragment`: served from an in-process snapshot, never from the
//! database on the request path.

pub mod markers;
