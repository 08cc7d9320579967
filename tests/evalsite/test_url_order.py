"""The annotator's paths are matched against the annotation patterns first (evalsite/urls.py), and moving them
first changed no answer: no other pattern takes a path under annotate/."""

from __future__ import annotations

import pytest
from django.urls import URLResolver, get_resolver
from django.urls.exceptions import Resolver404

import annotation.urls
import evalsite.urls

# a token of the site's shape (token_urlsafe(24)); fixed, so that pytest-xdist's workers collect the same ids
TOKEN = "Sk1h4H0Zir0hX78nONSVjwmKhlYGCyCd"
ANNOTATOR_PATHS = [
    "/annotate/", "/annotate/c/1/", f"/annotate/media/{TOKEN}/a", "/annotate/api/campaigns/1/next",
    "/annotate/api/campaigns/1/progress", f"/annotate/api/assignments/{TOKEN}/submit",
    f"/annotate/api/assignments/{TOKEN}/skip", "/annotate/api/campaigns/1/previous",
    f"/annotate/api/assignments/{TOKEN}/revise", "/annotate/campaigns/", "/annotate/campaigns/1/",
    "/annotate/p/entry/", "/annotate/no-such-page", "/annotate/api/campaigns/x/next",
]


def test_the_annotation_patterns_are_tried_first():
    first = get_resolver().url_patterns[0]
    assert isinstance(first, URLResolver) and first.urlconf_module is annotation.urls


@pytest.mark.parametrize("path", ANNOTATOR_PATHS)
def test_no_other_pattern_takes_a_path_under_annotate(path):
    others = [p for p in evalsite.urls.urlpatterns
              if not (isinstance(p, URLResolver) and p.urlconf_module is annotation.urls)]
    assert len(others) == len(evalsite.urls.urlpatterns) - 1
    resolver = URLResolver(get_resolver().pattern, others)
    with pytest.raises(Resolver404):
        resolver.resolve(path)
