"""The Scylla framework: a pymesos scheduler that runs SINGA jobs as gangs of Docker containers."""
