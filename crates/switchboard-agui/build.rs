//! Compiles `proto/ag_ui/events.proto` (AG-UI 1.0's `ag_ui` package) into a
//! descriptor set in `OUT_DIR`, which `src/proto.rs` loads at run time.
//!
//! protox is pure Rust, so neither the machine nor CI needs `protoc`, and the
//! proto file stays the only source of truth. There is no generated Rust:
//! the crate encodes through `prost-reflect`'s dynamic messages (see
//! `src/proto.rs` for why).

fn main() -> Result<(), Box<dyn std::error::Error>> {
    println!("cargo:rerun-if-changed=proto");
    let fds = protox::compile(["ag_ui/events.proto"], ["proto"])?;
    let out = std::path::PathBuf::from(std::env::var("OUT_DIR")?);
    std::fs::write(
        out.join("agui_descriptor.bin"),
        prost::Message::encode_to_vec(&fds),
    )?;
    Ok(())
}
