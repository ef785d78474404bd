"""Migration runstate 0003: a run already waiting at a checkpoint reads suspended."""

from tests.conftest import make_actor
from tests.migrating import migrate

BEFORE = [("runstate", "0002_artifact"), ("threads", "0002_message_is_error")]
AFTER = [("runstate", "0003_suspended_runs")]


def _run(models, agent, status="running"):
    Thread = models.get_model("threads", "Thread")
    Run = models.get_model("threads", "Run")
    thread = Thread.objects.create(agent_id=agent.id)
    return Run.objects.create(thread=thread, status=status)


def test_runs_with_an_unresumed_checkpoint_read_suspended(back_to_latest):
    alice = make_actor("acme", "alice")
    old = migrate(BEFORE)
    Checkpoint = old.get_model("runstate", "Checkpoint")
    waiting, resumed, plain = (_run(old, alice.agent) for _ in range(3))
    finished = _run(old, alice.agent, status="failed")
    Checkpoint.objects.create(run=waiting, status="suspended")
    Checkpoint.objects.create(run=resumed, status="resumed")
    Checkpoint.objects.create(run=finished, status="suspended")

    models = migrate(AFTER)
    Run = models.get_model("threads", "Run")

    statuses = dict(Run.objects.values_list("id", "status"))
    assert statuses == {
        waiting.id: "suspended",
        resumed.id: "running",
        plain.id: "running",
        finished.id: "failed",
    }
