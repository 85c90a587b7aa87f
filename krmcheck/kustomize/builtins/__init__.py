"""kustomize's builtin transformers, one module each (small functions over trees)."""
