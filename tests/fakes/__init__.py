"""Fakes of outside services that tests talk to over real connections (never mocks of our own code)."""

from tests.fakes.openai_server import (
    FakeOpenAIServer,
    Fault,
    RecordedRequest,
    Reply,
    Script,
    faults_then,
    hash_embedding,
)

__all__ = ["FakeOpenAIServer", "Fault", "RecordedRequest", "Reply", "Script", "faults_then", "hash_embedding"]
