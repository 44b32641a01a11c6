"""Names a job.conf may carry from before SINGA 0.3, and what to write instead.

SINGA 0.3 parses most v0.1 and v0.2 confs unchanged (their names live on);
the few names below are the ones it refuses. The parser turns "no field
named X" into a sentence naming the version X came from and SINGA 0.3's
replacement, so a user with an old conf knows what to change. The table was
drawn up by comparing the job.proto of SINGA's v0.1.0, v0.2.0 and v0.3.0
tags, and by running every example conf of those tags through SINGA 0.3's
own parser. A few entries are names earlier releases of scylla-singa
accepted although no SINGA version had them; they say so.
"""

from __future__ import annotations

# (message type, field name) -> why SINGA 0.3 refuses it and what to write instead.
FIELDS: dict[tuple[str, str], str] = {
    ("JobProto", "model"):
        'field "model" is SINGA\'s job format from before v0.1 (ModelProto); SINGA 0.1 and later, '
        "0.3 included, take its fields at the top level of the conf: neuralnet, updater, train_steps, "
        "test_steps, test_freq, disp_freq, train_one_batch { alg: ... }",
    ("ConvolutionProto", "bias_term"):
        'field "bias_term" of convolution_conf was SINGA v0.1; SINGA 0.3 has no such field: a '
        "convolution layer has a bias exactly when it declares a second param",
    ("LayerProto", "euclideanloss_conf"):
        'field "euclideanloss_conf" was SINGA v0.1; SINGA 0.3 has no such field: kEuclideanLoss takes '
        "no configuration, remove the block",
    ("LayerProto", "prefetch_conf"):
        'field "prefetch_conf" was SINGA v0.1 and v0.2; SINGA 0.3 has no prefetch layer: give the input '
        "layer itself (kRecordInput or kCSVInput) a store_conf with  prefetching: true",
    ("LayerProto", "rgbimage_preprocess_conf"):
        'no SINGA version has a field "rgbimage_preprocess_conf" (earlier scylla-singa releases accepted it); '
        "SINGA 0.3 configures kImagePreprocess with rgbimage_conf { scale, cropsize, mirror }",
    ("LayerProto", "unroll_src_conn"):
        'no SINGA version has a field "unroll_src_conn" (earlier scylla-singa releases accepted it); '
        "SINGA 0.3 connects unrolled layers with unroll_conn_type and shift",
}

# (enum type, value name) -> the same, for enum values.
ENUM_VALUES: dict[tuple[str, str], str] = {
    ("LayerType", "kPrefetch"):
        "layer type kPrefetch was SINGA v0.1 and v0.2; SINGA 0.3 has no prefetch layer: use the input layer "
        "(kRecordInput or kCSVInput) directly, with  prefetching: true  in its store_conf",
    ("LayerType", "kCharRNNInput"):
        "no SINGA version has a layer type kCharRNNInput (earlier scylla-singa releases accepted it); "
        "SINGA 0.3 calls it kCharRNN",
    ("UnrollConnType", "kUnrollOneToLast"):
        "no SINGA version has kUnrollOneToLast (earlier scylla-singa releases accepted it); SINGA 0.3 calls "
        "it kUnrollFirstToLast",
}


def field_history(message: str, field: str) -> str | None:
    """The sentence for a field SINGA 0.3 lacks but an older conf may use, else None."""
    return FIELDS.get((message, field))


def enum_value_history(enum: str, value: str) -> str | None:
    """The sentence for an enum value SINGA 0.3 lacks but an older conf may use, else None."""
    return ENUM_VALUES.get((enum, value))
