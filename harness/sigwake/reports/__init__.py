"""Every report format, rendered from the stored results and the cases' facts alone: each render_*.py
with a FORMAT is one."""
