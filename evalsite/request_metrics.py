"""django-prometheus's request metrics, with each labelled series looked up once per process (issue 30).

``PrometheusAfterMiddleware`` resolves its labelled series on every request (``metric.labels(view=…,
method=…)``: the label names sorted and checked, the values turned into strings, a lock taken, a dict
looked up), about eight times a combined label. A series, once made, lives as long as its metric (nothing
here removes one), so the middleware here keeps the series it resolved by metric and label values and
counts into exactly the same series as django-prometheus's own.
"""

from __future__ import annotations

from django_prometheus.middleware import PrometheusAfterMiddleware


class SeriesKeptAfterMiddleware(PrometheusAfterMiddleware):
    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self._series = {}

    def label_metric(self, metric, request, response=None, **labels):
        if not labels:
            return metric
        key = (metric, *labels.items())
        series = self._series.get(key)
        if series is None:
            series = self._series[key] = metric.labels(**labels)
        return series
