"""Models built from mhalib's pieces: the real encoder the course ships (all-MiniLM-L6-v2)
and the tools that read its heads. The numpy math stays at the top of ``mhalib``.
"""
