"""Without a model, memory still condenses: conversation keeps what is worth remembering, a
reflection is smaller than its sources and keeps every identifier, error and request."""

from datetime import UTC, datetime, timedelta
from types import SimpleNamespace

from apps.observations import extractive
from apps.observations.condense import condense, condense_within, joined_refs
from apps.providers.tokens import count_tokens

START = datetime(2024, 5, 3, 9, 0, tzinfo=UTC)


def said(seq, role, content, minutes=0, name=""):
    return SimpleNamespace(
        seq=seq,
        kind="message",
        role=role,
        name=name,
        content=content,
        payload=None,
        metadata={},
        is_error=False,
        created_at=START + timedelta(minutes=minutes),
    )


def test_small_talk_goes_requests_stay_verbatim_and_facts_stay_whole():
    digest = extractive.messages_digest(
        [
            said(
                1,
                "user",
                "Hi there! Thanks so much. Can you book a table at Luigi's for 7pm on 2024-05-10?",
                name="Dana",
            ),
            said(
                2,
                "assistant",
                "Sure, happy to help! I booked table 12 at Luigi's for 19:00, "
                "and the confirmation is LX-4471; they asked us to arrive ten minutes early "
                "because the kitchen closes at 22:30.",
            ),
            said(3, "user", "Great, thanks!"),
            said(
                4,
                "user",
                "We run build 4.2 on 10.0.0.5, see https://api.example.com/v2.1/users "
                "and ask Mr. Smith.",
            ),
        ]
    )

    assert "Can you book a table at Luigi's for 7pm on 2024-05-10?" in digest
    assert "Hi there" not in digest and "Great, thanks" not in digest
    assert "[#3]" not in digest  # nothing but small talk: no line
    for fact in ("LX-4471", "12", "19:00", "22:30", "4.2", "10.0.0.5", "v2.1/users", "Mr. Smith"):
        assert fact in digest, fact
    assert "Dana: Can you" in digest  # who said it
    assert digest.startswith("[#1] (2024-05-03 09:00) ")  # and when


def test_a_session_after_a_pause_is_dated_again():
    digest = extractive.messages_digest(
        [
            said(1, "user", "Please order 30 boxes of A4 paper."),
            said(2, "user", "Please order 12 toner cartridges.", minutes=5),
            said(3, "user", "Please cancel order PO-77.", minutes=24 * 60),
        ]
    )

    lines = digest.splitlines()
    assert lines[0].startswith("[#1] (2024-05-03 09:00) ")
    assert lines[1].startswith("[#2] User: ")
    assert lines[2].startswith("[#3] (2024-05-04 09:00) ")


def test_a_reflection_is_smaller_than_its_sources_and_keeps_what_matters():
    sources = [
        "\n".join(
            [
                f"[#{base + 1}] User: Please reconcile B-{base} against ticket #{base + 4000}.",
                f"[#{base + 2}–{base + 3}] fetch_records(url=https://api.example.com/v2/items"
                f"?page={base}, limit=12) → ok; item-{base}-0, item-{base}-1",
                f"[#{base + 4}–{base + 5}] fetch_records(url=https://api.example.com/v2/items"
                f"?page={base + 1}, limit=12) → ok; item-{base + 1}-0",
                f"[#{base + 6}–{base + 7}] http_get(url=https://x.example.com/{base}) → error: "
                "HTTP 503 Service Unavailable ×2",
                f"[#{base + 8}] Assistant: Let me look into that for you …",
                f"[#{base + 9}] User: Please reconcile B-{base} against ticket #{base + 4000}.",
            ]
        )
        for base in (0, 10, 20)
    ]
    text = "\n".join(sources)

    reflection = condense(sources)

    assert count_tokens(reflection) < count_tokens(text)
    assert extractive.identifiers_in(text) <= extractive.identifiers_in(reflection)
    assert not extractive.essentials_dropped(text, reflection)
    assert reflection.count("fetch_records") == 1  # its successful steps are one entry
    assert "fetch_records ×6 → ok (limit=12) [url]: " in reflection
    assert "Let me look into that" not in reflection  # a reply that names nothing goes
    assert reflection.count("Please reconcile B-0 against ticket #4000.") == 1
    assert "[#1, 9] User: Please reconcile B-0" in reflection  # repeats merge


def test_a_reply_keeps_its_first_sentence_and_the_facts_of_the_rest():
    digest = extractive.messages_digest(
        [
            said(1, "user", "Is guest access included in the Team plan?", name="Dana"),
            said(
                2,
                "assistant",
                "It's included in Team as well. Only the audit log and SSO need Business, "
                "which costs 12 EUR a seat.",
                minutes=1,
            ),
        ]
    )

    reply = digest.splitlines()[1].split(": ", 1)[1]
    assert reply == "It's included in Team as well. …[12]"


def test_a_reply_that_names_nothing_goes_with_its_reference():
    digest = "[#1] Dana: How do I stop procrastinating?\n[#2] Assistant: Make them smaller …"

    assert condense([digest]) == "[#1] Dana: How do I stop procrastinating?"


def test_fitting_a_budget_drops_replies_before_requests_and_errors():
    digest = "\n".join(
        [f"[#{n}] Assistant: step {n} is done, moving on to Zeta" for n in range(1, 30)]
        + ["[#30] User: Please deploy release 7.1 to eu-west-1.", "[#31] deploy() → error: 502"]
    )

    fitted, dropped = condense_within([digest], 40)

    assert count_tokens(fitted) <= 40 and dropped > 0
    assert "Please deploy release 7.1 to eu-west-1." in fitted and "error: 502" in fitted


def test_references_join_into_runs():
    assert joined_refs(["#4–5", "#1", "#2–3", "#9", "#11–12"]) == "#1–5, 9, 11–12"


def test_a_line_repeated_many_times_counts_the_references_it_leaves_out():
    refs = ["#1–2", "#40–41", "#90", "#120", "#200", "#290–291"]

    assert joined_refs(refs) == "#1–2, 40–41, 3 more, 290–291"
    # Parsed back and joined with more, the left-out ones are counted again.
    assert joined_refs(["#1–2", "40–41", "3 more", "290–291", "#400"]) == "#1–2, 40–41, 4 more, 400"


def test_counts_of_left_out_references_add_up_when_lines_merge():
    many = [f"[#{n}] Dana: Can I export a project as PDF?" for n in (1, 9, 20, 31, 42)]
    more = [f"[#{n}] Dana: Can I export a project as PDF?" for n in (101, 109, 120, 131, 142)]
    first, second = condense(["\n".join(many)]), condense(["\n".join(more)])

    assert condense([first, second]) == "[#1, 9, 7 more, 142] Dana: Can I export a project as PDF?"
    # Merged without condensing (a reflection that falls back to its sources), both counts
    # stay part of the reference: none of its numbers is taken for a fact.
    merged = extractive.observations_merge([first, second])
    assert (
        merged == "[#1, 9, 2 more, 42, #101, 109, 2 more, 142] Dana: Can I export a project as PDF?"
    )
    assert extractive.identifiers_in(merged) == set()
    assert condense([merged]) == "[#1, 9, 7 more, 142] Dana: Can I export a project as PDF?"


def test_a_count_never_comes_first_and_no_reference_writes_none():
    assert joined_refs(["#1–11", "3 more"]) == "#1–11, 3 more"
    assert joined_refs(["#3 more", "1–11"]) == "#1–11, 3 more"
    assert joined_refs([]) == ""


def test_a_line_with_counted_references_condenses_again_without_losing_the_count():
    repeated = "\n".join(f"[#{n}] Dana: Can I export a project as PDF?" for n in (1, 9, 20, 31, 42))
    once = condense([repeated])

    again = condense([once, "[#60] Dana: Can I export a project as PDF?"])

    assert once == "[#1, 9, 2 more, 42] Dana: Can I export a project as PDF?"
    assert again == "[#1, 9, 3 more, 60] Dana: Can I export a project as PDF?"
    assert extractive.identifiers_in(again) == set()  # references are not facts


def test_small_talk_alone_is_said_to_hold_nothing_to_remember():
    digest = extractive.messages_digest(
        [said(1, "user", "Hi! Thanks so much."), said(2, "assistant", "You're welcome!")]
    )

    assert extractive.undated(digest) == "[#1–2] nothing to remember"


def test_a_question_asked_again_joins_its_first_asking_even_at_a_session_start():
    first = "[#1–2] (2024-05-03 09:00) Dana: Can I export a project as PDF? → Yes: use Export …"
    later = ["[#40] Dana: Can I export a project as PDF?", "[#41] Assistant: Yes: use Export …"]
    again = "[#90] Dana: Can I export a project as PDF?"

    reflection = condense([first, "\n".join(later), again])

    assert reflection.count("Can I export a project as PDF?") == 1
    assert reflection.startswith("[#1–2, 40–41, 90] (2024-05-03 09:00) Dana: Can I export")


def test_a_session_that_starts_with_a_repeat_hands_its_date_to_its_next_line():
    first = "[#1–2] (2024-05-03 09:00) Dana: Can I export a project as PDF? → Yes: use Export …"
    session = [
        "[#40] (2024-06-11 14:05) Dana: Can I export a project as PDF?",
        "[#42] Dana: Please rename the project Orion to Atlas.",
    ]

    reflection = condense([first, "\n".join(session)])

    assert reflection.count("Can I export a project as PDF?") == 1
    assert reflection.splitlines() == [
        "[#1–2, 40] (2024-05-03 09:00) Dana: Can I export a project as PDF? → Yes: use Export …",
        "[#42] (2024-06-11 14:05) Dana: Please rename the project Orion to Atlas.",
    ]


def test_a_session_of_repeats_only_keeps_its_dated_line():
    first = "[#1–2] (2024-05-03 09:00) Dana: Can I export a project as PDF? → Yes: use Export …"
    alone = "[#40] (2024-06-11 14:05) Dana: Can I export a project as PDF?"
    next_session = "[#60] (2024-06-20 08:00) Dana: Please rename the project Orion to Atlas."

    reflection = condense([first, alone, next_session])

    # Folding #40 would leave no line to say that a session began on June 11.
    assert "(2024-06-11 14:05) Dana: Can I export a project as PDF?" in reflection
    assert "(2024-06-20 08:00) Dana: Please rename" in reflection


def test_a_reply_that_tells_what_to_choose_joins_its_question_and_stays():
    lines = [
        "[#7] Dana: How do I get notifications only for my own tasks?",
        '[#8] Assistant: In your profile, Notifications, choose "Only my tasks" for e-mail.',
    ]

    reflection = condense(["\n".join(lines)])

    assert reflection == (
        "[#7–8] Dana: How do I get notifications only for my own tasks? → In your profile, "
        'Notifications, choose "Only my tasks" for e-mail.'
    )


def test_observations_without_a_model_are_condensed_as_a_reflection_is():
    from apps.observations.observer import extractive_observations

    chunk = [
        said(1, "user", "How do I archive a finished project?", name="Dana"),
        said(2, "assistant", "Open the project menu and pick Archive; it leaves the sidebar."),
        said(3, "user", "How do I archive a finished project?", name="Dana", minutes=3),
        said(4, "assistant", "Sure, let me explain again how that works for you.", minutes=3),
        said(5, "user", "Please move invoice INV-2291 to the Q3 folder.", name="Dana", minutes=4),
    ]
    digest = extractive.messages_digest(chunk)

    observed = extractive_observations(chunk)

    assert count_tokens(observed) < count_tokens(digest)
    assert observed.count("How do I archive a finished project?") == 1  # asked twice, one line
    assert "→ Open the project menu and pick Archive" in observed  # the reply on its question
    assert "let me explain again" not in observed  # a reply that names nothing goes
    assert "Please move invoice INV-2291 to the Q3 folder." in observed
    assert extractive.identifiers_in(digest) <= extractive.identifiers_in(observed)


def test_observations_stay_the_digest_when_condensing_would_lose_a_fact(monkeypatch):
    from apps.observations import condense as condense_module
    from apps.observations.observer import extractive_observations

    chunk = [said(1, "user", "Please restart worker wk-7781 on host db-04.", name="Dana")]
    # A condensing that lost the identifiers must not be stored: the digest is, whole.
    monkeypatch.setattr(condense_module, "condense", lambda texts: "[#1] Dana: restart it")

    assert extractive_observations(chunk) == extractive.messages_digest(chunk)
