"""django-prometheus's request metrics, counted into the same series for less work a request (issue 30).

django-prometheus's two middlewares resolve their labelled series on every request (``metric.labels(view=…,
method=…)``: the label names sorted and checked, the values turned into strings, a lock taken, a dict looked
up), about eight times a combined label, and each ``inc()``/``observe()`` checks again that the series is a
child, and a histogram finds its bucket by walking its bounds one by one (up to 31 for the body sizes).

The middlewares here count exactly the same series, with the same label values and the same amounts, as
django-prometheus's own (``tests/evalsite/test_request_metrics.py`` compares every sample but the
latencies' times against them):

* a series, once resolved, is kept by its metric and label values and its value objects are written
  directly (:class:`Tally`): a series lives as long as its metric (nothing here removes one, and
  ``Counter.reset()`` keeps its value object);
* a histogram's bucket is the first bound not below the amount, ``bisect_left`` over its sorted bounds,
  as ``Histogram.observe``'s walk finds it;
* each middleware is called as a plain one (``process_request``, the view, ``process_response``) instead of
  through ``MiddlewareMixin``'s checks for which hooks it has.
"""

from __future__ import annotations

from bisect import bisect_left
from timeit import default_timer

from django_prometheus.middleware import PrometheusAfterMiddleware, PrometheusBeforeMiddleware

#: django-prometheus's methods counted under their own name; any other is "<invalid method>".
_METHODS = frozenset(("GET", "HEAD", "POST", "PUT", "DELETE", "TRACE", "OPTIONS", "CONNECT", "PATCH"))


class Tally:
    """A counter's or a histogram's series, written without ``inc()``'s and ``observe()``'s checks.

    ``inc(amount)`` adds to a counter, as ``Counter.inc`` does (an amount below zero is refused the same way);
    ``observe(amount)`` adds the amount to a histogram's sum and one to the bucket of the first upper bound
    ``≥ amount`` (``Histogram.observe``, prometheus_client; its bounds end with +Inf)."""

    __slots__ = ("_add", "_sum", "_bounds", "_buckets")

    def __init__(self, series) -> None:
        series._raise_if_not_observable()
        if hasattr(series, "_upper_bounds"):
            self._sum = series._sum.inc
            self._bounds = list(series._upper_bounds)
            self._buckets = [bucket.inc for bucket in series._buckets]
        else:
            self._add = series._value.inc

    def inc(self, amount: float = 1) -> None:
        if amount < 0:
            raise ValueError("Counters can only be incremented by non-negative amounts.")
        self._add(amount)

    def observe(self, amount: float) -> None:
        self._sum(amount)
        if amount == amount:  # not NaN, for which Histogram.observe's walk finds no bucket
            self._buckets[bisect_left(self._bounds, amount)](1)


class _Tallies:
    """The :class:`Tally` of each series a middleware counted into, resolved on first use."""

    def __init__(self) -> None:
        self._kept: dict = {}

    def __call__(self, metric, *labels):
        """``metric``'s series for ``labels`` (name, value pairs in django-prometheus's order)."""
        key = (metric, *labels)
        tally = self._kept.get(key)
        if tally is None:
            tally = self._kept[key] = Tally(metric.labels(**dict(labels)) if labels else metric)
        return tally


class CountedBeforeMiddleware(PrometheusBeforeMiddleware):
    """``PrometheusBeforeMiddleware``: requests and responses counted, the latency through every middleware."""

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        metrics = self.metrics
        self._requests = Tally(metrics.requests_total)
        self._responses = Tally(metrics.responses_total)
        self._latency = Tally(metrics.requests_latency_before)
        self._unknown_latency = Tally(metrics.requests_unknown_latency_before)

    def __call__(self, request):
        if self.async_mode:
            return self.__acall__(request)
        self.process_request(request)
        return self.process_response(request, self.get_response(request))

    def process_request(self, request):
        self._requests.inc(1)
        request.prometheus_before_middleware_event = default_timer()

    def process_response(self, request, response):
        self._responses.inc(1)
        started = getattr(request, "prometheus_before_middleware_event", None)
        if started is not None:
            self._latency.observe(default_timer() - started)
        else:
            self._unknown_latency.inc(1)
        return response


class SeriesKeptAfterMiddleware(PrometheusAfterMiddleware):
    """``PrometheusAfterMiddleware``: requests by method, transport and view, responses by status, view,
    method, charset and template, body sizes and the view's latency; its exceptions' counts are
    django-prometheus's own code, each series looked up once (:meth:`label_metric`)."""

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self._series = {}
        self._tally = _Tallies()

    def label_metric(self, metric, request, response=None, **labels):
        if not labels:
            return metric
        key = (metric, *labels.items())
        series = self._series.get(key)
        if series is None:
            series = self._series[key] = metric.labels(**labels)
        return series

    def __call__(self, request):
        if self.async_mode:
            return self.__acall__(request)
        self.process_request(request)
        return self.process_response(request, self.get_response(request))

    @staticmethod
    def _method(request) -> str:
        method = request.method
        return method if method in _METHODS else "<invalid method>"

    def process_request(self, request):
        tally, metrics = self._tally, self.metrics
        tally(metrics.requests_by_method, ("method", self._method(request))).inc(1)
        tally(metrics.requests_by_transport, ("transport", self._transport(request))).inc(1)
        headers = request.headers
        if headers.get("x-requested-with") == "XMLHttpRequest":
            tally(metrics.requests_ajax).inc(1)
        tally(metrics.requests_body_bytes).observe(int(headers.get("content-length") or 0))
        request.prometheus_after_middleware_event = default_timer()

    def process_view(self, request, view_func, *view_args, **view_kwargs):
        if hasattr(request, "resolver_match"):
            name = request.resolver_match.view_name or "<unnamed view>"
            self._tally(self.metrics.requests_by_view_transport_method, ("view", name),
                        ("transport", self._transport(request)), ("method", self._method(request))).inc(1)

    def process_template_response(self, request, response):
        if hasattr(response, "template_name"):
            self._tally(self.metrics.responses_by_templatename,
                        ("templatename", str(response.template_name))).inc(1)
        return response

    def process_response(self, request, response):
        tally, metrics = self._tally, self.metrics
        method = self._method(request)
        name = self._get_view_name(request)
        status = str(response.status_code)
        tally(metrics.responses_by_status, ("status", status)).inc(1)
        tally(metrics.responses_by_status_view_method, ("status", status), ("view", name), ("method", method)).inc(1)
        if hasattr(response, "charset"):
            tally(metrics.responses_by_charset, ("charset", str(response.charset))).inc(1)
        if getattr(response, "streaming", False):
            tally(metrics.responses_streaming).inc(1)
        if hasattr(response, "content"):
            tally(metrics.responses_body_bytes).observe(len(response.content))
        started = getattr(request, "prometheus_after_middleware_event", None)
        if started is not None:
            tally(metrics.requests_latency_by_view_method, ("view", name),
                  ("method", request.method)).observe(default_timer() - started)
        else:
            tally(metrics.requests_unknown_latency).inc(1)
        return response
