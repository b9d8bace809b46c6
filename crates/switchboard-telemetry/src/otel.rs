//! OpenTelemetry traces, exported over OTLP/gRPC, configured by the
//! standard `OTEL_*` variables.
//!
//! **Off unless asked for.** Tracing starts only when the environment asks
//! for an exporter: `OTEL_TRACES_EXPORTER=otlp`, or an OTLP endpoint
//! (`OTEL_EXPORTER_OTLP_ENDPOINT` or `OTEL_EXPORTER_OTLP_TRACES_ENDPOINT`).
//! `OTEL_SDK_DISABLED=true` or `OTEL_TRACES_EXPORTER=none` keep it off
//! whatever else is set. Off, nothing is installed: no exporter, no span is
//! made, no `traceparent` read or sent ([`crate::trace`]).
//!
//! **On**, spans go through `tracing-opentelemetry` to a batching OTLP
//! exporter. `OTEL_EXPORTER_OTLP_TRACES_PROTOCOL` (or
//! `OTEL_EXPORTER_OTLP_PROTOCOL`) picks the transport: `grpc` (tonic; the
//! default, port 4317 by convention) or `http/protobuf` (a blocking reqwest
//! client on the batch processor's own thread, port 4318 by convention;
//! `http/json` is sent as `http/protobuf`, which every OTLP/HTTP receiver
//! also takes). The exporter reads the rest of the standard variables
//! itself (endpoint — with `/v1/traces` appended to the generic one over
//! HTTP —, headers, timeout); `OTEL_SERVICE_NAME` names the service
//! (default `switchboard`).
//!
//! **Sampling.** `OTEL_TRACES_SAMPLER` (`always_on`, `always_off`,
//! `traceidratio`, or a `parentbased_` form of one; default
//! `parentbased_always_on`) and `OTEL_TRACES_SAMPLER_ARG` (the ratio) are
//! read here and applied by switchboard itself where a trace enters the
//! process, before any span is made
//! ([`crate::trace::Sampler`]): an unsampled request costs
//! what tracing off costs. The OpenTelemetry SDK then records every span it
//! is given. An unknown sampler or a bad ratio stops `serve` at startup.
//!
//! The hand-over between our spans and OpenTelemetry's context is
//! [`OtelPropagator`]: W3C `traceparent` in, the current span's context
//! out. Spans of the exporter's own stack (tonic, hyper, h2, tower) are
//! not exported, so exporting never traces itself.
//!
//! [`Otel::shutdown`] flushes what is batched; call it on exit (`switchboard
//! serve` does).

use crate::trace::{Propagator, Sampler, TraceParent};
use opentelemetry::trace::{
    SpanContext, SpanId, TraceContextExt, TraceFlags, TraceId, TraceState, TracerProvider as _,
};
use opentelemetry_sdk::Resource;
use opentelemetry_sdk::trace::SdkTracerProvider;
use tracing::Span;
use tracing_opentelemetry::OpenTelemetrySpanExt;
use tracing_subscriber::Layer;
use tracing_subscriber::filter::{LevelFilter, Targets};

/// The OTLP transport spans are exported over.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum OtlpProtocol {
    /// OTLP/gRPC (`grpc`).
    #[default]
    Grpc,
    /// OTLP/HTTP with protobuf bodies (`http/protobuf`).
    HttpProtobuf,
}

impl OtlpProtocol {
    /// The protocol a `OTEL_EXPORTER_OTLP_PROTOCOL` value names; an
    /// unknown value is warned about and gRPC kept.
    fn from_env_value(value: &str) -> OtlpProtocol {
        match value.trim().to_ascii_lowercase().as_str() {
            "grpc" => OtlpProtocol::Grpc,
            "http/protobuf" => OtlpProtocol::HttpProtobuf,
            "http/json" => {
                tracing::warn!(
                    "OTEL_EXPORTER_OTLP_PROTOCOL=http/json: exporting as http/protobuf, which OTLP/HTTP receivers also take"
                );
                OtlpProtocol::HttpProtobuf
            }
            other => {
                tracing::warn!(protocol = %other, "OTEL_EXPORTER_OTLP_PROTOCOL: expected grpc or http/protobuf; exporting over gRPC");
                OtlpProtocol::Grpc
            }
        }
    }
}

/// What the environment asks of tracing.
#[derive(Debug, Clone, PartialEq)]
pub struct OtelConfig {
    /// The OTLP endpoint, when given here rather than left to the
    /// exporter's own reading of the environment (over HTTP, the full URL
    /// of the traces route, e.g. `http://host:4318/v1/traces`).
    pub endpoint: Option<String>,
    /// The transport.
    pub protocol: OtlpProtocol,
    /// The service name on every span.
    pub service_name: String,
    /// Which traces are recorded.
    pub sampler: Sampler,
}

impl OtelConfig {
    /// Tracing to `endpoint` over OTLP/gRPC as `service_name` (tests and
    /// embedders).
    pub fn new(endpoint: impl Into<String>, service_name: impl Into<String>) -> Self {
        OtelConfig {
            endpoint: Some(endpoint.into()),
            protocol: OtlpProtocol::Grpc,
            service_name: service_name.into(),
            sampler: Sampler::default(),
        }
    }

    /// The same, recording the traces `sampler` picks.
    pub fn with_sampler(mut self, sampler: Sampler) -> Self {
        self.sampler = sampler;
        self
    }

    /// What the process environment asks for; `Ok(None)` when tracing is
    /// off, `Err` when a sampler variable is invalid.
    pub fn from_env() -> Result<Option<OtelConfig>, String> {
        Self::from_vars(|name| std::env::var(name).ok())
    }

    /// [`OtelConfig::from_env`] over any variable lookup. Only an invalid
    /// `OTEL_TRACES_SAMPLER` or `OTEL_TRACES_SAMPLER_ARG` is an error (it
    /// would record far more or far less than the operator meant); other
    /// unknown values are warned about and a default kept.
    pub fn from_vars(var: impl Fn(&str) -> Option<String>) -> Result<Option<OtelConfig>, String> {
        let set = |name: &str| var(name).filter(|v| !v.trim().is_empty());
        if set("OTEL_SDK_DISABLED").is_some_and(|v| v.trim().eq_ignore_ascii_case("true")) {
            return Ok(None);
        }
        let endpoint = set("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT")
            .or_else(|| set("OTEL_EXPORTER_OTLP_ENDPOINT"));
        match set("OTEL_TRACES_EXPORTER").map(|v| v.trim().to_ascii_lowercase()) {
            Some(v) if v == "otlp" => {}
            Some(v) if v == "none" => return Ok(None),
            Some(other) => {
                tracing::warn!(exporter = %other, "OTEL_TRACES_EXPORTER: only `otlp` (or `none`) is supported; tracing stays off");
                return Ok(None);
            }
            None if endpoint.is_some() => {}
            None => return Ok(None),
        }
        let protocol = set("OTEL_EXPORTER_OTLP_TRACES_PROTOCOL")
            .or_else(|| set("OTEL_EXPORTER_OTLP_PROTOCOL"))
            .map(|p| OtlpProtocol::from_env_value(&p))
            .unwrap_or_default();
        let sampler = match set("OTEL_TRACES_SAMPLER") {
            Some(name) => {
                Sampler::from_env_values(&name, set("OTEL_TRACES_SAMPLER_ARG").as_deref())?
            }
            None => Sampler::default(),
        };
        Ok(Some(OtelConfig {
            endpoint: None,
            protocol,
            service_name: set("OTEL_SERVICE_NAME").unwrap_or_else(|| "switchboard".into()),
            sampler,
        }))
    }
}

/// A running trace pipeline; [`Otel::shutdown`] flushes it.
#[derive(Debug)]
pub struct Otel {
    provider: SdkTracerProvider,
}

/// The boxed layer [`init`] hands to the subscriber.
pub type OtelLayer = Box<dyn Layer<tracing_subscriber::Registry> + Send + Sync>;

/// Builds the exporter and the `tracing` layer for `cfg`, and installs the
/// propagation hook. Must run inside a tokio runtime (the exporter's
/// channel lives on it). Add the layer to the subscriber
/// ([`crate::logging::init_with`], feature `logging`).
pub fn init(cfg: &OtelConfig) -> Result<(Otel, OtelLayer), opentelemetry_otlp::ExporterBuildError> {
    use opentelemetry_otlp::{Protocol, SpanExporter, WithExportConfig as _};
    let exporter = match cfg.protocol {
        OtlpProtocol::Grpc => {
            let mut builder = SpanExporter::builder().with_tonic();
            if let Some(endpoint) = &cfg.endpoint {
                builder = builder.with_endpoint(endpoint);
            }
            builder.build()?
        }
        OtlpProtocol::HttpProtobuf => {
            // The batch processor exports from a thread of its own, outside
            // tokio, so the exporter's default client over HTTP is reqwest's
            // blocking one (built on a thread of its own by the exporter).
            let mut builder = SpanExporter::builder()
                .with_http()
                .with_protocol(Protocol::HttpBinary);
            if let Some(endpoint) = &cfg.endpoint {
                builder = builder.with_endpoint(endpoint);
            }
            builder.build()?
        }
    };
    let provider = SdkTracerProvider::builder()
        // switchboard samples before it makes a span (see the module docs):
        // what reaches the SDK is recorded. (Left alone, the SDK would read
        // OTEL_TRACES_SAMPLER too and sample a second time.)
        .with_sampler(opentelemetry_sdk::trace::Sampler::AlwaysOn)
        .with_batch_exporter(exporter)
        .with_resource(
            Resource::builder()
                .with_service_name(cfg.service_name.clone())
                .build(),
        )
        .build();
    let tracer = provider.tracer("switchboard");
    // The exporter's own stack is never traced: exporting would make spans
    // to export.
    let quiet = Targets::new()
        .with_default(LevelFilter::INFO)
        .with_target("h2", LevelFilter::OFF)
        .with_target("hyper", LevelFilter::OFF)
        .with_target("hyper_util", LevelFilter::OFF)
        .with_target("tonic", LevelFilter::OFF)
        .with_target("tower", LevelFilter::OFF)
        .with_target("reqwest", LevelFilter::OFF)
        .with_target("opentelemetry", LevelFilter::OFF)
        .with_target("opentelemetry_sdk", LevelFilter::OFF)
        .with_target("opentelemetry_otlp", LevelFilter::OFF);
    let layer = tracing_opentelemetry::layer()
        .with_tracer(tracer)
        .with_filter(quiet)
        .boxed();
    crate::trace::install(Box::new(OtelPropagator), cfg.sampler);
    Ok((Otel { provider }, layer))
}

impl Otel {
    /// Exports what is batched and stops the exporter (off the async
    /// threads: the SDK blocks while it flushes).
    pub async fn shutdown(self) {
        let provider = self.provider;
        let flushed = tokio::task::spawn_blocking(move || provider.shutdown()).await;
        if let Ok(Err(e)) = flushed {
            tracing::warn!(error = %e, "flushing traces at shutdown failed");
        }
    }
}

/// Links `tracing` spans to W3C trace context through OpenTelemetry.
#[derive(Debug)]
pub struct OtelPropagator;

impl Propagator for OtelPropagator {
    fn set_parent(&self, span: &Span, parent: &TraceParent) {
        let remote = SpanContext::new(
            TraceId::from_bytes(parent.trace_id),
            SpanId::from_bytes(parent.span_id),
            TraceFlags::new(parent.flags),
            true,
            TraceState::default(),
        );
        let _ = span.set_parent(opentelemetry::Context::new().with_remote_span_context(remote));
    }

    fn rename(&self, span: &Span, name: String) {
        span.context().span().update_name(name);
    }

    fn context(&self, span: &Span) -> Option<TraceParent> {
        let cx = span.context();
        let otel_span = cx.span();
        let sc = otel_span.span_context();
        sc.is_valid().then(|| TraceParent {
            trace_id: sc.trace_id().to_bytes(),
            span_id: sc.span_id().to_bytes(),
            flags: sc.trace_flags().to_u8(),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::{OtelConfig, OtlpProtocol};
    use crate::trace::{Root, Sampler};

    fn vars<'a>(pairs: &'a [(&'a str, &'a str)]) -> impl Fn(&str) -> Option<String> + 'a {
        move |name| {
            pairs
                .iter()
                .find(|(k, _)| *k == name)
                .map(|(_, v)| v.to_string())
        }
    }

    /// The configuration `pairs` make, which must be valid.
    fn config(pairs: &[(&str, &str)]) -> Option<OtelConfig> {
        OtelConfig::from_vars(vars(pairs)).unwrap_or_else(|e| panic!("{pairs:?}: {e}"))
    }

    #[test]
    fn the_sampler_variables_pick_the_sampler() {
        let sampler = |extra: &[(&str, &str)]| {
            let all: Vec<(&str, &str)> = [("OTEL_TRACES_EXPORTER", "otlp")]
                .iter()
                .chain(extra)
                .copied()
                .collect();
            OtelConfig::from_vars(vars(&all)).map(|c| c.map(|c| c.sampler))
        };
        let on = |root, parent_based| Ok(Some(Sampler { root, parent_based }));
        assert_eq!(
            sampler(&[]),
            on(Root::AlwaysOn, true),
            "parentbased_always_on"
        );
        for (name, arg, want) in [
            ("always_on", None, on(Root::AlwaysOn, false)),
            ("ALWAYS_OFF", None, on(Root::AlwaysOff, false)),
            ("parentbased_always_off", None, on(Root::AlwaysOff, true)),
            ("traceidratio", Some("0.25"), on(Root::Ratio(0.25), false)),
            ("traceidratio", None, on(Root::Ratio(1.0), false)),
            (
                "parentbased_traceidratio",
                Some(" 0.01 "),
                on(Root::Ratio(0.01), true),
            ),
        ] {
            let mut extra = vec![("OTEL_TRACES_SAMPLER", name)];
            extra.extend(arg.map(|a| ("OTEL_TRACES_SAMPLER_ARG", a)));
            assert_eq!(sampler(&extra), want, "{name} {arg:?}");
        }
        for bad in [
            [
                ("OTEL_TRACES_SAMPLER", "jaeger_remote"),
                ("OTEL_TRACES_SAMPLER_ARG", ""),
            ],
            [
                ("OTEL_TRACES_SAMPLER", "traceidratio"),
                ("OTEL_TRACES_SAMPLER_ARG", "1.5"),
            ],
            [
                ("OTEL_TRACES_SAMPLER", "parentbased_traceidratio"),
                ("OTEL_TRACES_SAMPLER_ARG", "a tenth"),
            ],
        ] {
            match sampler(&bad) {
                Err(err) => assert!(err.contains("OTEL_TRACES_SAMPLER"), "{bad:?}: {err}"),
                Ok(c) => panic!("{bad:?} accepted: {c:?}"),
            }
        }
        // Off stays off, whatever the sampler says.
        assert_eq!(
            OtelConfig::from_vars(vars(&[("OTEL_TRACES_SAMPLER", "nonsense")])),
            Ok(None)
        );
    }

    #[test]
    fn off_unless_an_exporter_is_asked_for() {
        assert_eq!(config(&[]), None, "off by default");
        assert_eq!(
            config(&[("OTEL_SERVICE_NAME", "a")]),
            None,
            "a name alone exports nothing"
        );
        let on = config(&[("OTEL_EXPORTER_OTLP_ENDPOINT", "http://127.0.0.1:4317")])
            .unwrap_or_else(|| panic!("an endpoint turns it on"));
        assert_eq!(on.service_name, "switchboard");
        assert!(config(&[("OTEL_TRACES_EXPORTER", "otlp")]).is_some());
        for off in [
            [
                ("OTEL_EXPORTER_OTLP_ENDPOINT", "http://127.0.0.1:4317"),
                ("OTEL_SDK_DISABLED", "true"),
            ],
            [
                ("OTEL_EXPORTER_OTLP_ENDPOINT", "http://127.0.0.1:4317"),
                ("OTEL_TRACES_EXPORTER", "none"),
            ],
            [
                ("OTEL_EXPORTER_OTLP_ENDPOINT", "http://127.0.0.1:4317"),
                ("OTEL_TRACES_EXPORTER", "zipkin"),
            ],
        ] {
            assert_eq!(config(&off), None, "{off:?}");
        }
        let named = config(&[
            ("OTEL_TRACES_EXPORTER", "otlp"),
            ("OTEL_SERVICE_NAME", "agent-a"),
        ]);
        assert_eq!(named.map(|c| c.service_name).as_deref(), Some("agent-a"));
    }

    #[test]
    fn the_protocol_variables_pick_the_transport() {
        let on = [("OTEL_TRACES_EXPORTER", "otlp")];
        let protocol = |extra: &[(&str, &str)]| {
            let all: Vec<(&str, &str)> = on.iter().chain(extra).copied().collect();
            config(&all).map(|c| c.protocol)
        };
        assert_eq!(protocol(&[]), Some(OtlpProtocol::Grpc), "gRPC by default");
        for (set, want) in [
            (
                ("OTEL_EXPORTER_OTLP_PROTOCOL", "http/protobuf"),
                OtlpProtocol::HttpProtobuf,
            ),
            (
                ("OTEL_EXPORTER_OTLP_PROTOCOL", "http/json"),
                OtlpProtocol::HttpProtobuf,
            ),
            (("OTEL_EXPORTER_OTLP_PROTOCOL", "grpc"), OtlpProtocol::Grpc),
            (
                ("OTEL_EXPORTER_OTLP_PROTOCOL", "carrier-pigeon"),
                OtlpProtocol::Grpc,
            ),
            (
                ("OTEL_EXPORTER_OTLP_TRACES_PROTOCOL", "http/protobuf"),
                OtlpProtocol::HttpProtobuf,
            ),
        ] {
            assert_eq!(protocol(&[set]), Some(want), "{set:?}");
        }
        assert_eq!(
            protocol(&[
                ("OTEL_EXPORTER_OTLP_PROTOCOL", "grpc"),
                ("OTEL_EXPORTER_OTLP_TRACES_PROTOCOL", "http/protobuf"),
            ]),
            Some(OtlpProtocol::HttpProtobuf),
            "the traces variable wins over the generic one"
        );
    }
}
