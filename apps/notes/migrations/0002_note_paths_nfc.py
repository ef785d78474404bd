"""Note paths and link targets in Unicode NFC, as the services now take them.

A note whose NFC path another note of the same scope already has is left as it is and
reported (its owner chooses which to keep); a link repeated once normalised is one link.
"""

import sys
import unicodedata

from django.db import migrations


def _nfc(text: str) -> str:
    """NFC after the width mapping (Ａ → A), as apps/core/text.py's name_normalise then."""
    plain = "".join(
        unicodedata.normalize("NFKC", char)
        if unicodedata.decomposition(char).startswith(("<wide>", "<narrow>"))
        else char
        for char in text
    )
    return unicodedata.normalize("NFC", plain)


def forward(apps, schema_editor):
    Note = apps.get_model("notes", "Note")
    NoteLink = apps.get_model("notes", "NoteLink")
    for note in Note.objects.order_by("pk").iterator():
        nfc = _nfc(note.path)
        if nfc == note.path:
            continue
        same_scope = Note.objects.filter(
            project_id=note.project_id, agent_id=note.agent_id, path=nfc
        )
        twin = same_scope.first()
        if twin is not None:
            sys.stdout.write(
                f"\n  Not normalised: note {note.pk} at {note.path!r} is at {nfc!r} in NFC, "
                f"the path of note {twin.pk} of the same scope; rename or delete one of them, "
                "then migrate again.\n"
            )
            continue
        Note.objects.filter(pk=note.pk).update(path=nfc)
    for link in NoteLink.objects.order_by("pk").iterator():
        nfc = _nfc(link.target_path)
        if nfc == link.target_path:
            continue
        if NoteLink.objects.filter(source_id=link.source_id, target_path=nfc).exists():
            NoteLink.objects.filter(pk=link.pk).delete()  # the same link, written twice
        else:
            NoteLink.objects.filter(pk=link.pk).update(target_path=nfc)


class Migration(migrations.Migration):
    dependencies = [("notes", "0001_initial")]

    operations = [migrations.RunPython(forward, migrations.RunPython.noop)]
