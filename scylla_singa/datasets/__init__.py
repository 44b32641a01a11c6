"""Data sets prepared on the host as SINGA input files (needs scikit-learn: the `data` extra).

Host side only: the runtime images read the files these write, they never
import this package.

    digits     scikit-learn's handwritten digits, split 1,437/360, as KVFiles of RecordProto and CSV, in their own
               8x8 shape and drawn in MNIST's and CIFAR-10's shapes (for SINGA's own example confs)
    sentences  a small text corpus made from the digits' labels (for SINGA's rnnlm example)
"""
