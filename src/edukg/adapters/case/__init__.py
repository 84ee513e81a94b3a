"""The CASE provider: the graph served as CASE 1.1 (`/ims/case/v1p1`) and 1.0 (`/v1p0`)."""
