"""The SINGA job model: job.conf parsing, SINGA's process layout, demand and traffic.

The runtime inside the container imports parse and processes only; the plan
(with its networkx graph) is for the framework side.
"""

from .errors import JobConfError
from .parse import ParsedJob, load_job, parse_job_text
from .processes import ClusterShape, ProcessLayoutError, ProcessSpec, process_table

__all__ = ["JobConfError", "ParsedJob", "load_job", "parse_job_text", "ClusterShape",
           "ProcessLayoutError", "ProcessSpec", "process_table"]
