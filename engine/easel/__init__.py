"""EASEL: closed-loop stroke painting (easel.txt §3–§5). Plain Python, never Django."""
