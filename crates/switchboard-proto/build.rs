//! Compiles the two gRPC protos at build time: `proto/lf/a2a/v1/a2a.proto`
//! (A2A 1.0, package `lf.a2a.v1`) and `proto/a2a/v1/a2a.proto` (A2A 0.3,
//! package `a2a.v1`).
//!
//! Why a build script and not generated code committed to `src/gen/`: protox
//! is pure Rust (no `protoc` on the machine or in CI), the proto is the only
//! source of truth, and there is nothing to drift. The descriptor set (both
//! files and their imports) is also written to `OUT_DIR` so the crate can
//! expose it (`FILE_DESCRIPTOR_SET`) for the descriptor comparison tests.

fn main() -> Result<(), Box<dyn std::error::Error>> {
    println!("cargo:rerun-if-changed=proto");
    let fds = protox::compile(["lf/a2a/v1/a2a.proto", "a2a/v1/a2a.proto"], ["proto"])?;
    let out = std::path::PathBuf::from(std::env::var("OUT_DIR")?);
    std::fs::write(
        out.join("a2a_descriptor.bin"),
        prost::Message::encode_to_vec(&fds),
    )?;
    tonic_prost_build::configure()
        .build_client(true)
        .build_server(true)
        .compile_fds(fds)?;
    Ok(())
}
