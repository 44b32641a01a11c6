"""All image building: the build driver and each image's build-context preparation (no registry needed).

    builder          images/*/build.yaml -> docker build, cached by an input hash
    tiny_context     images/tiny: the host's static busybox
    singa_context    images/singa: protobuf's pure-Python wheel and the digits data set
    maven_jars       images/hdfs, images/zookeeper: Apache jars from Maven Central through the host's mvn
    scylla_context   images/scylla: dependency wheels and a copy of the sources
    node_sync        copying images from the host engine into a node engine (docker save | docker load)
"""
