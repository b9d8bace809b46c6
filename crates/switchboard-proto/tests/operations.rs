//! The operation table against the proto: every row is an rpc of
//! `lf.a2a.v1.A2AService` with the row's name, streaming exactly when the
//! row streams, taking and answering the prost types the row's
//! `GrpcOperation` names; and every rpc is a row. The compiler checks that
//! each row has its prost types (`convert.rs`); this checks the proto agrees
//! with them, since the 1.0 server no longer implements a generated trait
//! that would.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use prost::Message as _;
use prost_types::FileDescriptorSet;
use switchboard_proto::{FILE_DESCRIPTOR_SET, GrpcOperation, SERVICE_NAME, op};
use switchboard_protocol::Operation;

/// The last path segment of a Rust type's name, `Empty` for `()`.
fn message_name<T>() -> &'static str {
    let name = std::any::type_name::<T>();
    if name == "()" {
        return "Empty";
    }
    name.rsplit("::").next().unwrap()
}

/// Each row: its operation and the message names of its prost types.
macro_rules! rows {
    ($($(#[$doc:meta])* $name:ident { $($row:tt)* })*) => {
        vec![$((
            <op::$name as GrpcOperation>::OPERATION,
            message_name::<<op::$name as GrpcOperation>::Request>(),
            message_name::<<op::$name as GrpcOperation>::Response>(),
        )),*]
    };
}

#[test]
fn every_row_is_an_rpc_of_the_proto_and_every_rpc_a_row() {
    let fds = FileDescriptorSet::decode(FILE_DESCRIPTOR_SET).unwrap();
    let (package, service) = SERVICE_NAME.rsplit_once('.').unwrap();
    let service = fds
        .file
        .iter()
        .filter(|f| f.package() == package)
        .flat_map(|f| &f.service)
        .find(|s| s.name() == service)
        .expect("the 1.0 service is in the descriptor");
    let rows: Vec<(Operation, &str, &str)> = switchboard_protocol::for_each_operation!(rows);
    assert_eq!(rows.len(), Operation::ALL.len());
    for (operation, request, response) in &rows {
        let method = service
            .method
            .iter()
            .find(|m| m.name() == operation.name())
            .unwrap_or_else(|| panic!("{operation} has no rpc in {SERVICE_NAME}"));
        assert_eq!(
            method.server_streaming(),
            operation.is_streaming(),
            "{operation}: streaming"
        );
        assert!(!method.client_streaming(), "{operation}");
        let last = |t: &str| t.rsplit('.').next().unwrap().to_string();
        assert_eq!(last(method.input_type()), *request, "{operation}: request");
        assert_eq!(
            last(method.output_type()),
            *response,
            "{operation}: response"
        );
    }
    assert_eq!(
        service.method.len(),
        rows.len(),
        "every rpc of {SERVICE_NAME} is a row of the table"
    );
}
