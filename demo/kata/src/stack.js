// A last-in-first-out stack, built test-first by `ratchet demo`.
