"""Models of the easel sub-app (on the shared catalogue)."""
