// Drag and drop for upload zones: dropped files go into the zone's file input and are sent at
// once, as people expect of a drop zone (requestSubmit still checks the size limit first).
// Delegated, so a zone on a page that htmx loads (HX-Location after creating a knowledge base)
// works as well.
const dropzoneOf = (event) =>
  event.target instanceof Element ? event.target.closest("[data-dropzone]") : null;
["dragenter", "dragover"].forEach((name) =>
  document.addEventListener(name, (event) => {
    const zone = dropzoneOf(event);
    if (zone) { event.preventDefault(); zone.classList.add("over"); }
  }));
["dragleave", "drop"].forEach((name) =>
  document.addEventListener(name, (event) => dropzoneOf(event)?.classList.remove("over")));
document.addEventListener("drop", (event) => {
  const input = dropzoneOf(event)?.querySelector("input[type=file]");
  if (!input) return;
  event.preventDefault();
  input.files = event.dataTransfer.files;
  input.dispatchEvent(new Event("change", { bubbles: true }));
  if (input.files.length) input.form?.requestSubmit();
});

// Knowledge uploads: a file over data-max-bytes is refused before it is sent, and a form marked
// data-reset-on-success is cleared once htmx has had a 2xx answer for it.
document.addEventListener("change", (event) => {
  const input = event.target;
  if (!(input instanceof HTMLInputElement) || !input.dataset.maxBytes) return;
  const big = Array.from(input.files || []).filter((f) => f.size > Number(input.dataset.maxBytes));
  const names = big.map((f) => f.name).join(", ");
  input.setCustomValidity(big.length ? `${names}: over the limit of ${input.dataset.maxLabel}.` : "");
  if (big.length) input.reportValidity();
});
document.addEventListener("htmx:afterRequest", (event) => {
  const form = event.detail.elt;
  if (event.detail.successful && form instanceof HTMLFormElement && form.hasAttribute("data-reset-on-success")) {
    form.reset();
  }
});

// Moderation: a [data-check-all] box ticks or clears every checkbox of its form, rows included
// (they join the form with form="…"). Delegated, so rows swapped in by htmx are covered too.
document.addEventListener("change", (event) => {
  const all = event.target;
  if (!(all instanceof HTMLInputElement) || !all.hasAttribute("data-check-all") || !all.form) return;
  for (const box of all.form.elements) {
    if (box !== all && box.type === "checkbox") box.checked = all.checked;
  }
});
