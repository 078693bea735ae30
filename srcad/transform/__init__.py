"""The source-to-source transformer: parse, fence, normalize, analyse, reverse, optimize, emit."""
