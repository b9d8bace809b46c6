//! Re-embeds the SQL migrations whenever a file in `migrations/` changes.
//!
//! `sqlx::migrate!("./migrations")` reads the directory at compile time;
//! without this hint Cargo would not rebuild the crate when only a `.sql`
//! file was added or edited.

fn main() {
    println!("cargo:rerun-if-changed=migrations");
}
