"""One-step parity tests: each trainer against a plain-PyTorch re-statement of the authors' step (issue 36 item 4)."""
