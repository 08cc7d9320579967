"""Django's message storage, made on a request's first use of it (issue 30).

``django.contrib.messages.middleware.MessageMiddleware`` builds the storage for every request: the storage
class imported by name, a cookie store with its signer (the cookie key derived from ``SECRET_KEY``) and a
session store. The annotators' endpoints, the health checks and most pages never add or show a message,
and for them the storage does nothing: nothing read (its messages load on first use), nothing written at
the response (``BaseStorage.update`` stores only when messages were read or added). Here the request holds
a lazy object that builds exactly that storage the first time anything touches it (adding a message,
``get_messages`` iterated by a template, a test reading it), so every use sees the storage Django would
have built; a response whose request never touched it is left as Django's ``update`` would leave it."""

from __future__ import annotations

from django.contrib.messages.middleware import MessageMiddleware
from django.contrib.messages.storage import default_storage
from django.utils.functional import SimpleLazyObject, empty


class MessagesOnUse(MessageMiddleware):
    def process_request(self, request):
        request._messages = SimpleLazyObject(lambda: default_storage(request))

    def process_response(self, request, response):
        messages = getattr(request, "_messages", None)
        if type(messages) is SimpleLazyObject and messages._wrapped is empty:
            return response  # never used: a storage made now would have nothing to store
        return super().process_response(request, response)
