"""What the convc-match-conv pass (passes/match/match_conv.py) reads a dispatch with: IR helpers, the
dispatch's operands, conv and contraction forms, and the epilogue chain."""
