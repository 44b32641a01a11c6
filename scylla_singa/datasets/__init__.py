"""Data sets prepared on the host as SINGA input files (needs scikit-learn: the `data` extra).

Host side only: the runtime image reads the files these write, it never
imports this package.

    digits   scikit-learn's handwritten digits, split 1,437/360, as CSV and record stores
"""
