"""Fakes of outside services that tests talk to over real connections (never mocks of our own code)."""

from tests.fakes.openai_server import (
    FakeOpenAIServer,
    Fault,
    ImageReply,
    RecordedRequest,
    Reply,
    Script,
    deterministic_png,
    faults_then,
    hash_embedding,
)

__all__ = [
    "FakeOpenAIServer",
    "Fault",
    "ImageReply",
    "RecordedRequest",
    "Reply",
    "Script",
    "deterministic_png",
    "faults_then",
    "hash_embedding",
]
