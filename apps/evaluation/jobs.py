"""Job handlers of the retrieval evaluation."""

from apps.evaluation.services import JOB_KIND, evaluation_execute
from apps.jobs.registry import job_handler


@job_handler(JOB_KIND)
def run_evaluation(job):
    evaluation_execute(run_id=job.payload["run_id"])
