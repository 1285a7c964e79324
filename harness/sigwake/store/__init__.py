"""The results folder: every record written atomically and checked against its schema, read back and
brought up from older schemas."""
