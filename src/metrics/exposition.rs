//! The families a scrape gets, written by `prometheus-client`: a `Collector` that reads the
//! service's values at each scrape and encodes them as constant metrics. Names follow the
//! Prometheus conventions: base units in the name (`_seconds`), counters named without
//! `_total`, which the encoder adds to their samples.

use super::{HistogramReading, Readings};
use prometheus_client::collector::Collector;
use prometheus_client::encoding::{DescriptorEncoder, EncodeLabelSet, EncodeMetric, MetricEncoder};
use prometheus_client::metrics::counter::ConstCounter;
use prometheus_client::metrics::gauge::ConstGauge;
use prometheus_client::metrics::MetricType;
use std::fmt;
use std::time::UNIX_EPOCH;

type Read = Box<dyn Fn() -> Readings + Send + Sync>;

/// Gathers the readings at each scrape.
pub struct Scrape {
    read: Read,
}

impl Scrape {
    pub fn new(read: impl Fn() -> Readings + Send + Sync + 'static) -> Scrape {
        Scrape {
            read: Box::new(read),
        }
    }
}

impl fmt::Debug for Scrape {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("Scrape")
    }
}

impl Collector for Scrape {
    fn encode(&self, mut encoder: DescriptorEncoder) -> fmt::Result {
        let readings = (self.read)();
        encode(&readings, &mut encoder)
    }
}

fn encode(r: &Readings, out: &mut DescriptorEncoder) -> fmt::Result {
    http(r, out)?;
    fragments(r, out)?;
    snapshot(r, out)?;
    report(r, out)?;
    database(r, out)?;
    refusals_and_connections(r, out)
}

/// The public listener's answers, by area.
fn http(r: &Readings, out: &mut DescriptorEncoder) -> fmt::Result {
    family(
        out,
        "agentcard_http_requests",
        "Requests answered on the public listener, by area and status code.",
        MetricType::Counter,
        r.http_requests.iter().map(|&((area, status), n)| {
            let labels = ([("area", area)], [("status", status)]);
            (labels, ConstCounter::new(n))
        }),
    )?;
    family(
        out,
        "agentcard_http_request_duration_seconds",
        "Time from routing a request to its response, by area.",
        MetricType::Histogram,
        r.http_durations
            .iter()
            .map(|(area, histogram)| ([("area", *area)], ConstHistogram(histogram))),
    )
}

/// `/fragment`'s requests, as the report counts them.
fn fragments(r: &Readings, out: &mut DescriptorEncoder) -> fmt::Result {
    family(
        out,
        "agentcard_fragment_requests",
        "/fragment requests by outcome and reason, as the report counts them.",
        MetricType::Counter,
        r.fragment_requests.iter().map(|&((outcome, reason), n)| {
            let labels = [("outcome", outcome), ("reason", reason)];
            (labels, ConstCounter::new(n))
        }),
    )?;
    family(
        out,
        "agentcard_fragment_agent_purposes",
        "/fragment requests by the purpose of the visiting agent (none: no marker matched).",
        MetricType::Counter,
        r.fragment_purposes
            .iter()
            .map(|&(purpose, n)| ([("purpose", purpose)], ConstCounter::new(n))),
    )
}

/// The snapshot `/fragment` serves from.
fn snapshot(r: &Readings, out: &mut DescriptorEncoder) -> fmt::Result {
    let snapshot = r.snapshot.as_ref();
    gauge(
        out,
        "agentcard_snapshot_generation",
        "Generation of the fragment snapshot served; it changes at every reload.",
        snapshot.map(|s| s.generation),
    )?;
    gauge(
        out,
        "agentcard_snapshot_age_seconds",
        "Seconds since the snapshot served was last known to match the database.",
        snapshot.map(|s| s.age.as_secs_f64()),
    )?;
    gauge(
        out,
        "agentcard_snapshot_last_build_seconds",
        "Duration of the last snapshot build, loading its rows included.",
        snapshot.map(|s| s.last_build.as_secs_f64()),
    )
}

/// The report's counters on their way to the database.
fn report(r: &Readings, out: &mut DescriptorEncoder) -> fmt::Result {
    gauge(
        out,
        "agentcard_report_pending_counters",
        "Report counters waiting to be written to the database.",
        Some(r.report.pending_counters as u64),
    )?;
    gauge(
        out,
        "agentcard_report_last_flush_timestamp_seconds",
        "Unix time of the last report flush that reached the database.",
        r.report.last_flush.map(|at| {
            at.duration_since(UNIX_EPOCH)
                .unwrap_or_default()
                .as_secs_f64()
        }),
    )?;
    counter(
        out,
        "agentcard_report_flush_failures",
        "Report flushes that failed since start (the counts are kept and retried).",
        r.report.flush_failures,
    )
}

/// The management pool and whether the database answers it.
fn database(r: &Readings, out: &mut DescriptorEncoder) -> fmt::Result {
    family(
        out,
        "agentcard_db_pool_connections",
        "Connections of the management pool, by state.",
        MetricType::Gauge,
        [
            ([("state", "in_use")], ConstGauge::new(r.db_pool.in_use)),
            ([("state", "idle")], ConstGauge::new(r.db_pool.idle)),
        ],
    )?;
    gauge(
        out,
        "agentcard_database_up",
        "1 while the database answers the management pool, 0 through an outage.",
        Some(u64::from(r.database_up)),
    )
}

/// Requests refused by a rate limit, and the public listener's open connections.
fn refusals_and_connections(r: &Readings, out: &mut DescriptorEncoder) -> fmt::Result {
    counter(
        out,
        "agentcard_rate_limited",
        "Requests refused with 429 (management API and contact form).",
        r.rate_limited,
    )?;
    gauge(
        out,
        "agentcard_open_connections",
        "Connections open on the public listener.",
        Some(r.open_connections as u64),
    )
}

/// A family of `kind`, one metric per label set.
pub fn family<L: EncodeLabelSet, M: EncodeMetric>(
    out: &mut DescriptorEncoder,
    name: &str,
    help: &str,
    kind: MetricType,
    metrics: impl IntoIterator<Item = (L, M)>,
) -> fmt::Result {
    let mut family = out.encode_descriptor(name, help, None, kind)?;
    for (labels, metric) in metrics {
        metric.encode(family.encode_family(&labels)?)?;
    }
    Ok(())
}

/// A counter without labels.
pub fn counter(out: &mut DescriptorEncoder, name: &str, help: &str, value: u64) -> fmt::Result {
    let family = out.encode_descriptor(name, help, None, MetricType::Counter)?;
    ConstCounter::new(value).encode(family)
}

/// A histogram without labels.
pub fn histogram(
    out: &mut DescriptorEncoder,
    name: &str,
    help: &str,
    reading: &HistogramReading,
) -> fmt::Result {
    let family = out.encode_descriptor(name, help, None, MetricType::Histogram)?;
    ConstHistogram(reading).encode(family)
}

/// A gauge without labels; its family without a sample while the value is unknown.
pub fn gauge<N: prometheus_client::encoding::EncodeGaugeValue>(
    out: &mut DescriptorEncoder,
    name: &str,
    help: &str,
    value: Option<N>,
) -> fmt::Result {
    let family = out.encode_descriptor(name, help, None, MetricType::Gauge)?;
    match value {
        Some(value) => ConstGauge::new(value).encode(family),
        None => Ok(()),
    }
}

/// A histogram read from the slots, as the encoder writes a histogram: cumulative buckets.
struct ConstHistogram<'a>(&'a HistogramReading);

impl EncodeMetric for ConstHistogram<'_> {
    fn encode(&self, mut encoder: MetricEncoder) -> fmt::Result {
        let reading = self.0;
        encoder.encode_histogram::<prometheus_client::encoding::NoLabelSet>(
            reading.sum_seconds,
            reading.count(),
            &reading.buckets,
            None,
        )
    }

    fn metric_type(&self) -> MetricType {
        MetricType::Histogram
    }
}

#[cfg(test)]
mod tests {
    use super::super::{Endpoint, PoolReading, ReportReading, SnapshotReading};
    use super::*;
    use crate::http::Request;
    use crate::http::Service;
    use std::time::Duration;

    fn readings() -> Readings {
        Readings {
            http_requests: vec![(("fragment", 200), 3), (("not_found", 404), 1)],
            http_durations: vec![(
                "fragment",
                HistogramReading {
                    buckets: vec![(0.001, 2), (f64::INFINITY, 1)],
                    sum_seconds: 2.5,
                },
            )],
            fragment_requests: vec![(("served", "served"), 3)],
            fragment_purposes: vec![("training", 3)],
            snapshot: Some(SnapshotReading {
                generation: 4,
                age: Duration::from_millis(1500),
                last_build: Duration::from_millis(20),
            }),
            report: ReportReading {
                pending_counters: 2,
                last_flush: Some(UNIX_EPOCH + Duration::from_secs(1_700_000_000)),
                flush_failures: 1,
            },
            db_pool: PoolReading { in_use: 1, idle: 3 },
            database_up: true,
            rate_limited: 5,
            open_connections: 7,
        }
    }

    fn scrape(endpoint: &Endpoint, method: &str, path: &str) -> (u16, String) {
        let peer = "127.0.0.1:1".parse().unwrap();
        let response = endpoint.call(Request::new(method, path, None, peer, 64, 0));
        (response.status, String::from_utf8(response.body).unwrap())
    }

    #[test]
    fn every_family_is_written_with_help_type_and_the_samples_read() {
        let (status, text) = scrape(&Endpoint::new(readings), "GET", "/metrics");
        assert_eq!(status, 200);
        for line in [
            "# TYPE agentcard_http_requests counter",
            "agentcard_http_requests_total{area=\"fragment\",status=\"200\"} 3",
            "agentcard_http_request_duration_seconds_bucket{le=\"0.001\",area=\"fragment\"} 2",
            "agentcard_http_request_duration_seconds_bucket{le=\"+Inf\",area=\"fragment\"} 3",
            "agentcard_http_request_duration_seconds_count{area=\"fragment\"} 3",
            "agentcard_fragment_requests_total{outcome=\"served\",reason=\"served\"} 3",
            "agentcard_fragment_agent_purposes_total{purpose=\"training\"} 3",
            "agentcard_snapshot_generation 4",
            "agentcard_snapshot_age_seconds 1.5",
            "agentcard_snapshot_last_build_seconds 0.02",
            "agentcard_report_pending_counters 2",
            "agentcard_report_last_flush_timestamp_seconds 1700000000.0",
            "agentcard_report_flush_failures_total 1",
            "agentcard_db_pool_connections{state=\"in_use\"} 1",
            "agentcard_db_pool_connections{state=\"idle\"} 3",
            "agentcard_database_up 1",
            "agentcard_rate_limited_total 5",
            "agentcard_open_connections 7",
            "# EOF",
        ] {
            assert!(
                text.lines().any(|l| l == line),
                "{line:?} missing from:\n{text}"
            );
        }
    }

    #[test]
    fn values_not_known_yet_leave_their_family_without_a_sample() {
        let endpoint = Endpoint::new(Readings::default);
        let (_, text) = scrape(&endpoint, "GET", "/metrics");
        assert!(text.contains("# TYPE agentcard_snapshot_age_seconds gauge\n"));
        assert!(!text.contains("\nagentcard_snapshot_age_seconds "));
    }

    #[test]
    fn only_get_and_head_of_metrics_are_served() {
        let endpoint = Endpoint::new(Readings::default);
        assert_eq!(scrape(&endpoint, "HEAD", "/metrics").0, 200);
        assert_eq!(scrape(&endpoint, "POST", "/metrics").0, 405);
        assert_eq!(scrape(&endpoint, "GET", "/fragment").0, 404);
        assert_eq!(scrape(&endpoint, "GET", "/metrics/").0, 404);
    }
}
