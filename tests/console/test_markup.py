"""Every console page's markup: each element id once (a label's for= and a skip link reach one
element; two inputs named id_agent left the second unlabelled to a screen reader)."""

import re
from collections import Counter

from tests.console.urlconf import console_url, pattern_names


def test_no_page_repeats_an_element_id(as_role, console_objects):
    client = as_role("admin")
    checked, repeated = [], {}
    for name in pattern_names():
        response = client.get(console_url(name, console_objects))
        if response.status_code != 200 or not response["Content-Type"].startswith("text/html"):
            continue
        ids = Counter(re.findall(r'\sid="([^"]+)"', response.content.decode()))
        if twice := sorted(key for key, count in ids.items() if count > 1):
            repeated[name] = twice
        checked.append(name)

    assert repeated == {}
    assert {"keys", "webhooks", "threads", "thread", "config", "moderation"} <= set(checked)
