"""Data sets in the file formats real Apache SINGA reads (host side).

    singa_formats.py  SINGA's KVFile store and RecordProto records; the digits
                      set in the shapes SINGA's MNIST and CIFAR-10 examples expect
"""
