"""The SINGA job model: job.conf parsing, SINGA's process layout, demand and traffic.

job.proto and common.proto are Apache SINGA 0.3.0's own definitions (the job
and its data records); history.py names what older SINGA versions called
things SINGA 0.3 no longer has.

The runtime inside the container imports parse and processes only; the plan
(with its networkx graph) is for the framework side.
"""

from .errors import JobConfError
from .parse import ExtensionUse, ParsedJob, load_job, parse_job_text
from .processes import ClusterShape, ProcessLayoutError, ProcessSpec, process_table

__all__ = ["JobConfError", "ExtensionUse", "ParsedJob", "load_job", "parse_job_text", "ClusterShape",
           "ProcessLayoutError", "ProcessSpec", "process_table"]
