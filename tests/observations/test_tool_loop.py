"""The 300-message tool loop crosses both thresholds and settles with memory that covers it all."""

from apps.jobs.services import job_run_pending
from apps.observations.models import Method, Observation, ObservationFailure
from apps.observations.selectors import observations_active, observed_up_to
from apps.threads.selectors import thread_get
from tests.observations.conftest import configure, faithful_model, fill
from tests.observations.toolloop import error_lines, user_requests


def _assert_covers_without_gap_or_overlap(active, up_to):
    assert [row.first_seq for row in active][0] == 1
    for before, after in zip(active, active[1:], strict=False):
        assert after.first_seq == before.last_seq + 1, (before, after)
    assert active[-1].last_seq == up_to


def test_the_tool_loop_settles_with_observations_covering_all_but_the_recent_window(
    alice, llm, loop
):
    llm.script(*[faithful_model] * 500)
    configure(
        alice,
        observer_message_tokens=2000,
        reflector_observation_tokens=1500,
        recent_window=20,
        observer_model="gemini-test",
    )
    thread = alice.new_thread()["id"]

    fill(alice, thread, loop)

    model_thread = thread_get(agent=alice.agent, thread_id=thread)
    active = observations_active(thread=model_thread)
    up_to = observed_up_to(thread=model_thread)
    window_start = model_thread.last_seq - 20 + 1
    _assert_covers_without_gap_or_overlap(active, up_to)
    assert up_to >= window_start - 1
    assert up_to < window_start  # the recent window is left alone
    reflections = Observation.objects.filter(thread_id=thread, is_reflection=True)
    assert reflections.count() >= 2
    assert Observation.objects.filter(thread_id=thread, superseded_by__isnull=False).exists()
    assert {row.generation for row in active} >= {reflections.order_by("-generation")[0].generation}
    assert all(row.method == Method.LLM and row.model == "gemini-test" for row in active)
    # The model here answers the observer and the reflector only (extraction's prompts fail).
    stages = ["observer", "reflector"]
    assert ObservationFailure.objects.filter(thread_id=thread, stage__in=stages).count() == 0


def test_superseded_observations_point_at_a_reflection_covering_their_range(alice, llm, loop):
    llm.script(*[faithful_model] * 500)
    configure(alice, observer_message_tokens=2000, reflector_observation_tokens=1500)
    thread = alice.new_thread()["id"]

    fill(alice, thread, loop)

    superseded = Observation.objects.filter(thread_id=thread, superseded_by__isnull=False)
    assert superseded.exists()
    for row in superseded.select_related("superseded_by"):
        reflection = row.superseded_by
        assert reflection.is_reflection
        assert reflection.generation > row.generation
        assert reflection.first_seq <= row.first_seq and row.last_seq <= reflection.last_seq


def test_the_tool_loop_settles_offline_with_every_error_and_request_in_the_active_set(alice, loop):
    configure(alice, observer_message_tokens=2000, reflector_observation_tokens=1500)
    thread = alice.new_thread()["id"]

    fill(alice, thread, loop)

    model_thread = thread_get(agent=alice.agent, thread_id=thread)
    active = observations_active(thread=model_thread)
    _assert_covers_without_gap_or_overlap(active, observed_up_to(thread=model_thread))
    assert observed_up_to(thread=model_thread) == model_thread.last_seq - 20
    assert Observation.objects.filter(thread_id=thread, is_reflection=True).exists()
    text = "\n".join(row.content for row in active)
    observed = loop[: model_thread.last_seq - 20]
    assert all(line in text for line in error_lines(observed))
    assert all(request in text for request in user_requests(observed))


def test_running_the_job_again_creates_nothing_twice(alice, loop):
    configure(alice, observer_message_tokens=2000, reflector_observation_tokens=1500)
    thread = alice.new_thread()["id"]
    fill(alice, thread, loop, settle=False)
    job_run_pending()
    before = list(Observation.objects.order_by("id").values_list("id", "superseded_by"))

    from apps.observations.services import observations_update

    observations_update(thread=thread_get(agent=alice.agent, thread_id=thread))
    observations_update(thread=thread_get(agent=alice.agent, thread_id=thread))

    assert list(Observation.objects.order_by("id").values_list("id", "superseded_by")) == before
