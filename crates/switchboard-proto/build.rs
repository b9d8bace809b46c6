//! Compiles the two gRPC protos at build time: `proto/lf/a2a/v1/a2a.proto`
//! (A2A 1.0, package `lf.a2a.v1`) and `proto/a2a/v1/a2a.proto` (A2A 0.3,
//! package `a2a.v1`).
//!
//! Why a build script and not generated code committed to `src/gen/`: protox
//! is pure Rust (no `protoc` on the machine or in CI), the proto is the only
//! source of truth, and there is nothing to drift. The descriptor set (both
//! files and their imports) is also written to `OUT_DIR` so the crate can
//! expose it (`FILE_DESCRIPTOR_SET`) for the descriptor comparison tests.
//!
//! The 1.0 service gets messages and a client but no tonic server trait:
//! the server frames its methods by hand, dispatched from the operation
//! table (`switchboard-server/src/grpc_frame.rs`), so a new rpc needs no
//! trait method. The 0.3 service keeps tonic's server, which serves its
//! streaming methods.

use prost_types::FileDescriptorSet;

const V1: &str = "lf/a2a/v1/a2a.proto";
const V03: &str = "a2a/v1/a2a.proto";

fn main() -> Result<(), Box<dyn std::error::Error>> {
    println!("cargo:rerun-if-changed=proto");
    let fds = protox::compile([V1, V03], ["proto"])?;
    let out = std::path::PathBuf::from(std::env::var("OUT_DIR")?);
    std::fs::write(
        out.join("a2a_descriptor.bin"),
        prost::Message::encode_to_vec(&fds),
    )?;
    // Each service from the set without the other one (their imports are
    // the well-known types, which map to prost-types and generate nothing).
    tonic_prost_build::configure()
        .build_client(true)
        .build_server(false)
        .compile_fds(without(&fds, V03))?;
    tonic_prost_build::configure()
        .build_client(true)
        .build_server(true)
        .compile_fds(without(&fds, V1))?;
    Ok(())
}

/// `fds` without the file named `name`.
fn without(fds: &FileDescriptorSet, name: &str) -> FileDescriptorSet {
    FileDescriptorSet {
        file: fds
            .file
            .iter()
            .filter(|f| f.name() != name)
            .cloned()
            .collect(),
    }
}
