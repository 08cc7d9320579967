"""Models of the c2 sub-app (on the shared catalogue)."""
