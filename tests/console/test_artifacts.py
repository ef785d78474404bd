"""A run's artifacts on the thread timeline: listed where the run ends, downloadable."""

from django.core.files.uploadedfile import SimpleUploadedFile
from django.urls import reverse

PNG = b"\x89PNG\r\n\x1a\n" + bytes(range(256))


def test_the_run_end_lists_its_artifacts_and_they_download_unchanged(as_role, alice):
    operator = as_role("operator")
    thread = alice.new_thread()
    run = alice.post(f"/api/v1/threads/{thread['id']}/runs", {"name": "build"}).json()
    other = alice.post(f"/api/v1/threads/{thread['id']}/runs", {"name": "other"}).json()
    alice.append(thread["id"], {"role": "user", "content": "draw it", "run_id": run["id"]})
    alice.append(thread["id"], {"role": "user", "content": "and this", "run_id": other["id"]})
    spec = alice.post(
        f"/api/v1/runs/{run['id']}/artifacts", {"name": "spec.md", "kind": "spec", "content": "#"}
    ).json()
    alice.post(f"/api/v1/runs/{other['id']}/artifacts", {"name": "other.txt", "content": "o"})
    chart = alice.client.post(
        f"/api/v1/runs/{run['id']}/artifacts",
        {"file": SimpleUploadedFile("chart.png", PNG, content_type="image/png")},
        format="multipart",
    ).json()

    page = operator.get(reverse("console:thread", args=[thread["id"]])).content.decode()
    download = operator.get(reverse("console:artifact", args=[chart["id"]]))

    first_end = page.index('<li class="run-end')
    listed = page[first_end : page.index("</ul>", first_end)]
    assert "spec.md" in listed and "chart.png" in listed and "other.txt" not in listed
    assert listed.index("spec.md") < listed.index("chart.png")
    assert reverse("console:artifact", args=[spec["id"]]) in listed
    assert "other.txt" in page[page.index('<li class="run-end', first_end + 1) :]
    assert download.status_code == 200 and download.content == PNG
    assert download["Content-Type"] == "image/png"
    assert download["Content-Disposition"] == 'attachment; filename="chart.png"'


def test_a_deleted_artifact_is_a_404_page(as_role, alice):
    operator = as_role("operator")
    thread = alice.new_thread()
    run = alice.post(f"/api/v1/threads/{thread['id']}/runs", {}).json()
    made = alice.post(f"/api/v1/runs/{run['id']}/artifacts", {"name": "a.md", "content": "x"})
    alice.delete(f"/api/v1/artifacts/{made.json()['id']}")

    assert operator.get(reverse("console:artifact", args=[made.json()["id"]])).status_code == 404
