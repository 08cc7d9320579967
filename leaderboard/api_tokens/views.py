"""The "API tokens" page: every signed-in user manages their own tokens (any role: an annotator's token
reaches only the annotator endpoints, as the roles say)."""

from __future__ import annotations

from django import forms
from django.contrib import messages
from django.shortcuts import get_object_or_404, redirect, render
from django.views.decorators.http import require_http_methods, require_POST

from leaderboard.api_tokens import selectors, services
from leaderboard.api_tokens.models import ApiToken


class TokenForm(forms.Form):
    name = forms.CharField(max_length=100)


@require_http_methods(["GET", "POST"])
def token_list(request):
    secret = None
    form = TokenForm(request.POST or None)
    if request.method == "POST" and form.is_valid():
        # Rendered, not redirected: the secret exists only in this response.
        _, secret = services.api_token_create(user=request.user, name=form.cleaned_data["name"])
        form = TokenForm()
    return render(request, "api_tokens/tokens.html",
                  {"tokens": selectors.api_tokens_of(user=request.user), "form": form, "secret": secret})


@require_POST
def token_revoke(request, pk: int):
    token = get_object_or_404(ApiToken, pk=pk, user=request.user)
    services.api_token_revoke(token=token)
    messages.success(request, f"Token {token} revoked.")
    return redirect("api_tokens:list")
