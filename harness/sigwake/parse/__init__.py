"""Reading what a kernel's console said: the framed reports, the KTAP documents, kernel reports (splats)
and the case they interrupted, repeated runs folded into one result."""
