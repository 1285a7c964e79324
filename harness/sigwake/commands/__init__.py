"""What a user runs: the main job (orchestrator), qa, validate-patch, bisect, the mutant score, and the
thin command line over them."""
