//! # switchboard-core (work in progress)
pub mod memory;
pub mod store;
pub use memory::InMemoryStore;
pub use store::{ListCursor, LoggedEvent, StoreError, TaskPage, TaskQuery, TaskRecord, TaskStore};

#[cfg(test)]
mod tests {
    #[tokio::test]
    async fn memory_store_conforms() {
        crate::store::conformance::run_all(&crate::InMemoryStore::new()).await;
    }
}
