"""C²-Eval: convergent and divergent creativity (c2-eval.txt §3–§4). Plain Python, never Django."""
