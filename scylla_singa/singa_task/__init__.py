"""`singa-task`: runs one real Apache SINGA 0.3.0 process as the framework's task (stdlib + kazoo)."""
