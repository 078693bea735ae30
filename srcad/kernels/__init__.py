"""Mixed mode: scalar functions with branches, broadcast over arrays (``srcad.elementwise``)."""
