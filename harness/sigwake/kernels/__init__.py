"""Kernels to test: Debian's packages (apt, private states per suite and architecture) and trees built
from source (config fragments, patches, Debian's linux-source as a git tree, the arm64 cross build)."""
