"""Reads a scrape of /metrics (standard input) as Prometheus does; prints its families as JSON:
{name: {"type": ..., "samples": [{"name", "labels", "value"}]}}.

The scrape is OpenMetrics text (what the prometheus-client crate writes, served as
application/openmetrics-text), read by its strict parser: types, counters' `_total`, cumulative
buckets, `# EOF`. The classic text parser, for a scraper that does not ask for OpenMetrics,
must read the same samples. Any parse error, or a missing prometheus_client, exits non-zero.
"""

import json
import sys

from prometheus_client.openmetrics.parser import (
    text_string_to_metric_families as openmetrics_families,
)
from prometheus_client.parser import text_string_to_metric_families as classic_families


def samples(families):
    return sorted(
        (s.name, sorted(s.labels.items()), s.value) for f in families for s in f.samples
    )


text = sys.stdin.read()
families = list(openmetrics_families(text))
if samples(families) != samples(classic_families(text)):
    sys.exit("the classic text parser reads other samples than the OpenMetrics parser")
json.dump(
    {
        f.name: {
            "type": f.type,
            "samples": [
                {"name": s.name, "labels": s.labels, "value": s.value} for s in f.samples
            ],
        }
        for f in families
    },
    sys.stdout,
)
