"""Per-user API tokens: created and revoked by their owner (page ``/account/api-tokens/``) or in the
admin, stored as a SHA-256 digest, shown in full once."""
