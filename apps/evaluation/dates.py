"""The date placeholders a labelled set's temporal questions use: {weekday} {day} {ordinal}
{month} {year}. Free of Django, so bench/multisession_data.py renders a question the same way
apps.evaluation.retrieval.question_text re-renders it after moving a conversation's times."""

from datetime import datetime


def date_fields(moment: datetime) -> dict[str, str]:
    """Return the placeholders' values for this moment (English names)."""
    day = moment.day
    suffix = "th" if 10 <= day % 100 <= 20 else {1: "st", 2: "nd", 3: "rd"}.get(day % 10, "th")
    return {
        "weekday": moment.strftime("%A"),
        "day": str(day),
        "ordinal": f"{day}{suffix}",
        "month": moment.strftime("%B"),
        "year": str(moment.year),
    }
