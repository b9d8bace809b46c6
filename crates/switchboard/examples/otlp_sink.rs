//! A minimal OTLP/gRPC trace collector for benchmarks (`bench/observe.sh`):
//! it accepts every export, counts the spans, and prints the count when
//! the export stream goes quiet, so a tracing-on server exports to a real
//! endpoint (encoding, batching and sending all paid) without a collector
//! installed.
//!
//! ```text
//! cargo run --release -p switchboard --example otlp_sink -- 127.0.0.1:4317
//! ```

use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};

use opentelemetry_proto::tonic::collector::trace::v1::trace_service_server::{
    TraceService, TraceServiceServer,
};
use opentelemetry_proto::tonic::collector::trace::v1::{
    ExportTraceServiceRequest, ExportTraceServiceResponse,
};

#[derive(Debug, Default, Clone)]
struct Sink {
    spans: Arc<AtomicU64>,
}

#[tonic::async_trait]
impl TraceService for Sink {
    async fn export(
        &self,
        request: tonic::Request<ExportTraceServiceRequest>,
    ) -> Result<tonic::Response<ExportTraceServiceResponse>, tonic::Status> {
        let spans = request
            .into_inner()
            .resource_spans
            .iter()
            .flat_map(|rs| &rs.scope_spans)
            .map(|ss| ss.spans.len() as u64)
            .sum();
        self.spans.fetch_add(spans, Ordering::Relaxed);
        Ok(tonic::Response::new(ExportTraceServiceResponse::default()))
    }
}

#[tokio::main(flavor = "current_thread")]
async fn main() -> std::io::Result<()> {
    let addr = std::env::args()
        .nth(1)
        .unwrap_or_else(|| "127.0.0.1:4317".into());
    let sink = Sink::default();
    let listener = tokio::net::TcpListener::bind(&addr).await?;
    println!("otlp sink on http://{}", listener.local_addr()?);
    let spans = sink.spans.clone();
    tokio::spawn(async move {
        let mut last = 0;
        loop {
            tokio::time::sleep(std::time::Duration::from_secs(5)).await;
            let now = spans.load(Ordering::Relaxed);
            if now != last {
                println!("spans received: {now}");
                last = now;
            }
        }
    });
    let router = tonic::service::Routes::new(TraceServiceServer::new(sink)).into_axum_router();
    axum::serve(listener, router).await
}
